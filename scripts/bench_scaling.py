"""The scaling table of scripts/bench.sh (issue 19 item 4): every command over sessions
of several sizes and shapes, time per entry at each size, its growth from the smallest to
the largest (flat = linear work; the target is within 1.5×), and the peak RSS at the
largest size against the file (≤ 2× the file for the commands that read the whole log;
bounded for the ones that answer from the index).

Usage: bench_scaling.py RESULTS FACTS LOAD_START LOAD_END
RESULTS: lines `scale_SHAPE_SIZE_COMMAND MICROSECONDS RSS_KB` (one a timed run);
FACTS: lines `SHAPE SIZE ENTRIES BYTES` (the generated sessions)."""
import statistics
import subprocess
import sys

sys.path.insert(0, "scripts")
from bench_tables import print_table

# The commands, in the table's order: (name, what it is, answered from the index).
COMMANDS = [
    ("tree_no_index", "tree, no index (reads the log, writes the index)", False),
    ("tree", "tree (index)", True),
    ("tree_full", "tree --full", False),
    ("log", "log", False),
    ("events", "events", False),
    ("events_tool_result", "events --type tool_result --json", False),
    ("stats", "stats (index)", True),
    ("check", "check", False),
    ("replay", "replay", False),
    ("diff", "diff of the leaf and an entry 10 before it", False),
    ("export_json", "export --format json", False),
    ("export_md", "export --format md", False),
    ("export_html", "export --format html", False),
]
SHAPES = [
    ("deep", "deep chain (a branch every ~200 runs)"),
    ("wide", "wide branching (every run a branch)"),
    ("labels", "many labels (a chain of labels)"),
]


def main():
    results, facts_path, load0, load1 = sys.argv[1:]
    runs = {}
    for line in open(results):
        name, us, rss = line.split()
        runs.setdefault(name, []).append((int(us) / 1e6, int(rss) * 1024))
    facts = {}
    for line in open(facts_path):
        shape, size, entries, size_bytes = line.split()
        facts[(shape, size)] = (int(entries), int(size_bytes))
    sizes = sorted({int(size) for _, size in facts}, key=int)
    small, large = str(sizes[0]), str(sizes[-1])

    def k(n):
        return f"{n // 1000000}M" if n % 1000000 == 0 else (f"{n // 1000}k" if n % 1000 == 0 else str(n))

    rows = []
    missed = 0
    for shape, shape_what in SHAPES:
        if (shape, large) not in facts:
            continue
        for name, what, indexed in COMMANDS:
            per = []
            for size in sizes:
                key = f"scale_{shape}_{size}_{name}"
                if key not in runs:
                    per = None
                    break
                entries, _ = facts[(shape, str(size))]
                per.append(statistics.median(s for s, _ in runs[key]) / entries)
            if per is None:
                continue
            growth = per[-1] / per[0]
            rss = max(r for _, r in runs[f"scale_{shape}_{large}_{name}"])
            file_bytes = facts[(shape, large)][1]
            mem_ok = indexed or rss <= 2 * file_bytes
            ok = growth <= 1.5 and mem_ok
            missed += not ok
            rows.append((
                f"{what}, {shape_what}",
                " / ".join(f"{p * 1e6:.2f}" for p in per),
                f"{growth:.2f}×",
                f"{rss / 1e6:.0f} MB ({rss / file_bytes:.2f}× file)",
                "≤ 1.5×, " + ("bounded" if indexed else "RSS ≤ 2× file"),
                "met" if ok else "missed",
            ))
    head = ("command, shape", "µs per entry at " + " / ".join(k(s) for s in sizes),
            f"growth {k(sizes[0])} → {k(sizes[-1])}", f"peak RSS at {k(sizes[-1])}", "target", "")
    print_table(head, rows)
    date = subprocess.run(["date", "-u", "+%Y-%m-%d %H:%M UTC"], capture_output=True, text=True).stdout.strip()
    print()
    print(f"{date}; load average {load0} at the start, {load1} at the end; medians of the timed runs; "
          f"{len(rows) - missed} of {len(rows)} rows met.")
    for shape, size in sorted(facts, key=lambda x: (x[0], int(x[1]))):
        entries, size_bytes = facts[(shape, size)]
        print(f"  {shape} {k(int(size))}: {entries} entries, {size_bytes / 1e6:.1f} MB")
    print("  not measured: the shape of huge single entries (gen-session has no option for it).")


main()
