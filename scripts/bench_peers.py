#!/usr/bin/env python3
"""bench_peers.py: the measuring half of scripts/bench-peers.sh (run it through that script,
which installs the agents and enters the network namespace).

Runs xcsh, pi and Codex against scripts/mock-model.py over N tool steps (the model asks for
`echo step K` through each agent's shell tool, N times, then answers with a text) and a
resume (a second prompt continuing the session of the largest N: one more tool step), RUNS
reps each, interleaved (rep 1 of every agent and N, then rep 2, ...), and the floor in the
same run (a bare `bash -c 'echo step 1'` spawn, median of many, plus the mock's serve time
per request). Prints one table and the ratios of issue 19, writes JSON.

Python 3 standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_tables import print_table  # noqa: E402

PROMPT = "Benchmark: run each shell command the model asks for, then stop."
RESUME_PROMPT = "Benchmark, continued: one more command."
TIME = "/usr/bin/time"  # GNU time: the agent's peak RSS (%M)
RUN_TIMEOUT = 300  # seconds a single agent run may take before it is killed

# urllib without the environment's proxies: the mock is on 127.0.0.1.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def log(msg):
    print(f"bench-peers: {msg}", file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def machine():
    model = ""
    mem = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                    break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu_model": model, "memory": mem,
            "kernel": platform.release(), "python": platform.python_version()}


def dir_bytes(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def files_under(path, suffix):
    out = []
    for root, _dirs, files in os.walk(path):
        out += [os.path.join(root, f) for f in files if f.endswith(suffix)]
    return sorted(out)


class Mock:
    """One mock model server for the whole run; each agent run loads its own script."""

    def __init__(self, repo, work):
        self.log_path = os.path.join(work, "mock-requests.jsonl")
        port_file = os.path.join(work, "mock.port")
        empty = os.path.join(work, "empty-script.json")
        with open(empty, "w") as f:
            f.write("[]")
        self.err = open(os.path.join(work, "mock.err"), "w")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(repo, "scripts", "mock-model.py"), "--script", empty,
             "--requests-log", self.log_path, "--port-file", port_file],
            stdout=subprocess.DEVNULL, stderr=self.err)
        for _ in range(200):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            if self.proc.poll() is not None:
                sys.exit("bench-peers: the mock model did not start (see mock.err)")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{open(port_file).read().strip()}"

    def load(self, turns):
        req = urllib.request.Request(self.url + "/_mock/script", method="POST",
                                     data=json.dumps({"turns": turns}).encode())
        HTTP.open(req, timeout=10).read()

    def status(self):
        return json.loads(HTTP.open(self.url + "/_mock/status", timeout=10).read())

    def offset(self):
        return os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0

    def requests_since(self, offset):
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            lines = [json.loads(x) for x in f.read().splitlines() if x.strip()]
        return sorted(lines, key=lambda e: e["n"])

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def script(calls, expect_first, text="done"):
    """The mock's turns: each call in turn, then a text. The request after call K must
    carry its output, `step K` and a newline, which in the raw JSON body is `step K\\n`
    (the call's own arguments hold `step K\\"`): a miss means the tool did not run."""
    turns = []
    expect = expect_first
    for k, call in calls:
        turns.append({"expect": expect, "tool_calls": [call]})
        expect = f"step {k}\\n"
    turns.append({"expect": expect, "text": text})
    return turns


# ------------------------------------------------------------------ the agents
class Agent:
    name = ""
    # The agent's own folder in the run (its XCSH_HOME, PI_CODING_AGENT_DIR or
    # CODEX_HOME), made by __init__ as self.agent_home; its sessions are below it.
    # NAME-home unless the agent names another.
    home_dir = None

    def __init__(self, run_dir, mock, binary):
        self.dir = run_dir
        self.mock = mock
        self.binary = binary
        self.work = os.path.join(run_dir, "work")
        self.home = os.path.join(run_dir, "home")
        self.agent_home = os.path.join(run_dir, self.home_dir or f"{self.name}-home")
        os.makedirs(self.work)
        os.makedirs(self.home)
        os.makedirs(self.agent_home)

    def sessions(self):
        return os.path.join(self.agent_home, "sessions")

    def env(self):
        env = {k: v for k, v in os.environ.items()
               if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
        env.update(HOME=self.home, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
        env.update(self.own_env())
        return env

    def own_env(self):
        """The agent's own variables (its home, its key), on top of `env`'s."""
        return {}

    def call(self, k):
        """Step K's tool call in the agent's shell tool (pi's and xcsh's: `bash`)."""
        return {"name": "bash", "arguments": {"command": f"echo step {k}"}}


class Xcsh(Agent):
    name = "xcsh"

    def __init__(self, run_dir, mock, binary, sandbox):
        super().__init__(run_dir, mock, binary)
        self.sandbox = sandbox

    def own_env(self):
        return dict(XCSH_HOME=self.agent_home, OPENAI_API_KEY="dummy")

    def command(self, prompt, steps, resume):
        cmd = [self.binary, "run", "-p", prompt, "--provider", "openai",
               "--base-url", self.mock.url + "/v1", "--model", "mock-model",
               "--permissions", "yolo", "--sandbox", self.sandbox,
               "--workspace", self.work, "--max-steps", str(steps + 2)]
        if resume:
            files = files_under(self.sessions(), ".jsonl")
            if len(files) != 1:
                raise RuntimeError(f"xcsh: expected one session file to resume, got {files}")
            cmd += ["--resume", files[0]]
        return cmd


class Pi(Agent):
    name = "pi"
    home_dir = "pi-agent"

    def __init__(self, run_dir, mock, binary):
        super().__init__(run_dir, mock, binary)
        with open(os.path.join(self.agent_home, "models.json"), "w") as f:
            json.dump({"providers": {"mock": {
                "baseUrl": mock.url + "/v1", "api": "openai-completions", "apiKey": "dummy",
                "compat": {"supportsDeveloperRole": False},
                "models": [{"id": "mock-model", "name": "Mock model", "reasoning": False,
                            "contextWindow": 128000, "maxTokens": 8000,
                            "cost": {"input": 0, "output": 0, "cacheRead": 0,
                                     "cacheWrite": 0}}]}}}, f)
        with open(os.path.join(self.agent_home, "settings.json"), "w") as f:
            json.dump({"defaultProvider": "mock", "defaultModel": "mock-model",
                       "quietStartup": True}, f)

    def own_env(self):
        return dict(PI_CODING_AGENT_DIR=self.agent_home, PI_OFFLINE="1", PI_TELEMETRY="0")

    def command(self, prompt, steps, resume):
        return [self.binary] + (["-c"] if resume else []) + ["-p", prompt]


class Codex(Agent):
    name = "codex"

    def __init__(self, run_dir, mock, binary, package_root):
        super().__init__(run_dir, mock, binary)
        self.package_root = package_root
        template = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "codex-mock-config.toml")
        with open(template) as f:
            config = f.read().replace("@BASE_URL@", mock.url + "/v1")
        with open(os.path.join(self.agent_home, "config.toml"), "w") as f:
            f.write(config)

    def call(self, k):
        return {"name": "exec_command", "arguments": {"cmd": f"echo step {k}",
                                                      "workdir": self.work}}

    def own_env(self):
        env = dict(CODEX_HOME=self.agent_home, MOCK_API_KEY="dummy")
        if self.package_root:  # what the npm launcher sets before it runs the binary
            env.update(CODEX_MANAGED_BY_NPM="1", CODEX_MANAGED_PACKAGE_ROOT=self.package_root)
        return env

    def command(self, prompt, steps, resume):
        opts = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        if not resume:
            return [self.binary, "exec"] + opts + [prompt]
        files = files_under(self.sessions(), ".jsonl")
        if len(files) != 1:
            raise RuntimeError(f"codex: expected one rollout to resume, got {files}")
        with open(files[0]) as f:
            sid = json.loads(f.readline())["payload"]["id"]
        return [self.binary, "exec", "resume"] + opts + [sid, prompt]


# ------------------------------------------------------------------ one run
def run_once(agent, mock, steps, resume, label, first_k=1):
    """Runs the agent once against a script of `steps` tool calls, `echo step K` for K
    from first_k; returns the figures."""
    calls = [(k, agent.call(k)) for k in range(first_k, first_k + steps)]
    mock.load(script(calls, "continued" if resume else "Benchmark:"))
    offset = mock.offset()
    before = dir_bytes(agent.sessions())
    cmd = agent.command(RESUME_PROMPT if resume else PROMPT, steps, resume)
    out = open(os.path.join(agent.dir, f"{label}.out"), "w")
    err = open(os.path.join(agent.dir, f"{label}.err"), "w")
    # /usr/bin/time, a small process, forks the agent: the peak RSS of a child of this
    # Python would start at Python's own (Linux counts the RSS a process had before its
    # exec), so %M of the agent comes from time's report, not from wait4 here.
    rss_file = os.path.join(agent.dir, f"{label}.time")
    t0 = time.monotonic_ns()
    proc = subprocess.Popen([TIME, "-f", "%M", "-o", rss_file] + cmd, cwd=agent.work, env=agent.env(), stdin=subprocess.DEVNULL,
                            stdout=out, stderr=err, start_new_session=True)
    timed_out = []

    def kill():
        timed_out.append(True)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass

    timer = threading.Timer(RUN_TIMEOUT, kill)
    timer.start()
    _pid, status, ru = os.wait4(proc.pid, 0)
    t_end = time.monotonic_ns()
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    # Whatever the agent left running in its session (a daemon, a shell) goes now.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    out.close()
    err.close()
    reqs = mock.requests_since(offset)
    st = mock.status()
    turns = [r for r in reqs if r["kind"] == "turn"]
    problems = []
    if timed_out:
        problems.append(f"killed after {RUN_TIMEOUT} s")
    if proc.returncode != 0:
        problems.append(f"exit code {proc.returncode}")
    if st["turns_left"]:
        problems.append(f"{st['turns_left']} scripted turns not requested")
    if st["exhausted_requests"]:
        problems.append(f"{st['exhausted_requests']} requests past the script")
    if st["expect_misses"]:
        problems.append(f"{len(st['expect_misses'])} requests without the previous output")
    ts = [r["t_ns"] for r in turns]
    row = {
        "agent": agent.name, "steps": steps, "resume": resume, "label": label,
        "ok": not problems, "problems": problems,
        "command": cmd,
        "model_requests": len(turns),
        "other_requests": len(reqs) - len(turns),
        "first_request_ms": (ts[0] - t0) / 1e6 if ts else None,
        "gap_ms": (ts[-1] - ts[0]) / (len(ts) - 1) / 1e6 if len(ts) > 1 else None,
        "gaps_ms": [(b - a) / 1e6 for a, b in zip(ts, ts[1:])],
        "serve_ms": [r["serve_ns"] / 1e6 for r in turns],
        "wall_s": (t_end - t0) / 1e9,
        "peak_rss_mb": read_rss_kb(rss_file) / 1024,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "session_bytes": dir_bytes(agent.sessions()) - before,
    }
    if problems:
        log(f"{label}: PROBLEM: {'; '.join(problems)} (see {agent.dir}/{label}.err)")
    return row


def read_rss_kb(path):
    """The %M line of /usr/bin/time's -o file (after any "Command exited ..." line)."""
    with open(path) as f:
        lines = [x for x in f.read().split() if x.isdigit()]
    return int(lines[-1]) if lines else 0


def bash_floor(reps):
    """A bare `bash -c 'echo step 1'`: spawned, its stdout read to the end, waited for."""
    times = []
    for _ in range(reps):
        t0 = time.monotonic_ns()
        p = subprocess.Popen(["bash", "-c", "echo step 1"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.communicate()
        times.append((time.monotonic_ns() - t0) / 1e6)
    return times


# ------------------------------------------------------------------ the report
def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, digits):
    return "—" if v is None else f"{v:,.{digits}f}"


def summarize(rows, agents, steps, reps):
    """Medians over the reps, per agent and N (and the resume)."""
    out = []
    for agent in agents:
        for n in steps + ["resume"]:
            mine = [r for r in rows if r["agent"] == agent
                    and (r["resume"] if n == "resume" else (not r["resume"] and r["steps"] == n))]
            if not mine:
                continue
            good = [r for r in mine if r["ok"]]
            out.append({
                "agent": agent,
                "steps": mine[0]["steps"],
                "resume": n == "resume",
                "reps_ok": len(good), "reps": len(mine),
                "gap_ms": med(r["gap_ms"] for r in good),
                # steadier under load than the mean: the median and the fastest gap
                # of each run, then their medians over the reps (JSON only)
                "gap_median_ms": med(med(r["gaps_ms"]) for r in good),
                "gap_fastest_ms": med(min(r["gaps_ms"], default=None) for r in good),
                "first_request_ms": med(r["first_request_ms"] for r in good),
                "peak_rss_mb": med(r["peak_rss_mb"] for r in good),
                "cpu_s": med(r["cpu_s"] for r in good),
                "session_bytes": med(r["session_bytes"] for r in good),
                "wall_s": med(r["wall_s"] for r in good),
            })
    return out


def ratios(summary, floor_ms, nmax):
    def get(agent, key):
        for s in summary:
            if s["agent"] == agent and s["steps"] == nmax and not s["resume"]:
                return s[key]
        return None

    checks = []

    def check(what, mine, theirs, factor, peer_name):
        # met when mine <= theirs / factor (a peer) or mine <= theirs * factor (the floor)
        if mine is None or theirs is None or mine <= 0:
            checks.append({"check": what, "xcsh": mine, "reference": theirs,
                           "ratio": None, "target": None, "met": None})
            return
        if peer_name == "floor":
            ratio = mine / theirs
            target = f"≤ {factor}× floor"
            met = ratio <= factor
        else:
            ratio = theirs / mine
            target = f"≥ {factor}× ({peer_name} / xcsh)"
            met = ratio >= factor
        checks.append({"check": what, "xcsh": mine, "reference": theirs, "ratio": ratio,
                       "target": target, "met": met})

    check(f"gap per step, N={nmax}: xcsh ≤ pi / 3", get("xcsh", "gap_ms"),
          get("pi", "gap_ms"), 3, "pi")
    check(f"gap per step, N={nmax}: xcsh ≤ Codex / 15", get("xcsh", "gap_ms"),
          get("codex", "gap_ms"), 15, "codex")
    check(f"time to first request, N={nmax}: xcsh ≤ Codex / 10",
          get("xcsh", "first_request_ms"), get("codex", "first_request_ms"), 10, "codex")
    check(f"peak RSS, N={nmax}: xcsh ≤ pi / 8", get("xcsh", "peak_rss_mb"),
          get("pi", "peak_rss_mb"), 8, "pi")
    check(f"peak RSS, N={nmax}: xcsh ≤ Codex / 8", get("xcsh", "peak_rss_mb"),
          get("codex", "peak_rss_mb"), 8, "codex")
    check(f"gap per step, N={nmax}: xcsh ≤ 1.5 × floor", get("xcsh", "gap_ms"),
          floor_ms, 1.5, "floor")
    return checks


def print_report(res):
    m = res["machine"]
    print(f"bench-peers: {res['date']} · {m['nproc']} cores, {m['cpu_model']}, {m['memory']}, "
          f"Linux {m['kernel']} · load average {res['load_start'][0]:.2f} → "
          f"{res['load_end'][0]:.2f} · {res['reps']} reps, medians")
    print(f"network: {res['network']}")
    print()
    rows = []
    for s in res["summary"]:
        label = f"resume of N={max(res['steps'])}, +1" if s["resume"] else f"N={s['steps']}"
        reps = "" if s["reps_ok"] == s["reps"] else f" ({s['reps_ok']}/{s['reps']} ok)"
        rows.append([s["agent"] + reps, label, fmt(s["gap_ms"], 2),
                     fmt(s["first_request_ms"], 1), fmt(s["peak_rss_mb"], 1),
                     fmt(s["cpu_s"], 3), fmt(s["session_bytes"], 0)])
    print_table(["agent", "steps", "gap/step ms", "first request ms", "peak RSS MB", "CPU s",
                 "session bytes"], rows)
    f = res["floor"]
    print()
    print(f"floor: {fmt(f['floor_ms'], 2)} ms = bare `bash -c 'echo step 1'` "
          f"{fmt(f['bash_ms'], 2)} ms (median of {f['bash_reps']}) + mock serve time "
          f"{fmt(f['serve_ms'], 3)} ms (median of {f['serve_requests']} model requests)")
    print()
    rows = []
    for c in res["ratios"]:
        ratio = "—" if c["ratio"] is None else f"{c['ratio']:.2f}×"
        mark = "n/a" if c["met"] is None else ("met" if c["met"] else "missed")
        rows.append([c["check"], fmt(c["xcsh"], 2), fmt(c["reference"], 2), ratio,
                     c["target"] or "", mark])
    print_table(["check", "xcsh", "reference", "ratio", "target", ""], rows)
    for note in res["notes"]:
        print(f"note: {note}")


# ------------------------------------------------------------------ main
def make_agent(name, run_dir, mock, a, sandbox):
    if name == "xcsh":
        return Xcsh(run_dir, mock, a.xcsh, sandbox)
    if name == "pi":
        return Pi(run_dir, mock, a.pi)
    return Codex(run_dir, mock, a.codex, a.codex_package_root)


def main():
    ap = argparse.ArgumentParser(description="see scripts/bench-peers.sh")
    ap.add_argument("--repo", required=True)
    ap.add_argument("--xcsh", required=True)
    ap.add_argument("--pi", required=True)
    ap.add_argument("--codex", required=True)
    ap.add_argument("--codex-package-root", default="")
    ap.add_argument("--json", required=True)
    ap.add_argument("--network", required=True, help="how the mock is reached (printed)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--versions", default="{}", help="JSON: agent → version")
    a = ap.parse_args()

    steps = [int(x) for x in os.environ.get("STEPS", "1 10 50").split()]
    reps = int(os.environ.get("RUNS", "3"))
    bash_reps = int(os.environ.get("FLOOR_REPS", "200"))
    if a.quick:
        steps = [1, 10]
        reps = 1
        bash_reps = 50
    agents = os.environ.get("AGENTS", "xcsh pi codex").split()
    sandbox = os.environ.get("XCSH_SANDBOX", "off")
    if not steps or min(steps) < 1 or reps < 1:
        sys.exit("bench-peers: STEPS must be positive numbers and RUNS at least 1")
    for ag in agents:
        if ag not in ("xcsh", "pi", "codex"):
            sys.exit(f"bench-peers: AGENTS: unknown agent '{ag}' (xcsh, pi, codex)")

    res = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": machine(), "load_start": loadavg(), "network": a.network,
           "reps": reps, "steps": steps, "agents": agents,
           "versions": json.loads(a.versions), "xcsh_sandbox": sandbox, "notes": []}
    work = tempfile.mkdtemp(prefix="xcsh-bench-peers-")
    log(f"work folder {work}; {reps} reps of N = {steps} and a resume, agents {agents}")
    mock = Mock(a.repo, work)
    rows = []
    bash_all = []
    try:
        nmax = max(steps)
        # One unmeasured N=1 run per agent first: the binaries and their libraries into
        # the page cache, so that rep 1 is not a cold start where the others are warm.
        for ag in agents:
            d = os.path.join(work, f"{ag}-warmup")
            os.makedirs(d)
            log(f"warm-up: {ag}")
            warm = run_once(make_agent(ag, d, mock, a, sandbox), mock, 1, False, "run")
            if not warm["ok"]:
                sys.exit(f"bench-peers: {ag} failed its warm-up run ({'; '.join(warm['problems'])};"
                         f" see {d})")
        for rep in range(1, reps + 1):
            for n in steps:
                for ag in agents:
                    d = os.path.join(work, f"{ag}-n{n}-r{rep}")
                    os.makedirs(d)
                    agent = make_agent(ag, d, mock, a, sandbox)
                    log(f"rep {rep}: {ag} N={n}")
                    rows.append(run_once(agent, mock, n, False, "run"))
                    if n == nmax:
                        log(f"rep {rep}: {ag} resume")
                        if rows[-1]["ok"]:
                            rows.append(run_once(agent, mock, 1, True, "resume", nmax + 1))
                        else:
                            log(f"rep {rep}: {ag} resume skipped: its first run failed")
            # the floor's share of this rep, so that it sees the load the rep saw
            bash_all += bash_floor(-(-bash_reps // reps))
    finally:
        mock.stop()
    bash_ms = med(bash_all)
    serve = [s for r in rows if r["ok"] for s in r["serve_ms"]]
    serve_ms = med(serve)
    floor_ms = None if bash_ms is None or serve_ms is None else bash_ms + serve_ms
    res["floor"] = {"bash_ms": bash_ms, "bash_reps": len(bash_all), "serve_ms": serve_ms,
                    "serve_requests": len(serve), "floor_ms": floor_ms}
    res["summary"] = summarize(rows, agents, steps, reps)
    res["ratios"] = ratios(res["summary"], floor_ms, max(steps))
    res["runs"] = rows
    res["load_end"] = loadavg()
    res["work"] = work
    res["notes"] += [
        "gap/step: (time of the last model request − time of the first) / (requests − 1), "
        "from the mock's CLOCK_MONOTONIC receive stamps; first request: from just before "
        "the agent's spawn to the first model request",
        "peak RSS: /usr/bin/time %M, the largest single process among the agent and its "
        "reaped descendants (the shell tool's children included), not their sum; CPU: user + "
        "sys of the agent and its reaped descendants (wait4 of /usr/bin/time, whose own "
        "share is under a millisecond); first request includes /usr/bin/time's own fork and "
        "exec (about 1 ms, the same for every agent)",
        "session bytes: the growth of the agent's sessions folder (xcsh: $XCSH_HOME/sessions, "
        "log and index; pi: $PI_CODING_AGENT_DIR/sessions; Codex: $CODEX_HOME/sessions)",
        f"xcsh runs with --sandbox {sandbox} (XCSH_SANDBOX), Codex with "
        "--dangerously-bypass-approvals-and-sandbox, pi has no sandbox",
        "Codex: its native binary, as the npm launcher runs it (on Node < 23.11 the launcher "
        "stays a parent process, which would add Node's start-up and RSS)",
    ]
    failed = [r for r in rows if not r["ok"]]
    if failed:
        res["notes"].append(f"{len(failed)} runs had problems (left out of the medians): "
                            + "; ".join(f"{r['agent']} N={r['steps']}"
                                        f"{' resume' if r['resume'] else ''}: "
                                        f"{', '.join(r['problems'])}" for r in failed))
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    print_report(res)
    print(f"json: {a.json}")
    if not failed and os.environ.get("KEEP_WORK") != "1":
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"agent output kept in {work}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
