"""The tables of scripts/bench.sh: divan's, read; the figures', printed."""
import re

UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def medians(lines, min_head):
    """Seconds by benchmark name, read from the rows of divan's table (`├─ NAME …`
    or `╰─ NAME …`, the median in the third column) whose first column has at least
    `min_head` words."""
    bench = {}
    for line in lines:
        if "│" not in line:
            continue
        cols = [c.strip() for c in line.split("│")]
        head = cols[0].split()
        if len(head) < min_head or head[0] not in ("├─", "╰─"):
            continue
        m = re.match(r"([\d.]+)\s*(\S+)", cols[2])
        if m and m.group(2) in UNITS:
            bench[head[1]] = float(m.group(1)) * UNITS[m.group(2)]
    return bench


def print_table(head, rows):
    """`rows` under `head` as a Markdown table, each column as wide as its widest cell."""
    w = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    line = lambda r: "| " + " | ".join(c.ljust(w[i]) for i, c in enumerate(r)) + " |"
    print(line(head))
    print("|" + "|".join("-" * (x + 2) for x in w) + "|")
    for r in rows:
        print(line(r))
