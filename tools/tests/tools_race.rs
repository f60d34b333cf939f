//! The file tools under attack: a directory swapped with a symlink to outside the
//! workspace (`renameat2(RENAME_EXCHANGE)` in a tight loop) while writes, reads,
//! greps, lists and globs run; a hard link to an outside file edited and written;
//! reads of a FIFO, a character device and a 2 GB sparse file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use xcsh_machine::{CallId, ToolCall, ToolOutcome, ToolStatus};
use xcsh_tools::{StandardTools, ToolExecutor};

const SECRET: &str = "OUTSIDE-SECRET-7f3a";
const SECRET_NAME: &str = "outside-only-name.txt";

async fn call(tools: &StandardTools, id: usize, name: &str, args: &Value) -> ToolOutcome {
    let call = ToolCall {
        id: CallId(format!("call-{id}")),
        name: name.to_owned(),
        arguments: args.to_string(),
    };
    tokio::time::timeout(
        Duration::from_secs(30),
        tools.execute(call, CancellationToken::new()),
    )
    .await
    .expect("tool call settles")
}

/// Every path below `dir` (recursively, not following symlinks).
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let entry = entry.expect("entry");
        out.push(entry.path());
        if entry.file_type().expect("file type").is_dir() {
            out.extend(tree(&entry.path()));
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_with_a_symlink_out_never_leaks_a_write_or_a_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    let root = base.join("ws");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("d/sub")).expect("mkdir");
    std::fs::create_dir_all(outside.join("sub")).expect("mkdir");
    std::fs::write(root.join("d/f.txt"), "inside content\n").expect("write");
    std::fs::write(root.join("d/sub/g.txt"), "inside g\n").expect("write");
    std::fs::write(outside.join("f.txt"), format!("{SECRET}\n")).expect("write");
    std::fs::write(outside.join("sub/g.txt"), format!("{SECRET} g\n")).expect("write");
    std::fs::write(outside.join(SECRET_NAME), format!("{SECRET}\n")).expect("write");
    std::os::unix::fs::symlink(&outside, root.join("s")).expect("symlink");
    let before_outside = tree(&outside);
    let tools = StandardTools::new(&root).expect("tools");

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        let (d, s) = (root.join("d"), root.join("s"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &d, CWD, &s, RenameFlags::EXCHANGE).expect("exchange");
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    let mut leaks = Vec::new();
    let mut writes_ok = 0usize;
    let mut reads_ok = 0usize;
    for i in 0..250 {
        let out = call(
            &tools,
            i,
            "write",
            &json!({"path": format!("d/new-{i}.txt"), "content": "written\n"}),
        )
        .await;
        writes_ok += usize::from(out.status == ToolStatus::Ok);
    }
    let reads: [(&str, Value); 9] = [
        ("read", json!({"path": "d/f.txt"})),
        ("read", json!({"path": "d/sub/g.txt"})),
        ("grep", json!({"pattern": "SECRET|inside", "path": "d"})),
        ("grep", json!({"pattern": "SECRET|inside"})),
        (
            "grep",
            json!({"pattern": "SECRET|inside", "path": "d/f.txt"}),
        ),
        ("list", json!({"path": "d"})),
        ("list", json!({"path": ".", "recursive": true})),
        ("glob", json!({"pattern": "**/*.txt"})),
        ("read", json!({"path": "d/outside-only-name.txt"})),
    ];
    for i in 0..450 {
        let (name, args) = &reads[i % 5];
        let out = call(&tools, 1000 + i, name, args).await;
        reads_ok += usize::from(out.status == ToolStatus::Ok);
        if out.content.contains(SECRET) || out.content.contains(SECRET_NAME) {
            leaks.push((*name, args.clone(), out.content.clone()));
        }
    }
    for i in 0..100 {
        let (name, args) = &reads[5 + i % 4];
        let out = call(&tools, 2000 + i, name, args).await;
        // The read names the outside-only file itself; listings must never show it.
        let listing = *name != "read";
        if out.content.contains(SECRET) || (listing && out.content.contains(SECRET_NAME)) {
            leaks.push((*name, args.clone(), out.content.clone()));
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper");

    // Put the directory back where it belongs for the checks.
    if root.join("d").symlink_metadata().expect("d").is_symlink() {
        renameat_with(
            CWD,
            root.join("d"),
            CWD,
            root.join("s"),
            RenameFlags::EXCHANGE,
        )
        .expect("exchange back");
    }
    assert_eq!(tree(&outside), before_outside, "files created outside");
    assert_eq!(
        std::fs::read_to_string(outside.join("f.txt")).expect("read"),
        format!("{SECRET}\n")
    );
    assert!(leaks.is_empty(), "outside bytes returned: {leaks:#?}");
    let written = tree(&root.join("d"))
        .iter()
        .filter(|p| p.to_string_lossy().contains("new-"))
        .count();
    assert!(swaps.load(Ordering::Relaxed) > 1000, "the swapper ran");
    // Some calls get through between swaps, each into the workspace.
    assert_eq!(written, writes_ok, "every ok write landed inside");
    eprintln!(
        "swaps {}, writes ok {writes_ok}/250, reads ok {reads_ok}/450",
        swaps.load(Ordering::Relaxed)
    );
}

/// The call succeeded, the hard link in the workspace holds `content` and the file
/// outside it is unchanged.
fn only_the_link_changed(outcome: &ToolOutcome, outside: &Path, link: &Path, content: &str) {
    assert_eq!(outcome.status, ToolStatus::Ok, "{}", outcome.content);
    assert_eq!(
        std::fs::read_to_string(outside).expect("read"),
        "outside line\n"
    );
    assert_eq!(std::fs::read_to_string(link).expect("read"), content);
}

#[tokio::test]
async fn edit_and_write_through_a_hard_link_leave_the_outside_file_unchanged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    let root = base.join("ws");
    std::fs::create_dir(&root).expect("mkdir");
    let outside = base.join("outside.txt");
    std::fs::write(&outside, "outside line\n").expect("write");
    std::fs::hard_link(&outside, root.join("link.txt")).expect("hard link");
    let tools = StandardTools::new(&root).expect("tools");

    let read = call(&tools, 1, "read", &json!({"path": "link.txt"})).await;
    assert_eq!(read.status, ToolStatus::Ok, "{}", read.content);
    let edit = call(
        &tools,
        2,
        "edit",
        &json!({"path": "link.txt", "old_string": "outside", "new_string": "edited"}),
    )
    .await;
    only_the_link_changed(&edit, &outside, &root.join("link.txt"), "edited line\n");

    // A second link, written without an edit first.
    std::fs::hard_link(&outside, root.join("link2.txt")).expect("hard link");
    call(&tools, 3, "read", &json!({"path": "link2.txt"})).await;
    let write = call(
        &tools,
        4,
        "write",
        &json!({"path": "link2.txt", "content": "written\n"}),
    )
    .await;
    only_the_link_changed(&write, &outside, &root.join("link2.txt"), "written\n");
}

#[tokio::test]
async fn reading_a_fifo_is_refused_at_once_without_opening_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    rustix::fs::mknodat(
        CWD,
        root.join("pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("mkfifo");
    let tools = StandardTools::new(&root).expect("tools");
    // No writer ever opens the FIFO: opening it for reading would block forever.
    let out = call(&tools, 1, "read", &json!({"path": "pipe"})).await;
    assert_eq!(
        (out.status, out.content.as_str()),
        (
            ToolStatus::Error,
            "`pipe` is a FIFO (named pipe), not a regular file or a directory; the file tools only open regular files and directories"
        )
    );
    let out = call(&tools, 2, "grep", &json!({"pattern": "x", "path": "pipe"})).await;
    assert_eq!(out.status, ToolStatus::Error, "{}", out.content);
    let out = call(&tools, 3, "write", &json!({"path": "pipe", "content": "x"})).await;
    assert_eq!(out.status, ToolStatus::Error, "{}", out.content);
}

#[tokio::test]
async fn reading_a_character_device_is_refused() {
    // /dev as the workspace: its devices are inside it.
    let tools = StandardTools::new(Path::new("/dev")).expect("tools");
    for (i, name) in ["zero", "null", "urandom"].into_iter().enumerate() {
        let out = call(&tools, i, "read", &json!({"path": name})).await;
        assert_eq!(
            (out.status, out.content),
            (
                ToolStatus::Error,
                format!(
                    "`{name}` is a character device, not a regular file or a directory; the file tools only open regular files and directories"
                )
            )
        );
    }
}

/// The resident set size of this process, in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS");
    let kb: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .expect("number");
    kb * 1024
}

#[tokio::test]
async fn a_2_gb_sparse_file_is_refused_at_once_and_a_100_mb_one_is_streamed_with_flat_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let big = std::fs::File::create(root.join("big.bin")).expect("create");
    big.set_len(2 << 30).expect("sparse 2 GB");
    // 100 MB of text head and NULs after the sniffed first 8 KiB: valid UTF-8, one
    // huge line, which the old read loaded whole.
    let mut text = "first line\n".repeat(1000);
    text.push_str("second part ");
    std::fs::write(root.join("long.txt"), &text).expect("write");
    std::fs::OpenOptions::new()
        .write(true)
        .open(root.join("long.txt"))
        .expect("open")
        .set_len(100 << 20)
        .expect("sparse 100 MB");
    let tools = StandardTools::new(&root).expect("tools");

    let before = rss();
    let out = call(&tools, 1, "read", &json!({"path": "big.bin"})).await;
    assert_eq!(
        (out.status, out.content.as_str()),
        (
            ToolStatus::Error,
            "`big.bin` is 2147483648 bytes, over the file tools' limit of 268435456 bytes (256 MiB); search it with `grep`, or show part of it with `bash` (e.g. `sed -n '1,100p'`)"
        )
    );
    let out = call(
        &tools,
        2,
        "read",
        &json!({"path": "long.txt", "offset": 1001}),
    )
    .await;
    assert_eq!(out.status, ToolStatus::Ok, "{}", out.content);
    let last = out.content.lines().last().expect("trailer");
    assert_eq!(
        last,
        "[output truncated: 1 of 1 lines, 51200 of 104846608 bytes shown; cap 2000 lines / 51200 bytes; continue with offset 1002]"
    );
    let grown = rss().saturating_sub(before);
    assert!(grown < 50 << 20, "RSS grew by {grown} bytes");
}
