//! The HTML export in headless Chromium, by `scripts/browser-test.sh`, a scenario per
//! test: `branches` exports a session with two branches, opens it, clicks the other
//! branch and checks the conversation changed; `markdown` exports an answer in
//! Markdown with XSS attempts and a 2,000-line tool result and checks the rendered
//! elements, that no attempt made live markup, and the folds (screenshots in
//! target/test-artifacts/). Runs when `CI=true` or `XCSH_BROWSER_TESTS=1` (it
//! installs Debian's chromium and playwright-core if missing); skipped, loudly,
//! otherwise.

use std::io::Write;
use std::path::Path;
use std::process::Command;

/// Runs the scenario and returns its output, or `None` (said on stderr) when the
/// browser tests are off.
fn browser_test(scenario: &str) -> Option<String> {
    let on = |var: &str, want: &str| std::env::var(var).is_ok_and(|v| v == want);
    if !(on("CI", "true") || on("XCSH_BROWSER_TESTS", "1")) {
        // Straight to the process's stderr, past the test harness's capture, so that
        // the skip shows in every `cargo test` run.
        let _ = std::io::stderr().write_all(
            format!(
                "\n!!!!!!!! SKIPPED the browser test of the HTML export ({scenario}): set \
                 XCSH_BROWSER_TESTS=1 (CI=true does too) to run scripts/browser-test.sh in \
                 headless Chromium !!!!!!!!\n\n"
            )
            .as_bytes(),
        );
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("scripts/browser-test.sh"))
        .arg(scenario)
        .env("XCSH_BIN", env!("CARGO_BIN_EXE_xcsh"))
        .current_dir(root)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "scripts/browser-test.sh {scenario} failed:\n{text}"
    );
    assert!(text.contains("browser-test: ok"), "{text}");
    Some(text)
}

fn artifact(name: &str) -> bool {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-artifacts")
        .join(name)
        .exists()
}

#[test]
fn the_html_export_switches_branches_on_a_click_in_headless_chromium() {
    if browser_test("branches").is_some() {
        assert!(artifact("export-branch-switched.png"));
    }
}

/// A heading, a table cell and a code block are elements; the long tool result is
/// folded and opens whole; `<img onerror>`, `javascript:` links and a `</script>` in
/// a tool result make no element with a handler, no such link, no alert.
#[test]
fn the_html_export_renders_markdown_safely_and_folds_long_results_in_headless_chromium() {
    if let Some(text) = browser_test("markdown") {
        assert!(text.contains("XSS attempts inert"), "{text}");
        assert!(artifact("export-markdown.png"));
        assert!(artifact("export-markdown-unfolded.png"));
    }
}
