#!/usr/bin/env bash
# Speed of `sim-host sim` on the HPCC paper's fat tree (320 hosts, 56 switches) at 50 % load:
# fixtures/scenarios/hpcc_fat_websearch_50.toml (web search) and hpcc_fat_hadoop_50.toml
# (FB_Hadoop), each with the fixed-point controller and with the f64 reference, measured on
# this machine, with the arrivals lasting the whole run (the scenarios stop them earlier so that
# flows can finish). A benchmark, not a test: nothing fails on a time.
#
#   scripts/sim-speed.sh [--doc docs/sim.md] [--runs N]
#
# Each run is timed by `/usr/bin/time -v` (wall clock, CPU time, peak RSS) on the release build
# (`cargo build --release -p sim-host`, run here). Printed: a markdown table with the packet
# events, simulated time, wall and CPU seconds, peak RSS, M packet events per wall second, and
# how long one simulated second of that load would take at that speed (wall time × 1 s /
# simulated time, an estimate from a run of milliseconds), then the commit,
# the CPU and the load average around the runs, since the machine may be shared. With `--runs
# N` each run is repeated N times and the fastest is shown (default 1).
# `--doc FILE` also replaces the part of FILE between the lines `<!-- sim-speed:begin -->` and
# `<!-- sim-speed:end -->` with it (written whole, through a temporary file and a rename).
# SPEED_DURATION_NS overrides the simulated time (the table says what ran). Exit 2 on a bad argument, 1 when a run fails.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "sim-speed: error: $1" >&2; exit "${2:-2}"; }
# shellcheck source=lib/doc-markers.sh
source scripts/lib/doc-markers.sh

DOC=
RUNS=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --doc) [[ $# -ge 2 ]] || die "--doc needs a file"; DOC=$2; shift 2 ;;
        --runs) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || die "--runs needs a positive count"; RUNS=$2; shift 2 ;;
        *) die "unknown argument '$1' (usage: $0 [--doc FILE] [--runs N])" ;;
    esac
done
[[ -n "$DOC" ]] && doc_markers_check "$DOC" sim-speed
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (Debian package 'time')"
if [[ -n "${SPEED_DURATION_NS:-}" ]]; then
    [[ "$SPEED_DURATION_NS" =~ ^[1-9][0-9]*$ ]] || die "SPEED_DURATION_NS must be a positive integer (ns)"
fi

cargo build --release -q -p sim-host
BIN=$PWD/target/release/sim-host
WORK=$(mktemp -d)
trap 'rm -rf "$WORK" fixtures/scenarios/.speed_*.toml' EXIT

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
for sc in hpcc_fat_websearch_50 hpcc_fat_hadoop_50; do
    # A copy beside the original (the CDF path is relative to the scenario) whose arrivals last
    # the whole run, so that the load is steady to its end.
    src=fixtures/scenarios/.speed_$sc.toml
    cp "fixtures/scenarios/$sc.toml" "$src"
    if [[ -n "${SPEED_DURATION_NS:-}" ]]; then
        sed -i -E "s/^duration_ns = .*/duration_ns = $SPEED_DURATION_NS/" "$src"
    fi
    dur=$(sed -n -E 's/^duration_ns = ([0-9_]+).*/\1/p' "$src" | tr -d _)
    sed -i -E "s/^stop_ns = .*/stop_ns = $dur/" "$src"
    for ctl in fixed reference; do
        best=
        for ((r = 0; r < RUNS; r++)); do
            out=$WORK/$sc-$ctl-$r
            mkdir -p "$out"
            /usr/bin/time -v -o "$out/time.txt" "$BIN" sim "$src" --controller "$ctl" --out "$out" \
                >"$out/stdout.txt" 2>"$out/stderr.txt" || die "$sc ($ctl) failed: $(tail -3 "$out/stderr.txt")" 1
            wall=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['wall_s'])" "$out"/*_summary.json)
            if [[ -z "$best" ]] || python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$wall" "$best_wall"; then
                best=$out
                best_wall=$wall
            fi
        done
        rows+=("$(python3 - "$best" "$sc" "$ctl" <<'EOF'
import glob, json, re, sys
out, sc, ctl = sys.argv[1:]
s = json.load(open(glob.glob(out + '/*_summary.json')[0]))
t = open(out + '/time.txt').read()
cpu = sum(float(re.search(p + r': ([0-9.]+)', t).group(1)) for p in ('User time \\(seconds\\)', 'System time \\(seconds\\)'))
rss_mb = int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', t).group(1)) / 1024
ev = s['counters']['packet_events']
if ev == 0:
    sys.exit(f'sim-speed: error: {sc} ({ctl}) reports no packet event')
sim_s = s['sim_ns'] / 1e9
per_sim_s_min = s['wall_s'] / sim_s / 60
print(f"| `{sc}` | {ctl} | {ev / 1e6:.1f} M | {s['sim_ns'] / 1e6:.1f} ms | {s['wall_s']:.2f} s | {cpu:.2f} s "
      f"| {rss_mb:.1f} MB | {ev / s['wall_s'] / 1e6:.2f} M | {per_sim_s_min:.0f} min |")
EOF
)")
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
FRAG=$WORK/table.md
{
    echo "| scenario | controller | packet events | simulated | wall | CPU | peak RSS | packet events / wall s | 1 simulated s at this speed |"
    echo "|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Measured by \`scripts/sim-speed.sh\`$([[ $RUNS -gt 1 ]] && echo " (fastest of $RUNS runs each)") at $commit$dirty on $(nproc) × ${cpu_model:-unknown CPU}, one core per run; load average $load_before before the runs and $load_after after."
} >"$FRAG"
cat "$FRAG"

if [[ -n "$DOC" ]]; then
    doc_markers_write "$DOC" sim-speed "$FRAG"
    echo "sim-speed: wrote the table into $DOC"
fi
