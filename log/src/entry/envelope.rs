//! The envelope of a line in the writer's own form, read without decoding its body:
//! what a scan by type needs (id, parent, time, type, hash) and the body's JSON text
//! for the caller to decode in part ([`Envelope::data`]) or whole
//! ([`Envelope::entry`]). A line in any other form has no envelope here; the full
//! decoder reads it (and says what is wrong with it).

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{DecodeError, Entry, EntryHash, FORMAT_VERSION, decode_body, parse_ts, split_hash};
use xcsh_machine::EntryId;

/// A line's envelope (see the module's doc).
#[derive(Debug, Clone)]
pub struct Envelope<'a> {
    line: &'a str,
    pub id: EntryId,
    pub parent: Option<EntryId>,
    pub ts: DateTime<Utc>,
    pub type_name: &'a str,
    /// The JSON text of the body (`data`), not checked.
    pub data: &'a str,
    pub hash: EntryHash,
    /// How many bytes of the line the hash covers.
    pub prefix: usize,
}

impl<'a> Envelope<'a> {
    /// The envelope of `line` (without its newline) when it is in the form the
    /// writer writes, `{"v":1,"id":N[,"parent":P],"ts":"…","type":"…","data":…,"hash":"…"}`
    /// (this version's `v`, no escapes in the time or the type); `None` for any
    /// other form.
    pub fn read(line: &'a str) -> Option<Envelope<'a>> {
        let (prefix, hash) = split_hash(line.as_bytes()).ok()?;
        let head = line.get(..prefix.len())?;
        let (v, rest) = number(head.strip_prefix("{\"v\":")?)?;
        if v != u64::from(FORMAT_VERSION) {
            return None;
        }
        let (id, rest) = number(rest.strip_prefix(",\"id\":")?)?;
        let (parent, rest) = match rest.strip_prefix(",\"parent\":") {
            Some(r) => {
                let (p, r) = number(r)?;
                (Some(EntryId(p)), r)
            }
            None => (None, rest),
        };
        let (ts, rest) = quoted(rest.strip_prefix(",\"ts\":\"")?)?;
        let (type_name, rest) = quoted(rest.strip_prefix(",\"type\":\"")?)?;
        let data = rest.strip_prefix(",\"data\":")?;
        Some(Envelope {
            line,
            id: EntryId(id),
            parent,
            ts: parse_ts(ts)?,
            type_name,
            data,
            hash,
            prefix: prefix.len(),
        })
    }

    /// The entry, decoded whole: the same as [`Entry::decode_line`] of the line.
    pub fn entry(&self) -> Result<Entry, DecodeError> {
        decode_body(self.line, self.hash)
    }

    /// The fields of the body that `T` names (the others skipped, not kept).
    pub fn data<T: Deserialize<'a>>(&self) -> Result<T, DecodeError> {
        Ok(serde_json::from_str(self.data)?)
    }

    /// The body's `step` when it is the body's first field, as the writer puts it
    /// (`{"step":N,…`): read without decoding the rest; else the `step` field decoded.
    pub fn step(&self) -> Result<u32, DecodeError> {
        #[derive(Deserialize)]
        struct Step {
            step: u32,
        }
        match self
            .data
            .strip_prefix("{\"step\":")
            .and_then(number)
            .filter(|(_, rest)| rest.starts_with([',', '}']))
            .and_then(|(n, _)| u32::try_from(n).ok())
        {
            Some(n) => Ok(n),
            None => Ok(self.data::<Step>()?.step),
        }
    }
}

/// A JSON unsigned integer at the start of `s` (no leading zeros, no overflow) and
/// what follows it.
fn number(s: &str) -> Option<(u64, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let (n, rest) = s.split_at(digits);
    if n.is_empty() || (n.len() > 1 && n.starts_with('0')) {
        return None;
    }
    Some((n.parse().ok()?, rest))
}

/// The text of a string without escapes that `s` continues (after its opening
/// quote) and what follows its closing quote.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let end = s.find(['"', '\\'])?;
    (s.as_bytes()[end] == b'"').then(|| (&s[..end], &s[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{Body, Record};

    fn line_of(entry: &Entry, parent_hash: Option<&EntryHash>) -> String {
        let (line, _) = Entry::encode(entry.id, entry.parent, parent_hash, entry.ts, &entry.body);
        String::from_utf8(line)
            .expect("utf-8")
            .trim_end()
            .to_string()
    }

    #[test]
    fn a_written_line_has_the_envelope_of_its_entry_and_decodes_whole_the_same() {
        let ts = parse_ts("2026-11-30T04:05:22.474Z").unwrap();
        let entry = Entry {
            v: 1,
            id: EntryId(7),
            parent: Some(EntryId(6)),
            ts,
            body: Body::Record(Record::Steer {
                text: "look at \"this\"".into(),
            }),
            hash: EntryHash([0; 32]),
        };
        let line = line_of(&entry, Some(&EntryHash([3; 32])));
        let env = Envelope::read(&line).expect("the writer's form");
        assert_eq!(
            (env.id, env.parent, env.ts, env.type_name),
            (EntryId(7), Some(EntryId(6)), ts, "steer")
        );
        assert_eq!(env.data, r#"{"text":"look at \"this\""}"#);
        let (whole, prefix) = Entry::decode_line(&line).unwrap();
        assert_eq!(env.entry().unwrap(), whole);
        assert_eq!((env.hash, env.prefix), (whole.hash, prefix.len()));
    }

    #[test]
    fn a_line_in_another_form_has_no_envelope() {
        let hash = format!(",\"hash\":\"{}\"}}", "0".repeat(64));
        for head in [
            // Keys in another order, another version, a leading zero, an escape in
            // the type, no data.
            r#"{"id":1,"v":1,"ts":"2026-11-30T04:05:22.474Z","type":"steer","data":{}"#,
            r#"{"v":2,"id":1,"ts":"2026-11-30T04:05:22.474Z","type":"steer","data":{}"#,
            r#"{"v":1,"id":01,"ts":"2026-11-30T04:05:22.474Z","type":"steer","data":{}"#,
            r#"{"v":1,"id":1,"ts":"2026-11-30T04:05:22.474Z","type":"st\u0065er","data":{}"#,
            r#"{"v":1,"id":1,"ts":"2026-11-30T04:05:22.474Z","type":"steer"}"#,
            r#"{"v":1,"id":1,"ts":"yesterday","type":"steer","data":{}"#,
        ] {
            assert!(Envelope::read(&format!("{head}{hash}")).is_none(), "{head}");
        }
    }

    #[test]
    fn the_step_is_read_from_the_front_of_the_body_or_decoded() {
        let hash = format!(",\"hash\":\"{}\"}}", "0".repeat(64));
        let head = r#"{"v":1,"id":1,"parent":0,"ts":"2026-11-30T04:05:22.474Z","type":"step_started","data":"#;
        for (data, step) in [
            (r#"{"step":12,"messages":3}"#, 12),
            (r#"{"messages":3,"step":4}"#, 4),
        ] {
            let line = format!("{head}{data}{hash}");
            assert_eq!(Envelope::read(&line).unwrap().step().unwrap(), step);
        }
    }
}
