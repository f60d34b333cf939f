//! `Messages`, the list of messages a context holds and a model request carries,
//! shared rather than copied: cloning it (a request built from the context) copies a
//! pointer, and a push copies at most the list of pointers (when a request still
//! holds the old list), never a message.

use std::sync::Arc;

use serde::{Serialize, Serializer};

use super::types::Message;

/// An ordered list of messages, shared: a clone is O(1) and shares the messages;
/// changing a shared list copies the list of pointers first (copy on write), so a
/// clone never sees a later change. Equal when the messages are; serialized as the
/// list of messages (as `Vec<Message>` is).
#[derive(Clone, Default)]
pub struct Messages(Arc<Vec<Arc<Message>>>);

impl Messages {
    pub fn new() -> Messages {
        Messages::default()
    }

    /// Appends `message` (copying the pointers first when the list is shared).
    pub fn push(&mut self, message: Message) {
        self.push_shared(Arc::new(message));
    }

    /// Appends a message shared with another list.
    pub fn push_shared(&mut self, message: Arc<Message>) {
        Arc::make_mut(&mut self.0).push(message);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<&Message> {
        self.0.get(index).map(|m| &**m)
    }

    pub fn last(&self) -> Option<&Message> {
        self.0.last().map(|m| &**m)
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter(self.0.iter())
    }

    /// The messages as the shared pointers they are (to build another list from
    /// some of them without copying any).
    pub fn shared(&self) -> &[Arc<Message>] {
        &self.0
    }

    /// The first `n` messages (all of them when there are fewer) as a list of
    /// their own: the pointers are copied, not the messages.
    pub fn prefix(&self, n: usize) -> Messages {
        if n >= self.len() {
            return self.clone();
        }
        self.0[..n].iter().cloned().collect()
    }

    /// The message at `index` to change in place (copying the list's pointers,
    /// then the message, when they are shared). Panics when out of range.
    pub fn make_mut(&mut self, index: usize) -> &mut Message {
        Arc::make_mut(&mut Arc::make_mut(&mut self.0)[index])
    }

    /// The messages as owned values (each one copied).
    pub fn to_vec(&self) -> Vec<Message> {
        self.iter().cloned().collect()
    }
}

/// The messages of a [`Messages`], in order.
#[derive(Debug, Clone)]
pub struct Iter<'a>(std::slice::Iter<'a, Arc<Message>>);

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Message;

    fn next(&mut self) -> Option<&'a Message> {
        self.0.next().map(|m| &**m)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|m| &**m)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Messages {
    type Item = &'a Message;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl std::ops::Index<usize> for Messages {
    type Output = Message;

    fn index(&self, index: usize) -> &Message {
        &self.0[index]
    }
}

impl FromIterator<Message> for Messages {
    fn from_iter<I: IntoIterator<Item = Message>>(iter: I) -> Messages {
        iter.into_iter().map(Arc::new).collect()
    }
}

impl FromIterator<Arc<Message>> for Messages {
    fn from_iter<I: IntoIterator<Item = Arc<Message>>>(iter: I) -> Messages {
        Messages(Arc::new(iter.into_iter().collect()))
    }
}

impl Extend<Message> for Messages {
    fn extend<I: IntoIterator<Item = Message>>(&mut self, iter: I) {
        Arc::make_mut(&mut self.0).extend(iter.into_iter().map(Arc::new));
    }
}

impl From<Vec<Message>> for Messages {
    fn from(messages: Vec<Message>) -> Messages {
        messages.into_iter().collect()
    }
}

impl PartialEq for Messages {
    fn eq(&self, other: &Messages) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.iter().eq(other.iter())
    }
}

impl Eq for Messages {}

impl PartialEq<[Message]> for Messages {
    fn eq(&self, other: &[Message]) -> bool {
        self.iter().eq(other.iter())
    }
}

impl PartialEq<Vec<Message>> for Messages {
    fn eq(&self, other: &Vec<Message>) -> bool {
        *self == **other
    }
}

impl PartialEq<Messages> for Vec<Message> {
    fn eq(&self, other: &Messages) -> bool {
        *other == *self
    }
}

impl std::fmt::Debug for Messages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Messages {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::UserOrigin;

    fn user(text: &str) -> Message {
        Message::User {
            origin: UserOrigin::Prompt,
            text: text.into(),
        }
    }

    /// A clone shares the messages and never sees a later change; the list
    /// serializes, compares and prints as the `Vec<Message>` it holds.
    #[test]
    fn a_clone_shares_the_messages_and_keeps_its_own_list() {
        let mut a = Messages::from(vec![user("one"), user("two")]);
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.shared()[0], &b.shared()[0]));
        a.push(user("three"));
        assert_eq!(b.len(), 2);
        assert_eq!(a.len(), 3);
        assert!(Arc::ptr_eq(&a.shared()[1], &b.shared()[1]));
        assert_eq!(a.prefix(2), b);
        assert_eq!(a.prefix(9), a);
        *a.make_mut(0) = user("uno");
        assert_eq!(b[0], user("one"));
        assert_eq!(a.get(0), Some(&user("uno")));
        let owned = vec![user("uno"), user("two"), user("three")];
        assert_eq!(a, owned);
        assert_eq!(owned, a);
        assert_eq!(a.to_vec(), owned);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&owned).unwrap()
        );
        assert_eq!(format!("{a:?}"), format!("{owned:?}"));
        assert_eq!(a.iter().next_back(), a.last());
        assert_eq!(a.iter().len(), 3);
    }
}
