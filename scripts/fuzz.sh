#!/usr/bin/env bash
# Runs each cargo-fuzz (libFuzzer) target of fuzz/ for SECONDS (default 600), one
# after the other, and prints the figures of the run: target, seconds, executions,
# executions per second, corpus size, findings. Exits 1 if any target found a crash,
# a hang (-timeout), an out-of-memory or an oversized allocation (-rss_limit_mb,
# -malloc_limit_mb).
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (default: every target)
#
# - Installs cargo-fuzz (`cargo install cargo-fuzz --locked`) if it is missing.
# - libFuzzer needs nightly rustc flags (-Zsanitizer=address, coverage passes): it
#   uses the `nightly` rustup toolchain when one is installed, else the default
#   toolchain with RUSTC_BOOTSTRAP=1 (which lets stable rustc take -Z flags). Both
#   were tried on this machine (nightly 1.97.0 2026-05-19; stable 1.95.0 with
#   RUSTC_BOOTSTRAP=1): each builds and runs with AddressSanitizer, so no
#   `--sanitizer none` is needed. A first build takes ~5 to 15 minutes on 2 cores.
# - Builds the seed corpus first (scripts/fuzz-corpus.sh: the recorded provider
#   streams rebuilt as SSE, fixtures/sessions/*.jsonl); new inputs libFuzzer finds
#   join fuzz/corpus/TARGET, findings go to fuzz/artifacts/TARGET, logs to
#   fuzz/artifacts/TARGET.log and the figures to fuzz/last-run.txt. Inputs are at
#   most 64 KiB (-max_len; longer seeds are cut), so that each execution stays fast.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(jsonl_reader sse_parser mapper_openai mapper_anthropic mapper_responses)
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    fuzz=(cargo +nightly fuzz)
else
    echo "fuzz: no nightly toolchain; using $(rustc -V) with RUSTC_BOOTSTRAP=1" >&2
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
fi

"$root/scripts/fuzz-corpus.sh"
cd "$root/fuzz"
for t in "${targets[@]}"; do
    "${fuzz[@]}" build "$t"
done

summary="$root/fuzz/last-run.txt"
printf '%-18s %8s %12s %8s %16s %s\n' target seconds executions exec/s corpus findings | tee "$summary"
found=0
for t in "${targets[@]}"; do
    mkdir -p "artifacts/$t"
    log="artifacts/$t.log"
    before=$(ls "artifacts/$t" | wc -l)
    start=$(date +%s)
    set +e
    "${fuzz[@]}" run "$t" -- \
        -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -print_final_stats=1 >"$log" 2>&1
    status=$?
    set -e
    took=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    files=$(ls "corpus/$t" | wc -l)
    bytes=$(du -sb "corpus/$t" | cut -f1)
    new=$(( $(ls "artifacts/$t" | wc -l) - before ))
    if [ "$status" -ne 0 ] || [ "$new" -ne 0 ]; then
        found=1
        findings="$new (exit $status; see fuzz/$log)"
    else
        findings=0
    fi
    printf '%-18s %8s %12s %8s %16s %s\n' "$t" "$took" "${execs:-?}" "${speed:-?}" \
        "$files/${bytes}B" "$findings" | tee -a "$summary"
done
echo "fuzz: figures in fuzz/last-run.txt ($("${fuzz[@]}" --version), $(rustc +nightly -V 2>/dev/null || rustc -V))"
exit "$found"
