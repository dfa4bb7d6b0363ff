#!/usr/bin/env bash
# Runs the HPCC authors' analysis/fct_analysis.py, unchanged, on a fct.txt written by
# `sim-host sim ... --ns3-out DIR`: the slowdown per 5 % bin of the flows sorted by size.
#
#   HPCC_SRC=/path/to/High-Precision-Congestion-Control scripts/ns3-fct-analysis.sh DIR/fct.txt [ARGS]
#
# HPCC_SRC is a checkout of github.com/alibaba-edu/High-Precision-Congestion-Control (never
# vendored here; docs/sim.md names the commit read). The script is Python 2 (print statements,
# integer division): PYTHON2 names the interpreter (default: python2.7, then python2). It reads
# ../simulation/mix/PREFIX_CC.txt for each of the two CC names written into it, so the file is
# placed under both names in a temporary tree; the two columns of the output are then the same.
# ARGS go to the script (default `-T 100000000000`: every flow, whatever its end time; its own
# default keeps flows that end before 3 s, ns-3 time). Exit 2 when an input is missing.
set -euo pipefail
fct=${1:-}
if [[ -z "$fct" || ! -f "$fct" ]]; then
    echo "usage: HPCC_SRC=DIR $0 FCT_TXT [fct_analysis.py args]" >&2
    exit 2
fi
shift
src=${HPCC_SRC:-}
if [[ -z "$src" || ! -f "$src/analysis/fct_analysis.py" ]]; then
    echo "error: HPCC_SRC must name a checkout of alibaba-edu/High-Precision-Congestion-Control (no analysis/fct_analysis.py in '${src}')" >&2
    exit 2
fi
py=${PYTHON2:-}
if [[ -z "$py" ]]; then
    for c in python2.7 python2; do
        if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info[0] != 2)' 2>/dev/null; then
            py=$c
            break
        fi
    done
fi
if [[ -z "$py" ]]; then
    echo "error: no Python 2 interpreter (fct_analysis.py is Python 2); set PYTHON2" >&2
    exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/analysis" "$tmp/simulation/mix"
cp "$src/analysis/fct_analysis.py" "$tmp/analysis/"
for cc in hpccPint95ai50log1.05p1.000 hp95ai50; do
    cp "$fct" "$tmp/simulation/mix/fct_sim_$cc.txt"
done
if [[ $# -eq 0 ]]; then
    set -- -T 100000000000
fi
cd "$tmp/analysis"
"$py" fct_analysis.py -p fct_sim "$@"
