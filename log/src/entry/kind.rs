//! The entry kinds (as the derived index stores them, and as a scan by type reads
//! a line's `type`), generated from the one entry
//! vocabulary (`for_each_record!` beside [`Record`], `for_each_decision!` beside
//! [`Decision`]): records first, then decisions, then `Unknown`, in the order of the
//! tables. An archived kind is a typed enum, checked when the index is opened; a
//! change of the tables changes the codes, so it goes with a new
//! [`crate::index::INDEX_VERSION`] (an index of another version is rebuilt).

use super::{Body, Record};
use xcsh_machine::{Decision, for_each_decision};

/// Whether a kind of a record class may record an input (an `undo` may).
macro_rules! kind_is_input {
    (input) => {
        true
    };
    (noted) => {
        true
    };
    (structure) => {
        false
    };
}

/// Takes the records and asks for the decisions.
macro_rules! kinds_of_records {
    (records: [$($records:tt)*]) => {
        for_each_decision!(kinds records: [$($records)*]);
    };
}

/// [`Kind`] and what it tells, from both tables.
macro_rules! kinds {
    (
        records: [$($r:ident $rn:literal $rc:ident,)*]
        decisions: [$($d:ident $dn:literal,)*]
    ) => {
        /// Entry kinds as the index codes them.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize,
        )]
        #[rkyv(derive(Debug, Clone, Copy, PartialEq, Eq))]
        #[repr(u8)]
        pub enum Kind {
            $($r,)*
            $($d,)*
            Unknown,
        }

        impl Kind {
            /// Every kind, in the order of the tables.
            pub const ALL: [Kind; [$(Kind::$r,)* $(Kind::$d,)* Kind::Unknown].len()] =
                [$(Kind::$r,)* $(Kind::$d,)* Kind::Unknown];

            pub fn of(body: &Body) -> Kind {
                match body {
                    $(Body::Record(Record::$r { .. }) => Kind::$r,)*
                    $(Body::Decision(Decision::$d { .. }) => Kind::$d,)*
                    Body::Unknown { .. } => Kind::Unknown,
                }
            }

            /// The kind of the entry type `name` (`Unknown` for a type this
            /// version does not know).
            pub fn named(name: &str) -> Kind {
                match name {
                    $($rn => Kind::$r,)*
                    $($dn => Kind::$d,)*
                    _ => Kind::Unknown,
                }
            }

            /// The kind of an archived kind.
            #[inline]
            pub fn from_archived(kind: &ArchivedKind) -> Kind {
                match kind {
                    $(ArchivedKind::$r => Kind::$r,)*
                    $(ArchivedKind::$d => Kind::$d,)*
                    ArchivedKind::Unknown => Kind::Unknown,
                }
            }

            /// The entry type name (for unknown entries see
            /// [`crate::index::ArchivedIndexData::type_name`]).
            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$r => $rn,)*
                    $(Kind::$d => $dn,)*
                    Kind::Unknown => "unknown",
                }
            }

            /// Whether the entry records a decision.
            pub fn is_decision(self) -> bool {
                match self {
                    $(Kind::$r => false,)*
                    $(Kind::$d => true,)*
                    Kind::Unknown => false,
                }
            }

            /// Whether the entry may record an input: as [`Body::is_input`], except
            /// that every `undo` counts (one with a `note` is an input, an older one
            /// is structure).
            pub fn is_input(self) -> bool {
                match self {
                    $(Kind::$r => kind_is_input!($rc),)*
                    $(Kind::$d => false,)*
                    Kind::Unknown => false,
                }
            }
        }
    };
}

for_each_record!(kinds_of_records);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind has a name, the names are the entry type names of the tables,
    /// and no kind but `Unknown` is named "unknown".
    #[test]
    fn every_kind_is_named_as_its_entry_type() {
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        let mut want: Vec<&str> = Record::TYPE_NAMES.to_vec();
        want.extend(Decision::TYPE_NAMES);
        want.push("unknown");
        assert_eq!(names, want);
        for k in Kind::ALL {
            let named = if k == Kind::Unknown {
                "no such type"
            } else {
                k.name()
            };
            assert_eq!(Kind::named(named), k);
            assert_eq!(
                k.is_decision(),
                Decision::TYPE_NAMES.contains(&k.name()),
                "{k:?}"
            );
        }
    }

    /// Every kind archives and reads back as itself.
    #[test]
    fn every_kind_round_trips_through_the_archive() {
        for k in Kind::ALL {
            let bytes = rkyv::to_bytes::<rkyv::rancor::Error>(&k).unwrap();
            let archived = rkyv::access::<ArchivedKind, rkyv::rancor::Error>(&bytes).unwrap();
            assert_eq!(Kind::from_archived(archived), k);
        }
    }
}
