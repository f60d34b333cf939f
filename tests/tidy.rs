//! Tidy: the architecture's invariants as tests (rust-analyzer's `tidy` is the model).
//! Each rule is a function from what it reads (source texts, `cargo metadata`) to the
//! violations it finds, so that a test of the test shows it fires on a broken input;
//! ARCHITECTURE.md's "Architecture Invariant" lines name the test that keeps each.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The layers, lowest first: a workspace crate may depend only on crates of a lower
/// rank (the same rank is a sibling: providers and tools never see each other).
const LAYERS: &[(&str, u32)] = &[
    ("xcsh-machine", 0),
    ("xcsh-log", 1),
    ("xcsh-ports", 2),
    ("xcsh-import", 2),
    ("xcsh-journal", 3),
    ("xcsh-providers", 4),
    ("xcsh-tools", 4),
    ("xcsh-mcp", 4),
    ("xcsh-runtime", 5),
    ("xcsh-replay", 6),
    ("xcsh-inspect", 6),
    ("xcsh-otel", 6),
    ("xcsh-tui", 7),
    ("xcsh-proptests", 8),
    ("xcsh", 8),
];

/// Dev-dependencies allowed to point up, each with its reason. A dev-dependency is
/// not part of the crate a dependent builds on; these only generate test data.
const DEV_DEPENDENCIES_UP: &[(&str, &str, &str)] = &[(
    "xcsh-log",
    "xcsh-journal",
    "the log's tests read large sessions that the fixture generator (`xcsh_journal::synth`) \
     writes through the production journal; only a path crosses",
)];

/// What the machine may depend on (directly): serialization and hashing, nothing that
/// does IO, keeps time or draws randomness. (`serde_json`: the context hash is defined
/// over a message's JSON, and arguments are parsed from it.)
const MACHINE_DEPENDENCIES: &[&str] = &["blake3", "serde", "serde_json"];

/// Packages that must not be anywhere in the machine's dependency tree (its
/// unconditional normal dependencies, followed down).
const NEVER_UNDER_THE_MACHINE: &[&str] = &[
    "tokio",
    "reqwest",
    "memmap2",
    "rustix",
    "rand",
    "getrandom",
    "chrono",
    "tempfile",
    "ignore",
    "mio",
    "socket2",
];

/// Text that means IO, a clock or randomness in the machine's sources.
const MACHINE_FORBIDDEN: &[&str] = &[
    "std::fs",
    "std::net",
    "std::process",
    "std::thread",
    "std::env",
    "std::io::stdin",
    "std::io::stdout",
    "SystemTime",
    "Instant",
    "File::",
    "tokio",
    "rand::",
    "getrandom",
    "println!",
    "eprintln!",
];

/// The longest a non-test module may be, in lines.
const MAX_LINES: usize = 800;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Every `.rs` file of the workspace but `target/` and the separately built `fuzz/`:
/// `(path relative to the root, text)`, in path order.
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if path.is_dir() {
                if name == "target" || name.starts_with('.') || name == "fuzz" {
                    continue;
                }
                walk(&path, root, out);
            } else if name.ends_with(".rs") {
                let rel = path.strip_prefix(root).unwrap_or(&path);
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                out.push((rel.to_string_lossy().replace('\\', "/"), text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), &root(), &mut out);
    out
}

/// Whether `path` is test code as a whole: a `tests.rs` or `*_tests.rs` module, a
/// test helper module (`testutil.rs`, `testkit.rs`), or a file under a `tests/`
/// directory.
fn is_test_file(path: &str) -> bool {
    path.ends_with("/tests.rs")
        || path.ends_with("_tests.rs")
        || path.ends_with("/testutil.rs")
        || path.ends_with("/testkit.rs")
        || path.starts_with("tests/")
        || path.contains("/tests/")
}

/// `text` without its inline test module (`#[cfg(test)] mod NAME { … }`, which by the
/// code base's convention comes last).
fn non_test(text: &str) -> &str {
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]") {
        let at = from + at;
        let rest = text[at + "#[cfg(test)]".len()..].trim_start();
        let rest = rest.strip_prefix("pub(crate) ").unwrap_or(rest);
        if rest.starts_with("mod ") && rest.lines().next().is_some_and(|l| l.ends_with('{')) {
            return &text[..at];
        }
        from = at + 1;
    }
    text
}

/// Files whose non-test part is longer than [`MAX_LINES`].
fn long_modules(files: &[(String, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(path, _)| !is_test_file(path) && !path.starts_with("proptests/"))
        .filter_map(|(path, text)| {
            let n = non_test(text).lines().count();
            (n > MAX_LINES).then(|| format!("{path}: {n} non-test lines (at most {MAX_LINES})"))
        })
        .collect()
}

/// Files that do not start with a `//!` line saying what they are for.
fn without_purpose_line(files: &[(String, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(_, text)| !text.starts_with("//!"))
        .map(|(path, _)| format!("{path}: does not start with a `//!` line"))
        .collect()
}

/// Forbidden text in the machine's non-test sources (comments are not code).
fn machine_effects(files: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in files {
        if !path.starts_with("machine/src/") || is_test_file(path) {
            continue;
        }
        for (n, line) in non_test(text).lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for word in MACHINE_FORBIDDEN {
                if code.contains(word) {
                    out.push(format!("{path}:{}: `{word}` in the machine", n + 1));
                }
            }
        }
    }
    out
}

/// The top-level module a source file of a crate belongs to (`None`: the crate root).
fn top_module(path_in_src: &str) -> Option<&str> {
    let first = path_in_src.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then_some(name)
}

/// Pairs of top-level modules of one crate that reach each other, from `crate::m`
/// paths (and `super::m` in a top-level module) in non-test code.
fn module_cycles(files: &[(String, String)]) -> Vec<String> {
    // crate src dir -> module -> modules it names
    let mut graphs: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (path, text) in files {
        let Some(at) = path.find("src/") else {
            continue;
        };
        if is_test_file(path) {
            continue;
        }
        let (krate, inner) = (&path[..at + 4], &path[at + 4..]);
        let Some(module) = top_module(inner) else {
            continue;
        };
        let top_level = !inner.contains('/');
        let uses = graphs
            .entry(krate.to_string())
            .or_default()
            .entry(module.to_string())
            .or_default();
        for line in non_test(text).lines() {
            let code = line.split("//").next().unwrap_or_default();
            let mut prefixes = vec!["crate::"];
            if top_level {
                prefixes.push("super::");
            }
            for prefix in prefixes {
                for (i, _) in code.match_indices(prefix) {
                    if i > 0 && code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                        continue;
                    }
                    let name: String = code[i + prefix.len()..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() && name != module {
                        uses.insert(name);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for (krate, graph) in &graphs {
        for (a, uses) in graph {
            for b in uses.iter().filter(|b| graph.contains_key(*b)) {
                if a < b && reaches(graph, b, a) && reaches(graph, a, b) {
                    out.push(format!(
                        "{krate}: modules `{a}` and `{b}` depend on each other"
                    ));
                }
            }
        }
    }
    out
}

/// Whether `from` reaches `target` through `graph`.
fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, target: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<&str> = graph
        .get(from)
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    while let Some(m) = stack.pop() {
        if m == target {
            return true;
        }
        if seen.insert(m.to_string())
            && let Some(next) = graph.get(m)
        {
            stack.extend(next.iter().map(String::as_str));
        }
    }
    false
}

/// One workspace package as `cargo metadata` lists it: its name and its dependencies
/// on workspace packages (normal and build, then dev).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Package {
    name: String,
    deps: Vec<String>,
    dev_deps: Vec<String>,
}

/// The host's target triple, from `rustc -vV`.
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("rustc -vV runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_owned()
}

/// The workspace's metadata for the host platform only: offline, so it needs just the
/// packages a build here has downloaded (the whole-platform resolve would want every
/// platform's crates, `android_system_properties` and the like, in the cache).
fn metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let host = host_triple();
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--filter-platform",
        ])
        .arg(&host)
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

fn workspace_packages(meta: &serde_json::Value) -> Vec<Package> {
    let members: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m.as_str())
        .collect();
    let mut out = Vec::new();
    for p in meta["packages"].as_array().into_iter().flatten() {
        if !members.contains(p["id"].as_str().unwrap_or_default()) {
            continue;
        }
        let (mut deps, mut dev_deps) = (Vec::new(), Vec::new());
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let name = d["name"].as_str().unwrap_or_default().to_string();
            if !name.starts_with("xcsh") {
                continue;
            }
            match d["kind"].as_str() {
                Some("dev") => dev_deps.push(name),
                _ => deps.push(name),
            }
        }
        out.push(Package {
            name: p["name"].as_str().unwrap_or_default().to_string(),
            deps,
            dev_deps,
        });
    }
    out
}

/// Dependencies that point up or sideways, and packages the layer table does not know.
fn upward_dependencies(packages: &[Package]) -> Vec<String> {
    let rank: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let mut out = Vec::new();
    for p in packages {
        let Some(&mine) = rank.get(p.name.as_str()) else {
            out.push(format!("{}: not in tidy's layer table", p.name));
            continue;
        };
        let edges = p.deps.iter().map(|d| (d, false));
        for (dep, dev) in edges.chain(p.dev_deps.iter().map(|d| (d, true))) {
            let allowed = dev
                && DEV_DEPENDENCIES_UP
                    .iter()
                    .any(|(from, to, _)| *from == p.name && to == dep);
            match rank.get(dep.as_str()) {
                Some(&theirs) if theirs < mine || allowed => {}
                Some(&theirs) => out.push(format!(
                    "{} (layer {mine}) {} on {dep} (layer {theirs}): dependencies point down",
                    p.name,
                    if dev { "dev-depends" } else { "depends" }
                )),
                None => out.push(format!("{}: {dep} is not in tidy's layer table", p.name)),
            }
        }
    }
    out
}

/// The machine's direct dependencies outside [`MACHINE_DEPENDENCIES`], and any package
/// of [`NEVER_UNDER_THE_MACHINE`] in its dependency tree (normal dependencies for
/// every platform; one for a named platform only is not followed).
fn machine_dependencies(meta: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    let packages: BTreeMap<&str, &serde_json::Value> = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| (p["id"].as_str().unwrap_or_default(), p))
        .collect();
    let Some(machine) = packages.values().find(|p| p["name"] == "xcsh-machine") else {
        return vec!["there is no xcsh-machine package".into()];
    };
    for d in machine["dependencies"].as_array().into_iter().flatten() {
        let name = d["name"].as_str().unwrap_or_default();
        if d["kind"].is_null() && !MACHINE_DEPENDENCIES.contains(&name) {
            out.push(format!("xcsh-machine depends on {name}"));
        }
    }
    let nodes: BTreeMap<&str, &serde_json::Value> = meta["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| (n["id"].as_str().unwrap_or_default(), n))
        .collect();
    let mut stack = vec![machine["id"].as_str().unwrap_or_default()];
    let mut seen = BTreeSet::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let name = packages
            .get(id)
            .and_then(|p| p["name"].as_str())
            .unwrap_or_default();
        if NEVER_UNDER_THE_MACHINE.contains(&name) {
            out.push(format!("{name} is in the machine's dependency tree"));
        }
        for dep in nodes
            .get(id)
            .and_then(|n| n["deps"].as_array())
            .into_iter()
            .flatten()
        {
            let normal = dep["dep_kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|k| k["kind"].is_null() && k["target"].is_null());
            if normal {
                stack.push(dep["pkg"].as_str().unwrap_or_default());
            }
        }
    }
    out
}

/// Every rule over the workspace's own manifests and sources, one row each, named
/// for what it proves: each row that finds violations is reported, with its rule
/// and them.
#[test]
fn the_workspace_keeps_every_rule() {
    let metadata = metadata();
    let sources = sources();
    let rows = [
        (
            "no dependency points up a layer",
            "dependencies point down the layers (ARCHITECTURE.md)",
            upward_dependencies(&workspace_packages(&metadata)),
        ),
        (
            "the machine depends on serialization and hashing only",
            "the machine is sans-IO",
            machine_dependencies(&metadata),
        ),
        (
            "the machine has no IO, clock or randomness",
            "the machine is sans-IO",
            machine_effects(&sources),
        ),
        (
            "no non-test module is longer than 800 lines",
            "modules stay small",
            long_modules(&sources),
        ),
        (
            "every source file says what it is for",
            "files start with `//!`",
            without_purpose_line(&sources),
        ),
        (
            "no two modules of a crate depend on each other",
            "modules do not form cycles",
            module_cycles(&sources),
        ),
    ];
    let broken: Vec<String> = rows
        .into_iter()
        .filter(|(_, _, violations)| !violations.is_empty())
        .map(|(row, rule, violations)| format!("{row} ({rule}):\n  {}", violations.join("\n  ")))
        .collect();
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

// ---- the tests of the tests: each rule fires on a broken input.

fn file(path: &str, text: &str) -> (String, String) {
    (path.to_string(), text.to_string())
}

#[test]
fn tidy_sees_a_dependency_that_points_up() {
    let packages = vec![
        Package {
            name: "xcsh-log".into(),
            deps: vec!["xcsh-machine".into(), "xcsh-runtime".into()],
            dev_deps: vec!["xcsh-journal".into()],
        },
        Package {
            name: "xcsh-tools".into(),
            deps: vec![],
            dev_deps: vec!["xcsh-providers".into()],
        },
        Package {
            name: "xcsh-new".into(),
            deps: vec![],
            dev_deps: vec![],
        },
    ];
    assert_eq!(
        upward_dependencies(&packages),
        [
            "xcsh-log (layer 1) depends on xcsh-runtime (layer 5): dependencies point down",
            "xcsh-tools (layer 4) dev-depends on xcsh-providers (layer 4): dependencies point down",
            "xcsh-new: not in tidy's layer table",
        ]
    );
}

#[test]
fn tidy_sees_io_and_a_clock_in_the_machine_but_not_in_its_tests_or_comments() {
    let files = vec![
        file(
            "machine/src/step.rs",
            "//! x\nuse std::fs::File;\n// Instant in a comment\nlet t = Instant::now();\n#[cfg(test)]\nmod tests {\n    use std::fs;\n}\n",
        ),
        file("machine/src/tests.rs", "//! t\nuse std::fs;\n"),
        file("log/src/reader.rs", "//! r\nuse std::fs;\n"),
    ];
    assert_eq!(
        machine_effects(&files),
        [
            "machine/src/step.rs:2: `std::fs` in the machine",
            "machine/src/step.rs:4: `Instant` in the machine",
        ]
    );
}

#[test]
fn tidy_sees_a_long_module_but_not_a_long_test_module() {
    let long = format!("//! x\n{}", "fn f() {}\n".repeat(MAX_LINES));
    let with_tests = format!(
        "//! x\nfn f() {{}}\n#[cfg(test)]\nmod tests {{\n{}}}\n",
        "fn g() {}\n".repeat(MAX_LINES)
    );
    let files = vec![
        file("log/src/big.rs", &long),
        file("log/src/small.rs", &with_tests),
        file("log/src/big/tests.rs", &long),
    ];
    assert_eq!(
        long_modules(&files),
        ["log/src/big.rs: 801 non-test lines (at most 800)"]
    );
}

#[test]
fn tidy_sees_a_file_without_its_purpose_line() {
    let files = vec![
        file("tools/src/a.rs", "//! what a is for\n"),
        file("tools/src/b.rs", "use x;\n"),
    ];
    assert_eq!(
        without_purpose_line(&files),
        ["tools/src/b.rs: does not start with a `//!` line"]
    );
}

#[test]
fn tidy_sees_two_modules_that_use_each_other() {
    let files = vec![
        file("log/src/reader.rs", "//! r\nuse crate::parallel::scan;\n"),
        file(
            "log/src/parallel/mod.rs",
            "//! p\nuse crate::reader::Line;\n",
        ),
        file("log/src/dag.rs", "//! d\nuse crate::reader::Line;\n"),
        file(
            "log/src/writer.rs",
            "//! w\n#[cfg(test)]\nmod tests {\n    use crate::dag::Dag;\n}\n",
        ),
        file("log/src/dag/tests.rs", "//! t\nuse crate::writer::W;\n"),
    ];
    assert_eq!(
        module_cycles(&files),
        ["log/src/: modules `parallel` and `reader` depend on each other"]
    );
}

#[test]
fn tidy_sees_a_forbidden_package_under_the_machine() {
    let meta = serde_json::json!({
        "packages": [
            {"id": "m", "name": "xcsh-machine", "dependencies": [
                {"name": "serde", "kind": null},
                {"name": "chrono", "kind": null},
                {"name": "expect-test", "kind": "dev"}
            ]},
            {"id": "s", "name": "serde", "dependencies": []},
            {"id": "c", "name": "chrono", "dependencies": []},
            {"id": "t", "name": "tokio", "dependencies": []},
            {"id": "e", "name": "expect-test", "dependencies": []}
        ],
        "resolve": {"nodes": [
            {"id": "m", "deps": [
                {"pkg": "s", "dep_kinds": [{"kind": null}]},
                {"pkg": "c", "dep_kinds": [{"kind": null}]},
                {"pkg": "e", "dep_kinds": [{"kind": "dev"}]}
            ]},
            {"id": "s", "deps": []},
            {"id": "c", "deps": [{"pkg": "t", "dep_kinds": [{"kind": null}]}]},
            {"id": "e", "deps": [{"pkg": "t", "dep_kinds": [{"kind": null}]}]}
        ]}
    });
    let mut found = machine_dependencies(&meta);
    found.sort();
    assert_eq!(
        found,
        [
            "chrono is in the machine's dependency tree",
            "tokio is in the machine's dependency tree",
            "xcsh-machine depends on chrono",
        ]
    );
}
