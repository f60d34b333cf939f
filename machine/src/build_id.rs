//! What decides how this build's machine behaves: its sources (but their tests), the
//! crate version, the enabled cargo features and the name and version of every package
//! in the workspace's `Cargo.lock`, gathered by `build.rs`. `xcsh_log::resume` hashes it
//! into the id a resume snapshot is tagged with (SPEC §12.11), so that a snapshot is
//! never restored by a machine that might decide differently.

/// The text `build.rs` wrote.
pub const BUILD_INPUTS: &str = include_str!(concat!(env!("OUT_DIR"), "/machine_build.txt"));

#[cfg(test)]
mod tests {
    use super::BUILD_INPUTS as MACHINE_BUILD_INPUTS;

    fn lines_starting(prefix: &str) -> Vec<&'static str> {
        MACHINE_BUILD_INPUTS
            .lines()
            .filter(|l| l.starts_with(prefix))
            .collect()
    }

    #[test]
    fn the_machine_build_covers_the_enabled_cargo_features() {
        let expected = if cfg!(feature = "broken-steer") {
            "features BROKEN_STEER"
        } else {
            "features "
        };
        assert_eq!(lines_starting("features "), [expected]);
    }

    #[test]
    fn the_machine_build_covers_dependency_versions_and_every_machine_source() {
        let serde_json: Vec<&str> = lines_starting("serde_json ");
        assert_eq!(serde_json.len(), 1, "{serde_json:?}");
        assert!(
            serde_json[0]
                .split(' ')
                .nth(1)
                .is_some_and(|v| v.contains('.'))
        );
        let sources: Vec<&str> = lines_starting("source ")
            .into_iter()
            .map(|l| l.split(' ').nth(1).unwrap_or_default())
            .collect();
        let mut on_disk: Vec<String> =
            std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))
                .expect("the machine's sources")
                .map(|e| {
                    e.expect("a directory entry")
                        .file_name()
                        .to_string_lossy()
                        .into_owned()
                })
                .filter(|n| n.ends_with(".rs") && n != "tests.rs")
                .collect();
        on_disk.sort();
        assert_eq!(sources, on_disk);
    }
}
