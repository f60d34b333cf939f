//! Where two JSON values differ, field by field: what `--minimize` carries over from
//! a recorded decision, and what a report names when a decision kept its type.

use std::collections::BTreeSet;

use serde_json::Value;
use xcsh_machine::Decision;

/// Where `o` and `r` differ: (path, the value in `r`, `None` where `r` lacks it).
pub(crate) fn differences(
    o: &Value,
    r: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Option<Value>)>,
) {
    match (o, r) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                path.push(k.clone());
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => differences(x, y, path, out),
                    (_, y) => out.push((path.clone(), y.cloned())),
                }
                path.pop();
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                path.push(i.to_string());
                differences(x, y, path, out);
                path.pop();
            }
        }
        _ if o != r => out.push((path.clone(), Some(r.clone()))),
        _ => {}
    }
}

/// The fields (dotted paths under `data`) in which two decisions of one type differ;
/// empty when their types differ or they are equal.
pub fn changed_fields(recorded: &Decision, remade: &Decision) -> Vec<String> {
    if recorded.type_name() != remade.type_name() {
        return Vec::new();
    }
    let (Ok(a), Ok(b)) = (serde_json::to_value(recorded), serde_json::to_value(remade)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    differences(&a, &b, &mut Vec::new(), &mut out);
    out.into_iter()
        .map(|(path, _)| {
            path.iter()
                .skip_while(|k| *k == "data")
                .cloned()
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect()
}
