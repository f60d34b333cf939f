//! Ctrl-R: reverse incremental search over the history, as readline does it.

/// An open reverse search: the query typed so far and the entry it found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReverseSearch {
    pub(crate) query: String,
    /// The index (into the history's entries) of the match shown, if any.
    pub(crate) found: Option<usize>,
    /// Whether the last narrowing or Ctrl-R found nothing (the match shown is older).
    pub(crate) failed: bool,
    /// The text and cursor of the editor when the search started (Esc restores them).
    pub(crate) saved: (String, usize),
}

impl ReverseSearch {
    pub(crate) fn new(saved: (String, usize)) -> ReverseSearch {
        ReverseSearch {
            query: String::new(),
            found: None,
            failed: false,
            saved,
        }
    }

    /// The newest entry at or before `from` containing the query (and, with
    /// `skip`, not equal to `skip`).
    fn find(&self, entries: &[String], from: usize, skip: Option<&str>) -> Option<usize> {
        (0..=from.min(entries.len().checked_sub(1)?))
            .rev()
            .find(|&i| entries[i].contains(&self.query) && Some(entries[i].as_str()) != skip)
    }

    /// The query changed: keep the current match if it still matches, else look older.
    pub(crate) fn narrow(&mut self, entries: &[String]) {
        if self.query.is_empty() {
            self.found = None;
            self.failed = false;
            return;
        }
        let from = self.found.unwrap_or(entries.len().saturating_sub(1));
        match self.find(entries, from, None) {
            Some(i) => {
                self.found = Some(i);
                self.failed = false;
            }
            None => self.failed = true,
        }
    }

    /// Ctrl-R again: the next older match with a different text.
    pub(crate) fn older(&mut self, entries: &[String]) {
        let Some(current) = self.found else {
            self.narrow(entries);
            return;
        };
        if self.query.is_empty() || current == 0 {
            self.failed = !self.query.is_empty();
            return;
        }
        let skip = entries.get(current).map(String::as_str);
        match self.find(entries, current - 1, skip) {
            Some(i) => {
                self.found = Some(i);
                self.failed = false;
            }
            None => self.failed = true,
        }
    }

    /// The entry found and the byte offset of the query in it.
    pub(crate) fn matched<'a>(&self, entries: &'a [String]) -> Option<(&'a str, usize)> {
        let entry = entries.get(self.found?)?;
        Some((entry, entry.find(&self.query).unwrap_or(0)))
    }
}
