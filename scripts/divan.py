"""The median time of each benchmark in divan's table output, for scripts/bench.sh."""
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
