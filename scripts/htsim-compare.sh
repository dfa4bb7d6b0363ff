#!/usr/bin/env bash
# Speed of `sim-host sim` beside htsim (github.com/Broadcom/csg-htsim, its HPCC driver
# sim/datacenter/main_hpcc.cpp) on the same two workloads, measured on this machine:
#
#   (a) a 16-to-1 HPCC incast, 100 Gb/s, 1 us links (fixtures/scenarios/speed_hpcc_incast_16to1.toml)
#   (b) a 16-host permutation, every flow crossing the fabric (speed_hpcc_permutation.toml)
#
#   HTSIM_SRC=/path/to/csg-htsim [HTSIM_COMMIT=<sha>] scripts/htsim-compare.sh [--doc docs/sim.md]
#
# HTSIM_SRC is an htsim source tree (never vendored here): a git checkout, or an exported tree
# with HTSIM_COMMIT naming the commit it was exported from (the table names it). The tree is not
# modified: its sim/ directory is copied to a build directory (HTSIM_BUILD, default a temporary
# one, removed at the end) and built there with its own Makefiles (libhtsim.a, then
# datacenter/htsim_hpcc) three times:
#   * "as shipped": hpcc.cpp unchanged, which prints one line per ACK (`CWND1`/`CWND2`,
#     hpcc.cpp:194,199) to standard output, sent to /dev/null here;
#   * "silenced": the same with those two output statements deleted (main_hpcc has no switch for
#     them: its -log options only add loggers);
#   * "capped": silenced, and the window held at its initial value (T x line rate, hpcc.cpp:78)
#     after each ACK. As shipped, htsim's HPCC aborts on the permutation (the assertion at
#     hpcc.cpp:334, its window growing by one MSS per ACK on an uncongested path until the pacing
#     gap is 0); the permutation's htsim figures are the capped build's, and the script checks
#     that the shipped build still aborts there.
# Every build adds one statement after the run to main_hpcc.cpp that writes the sum of the
# sources' `_packets_sent` (data packets put on the wire, retransmissions included) to standard
# error: main_hpcc's own `New:` count reads `_new_packets_sent`, which hpcc.cpp never increments.
#
# Each run is timed by `/usr/bin/time -v` (wall clock and peak RSS); sim-host runs each scenario
# with the fixed-point controller and with the f64 reference (its own release build,
# target/release/sim-host, built here with `cargo build --release -p sim-host`). htsim runs the same
# source/destination pairs and simulated time with its hard-coded HPCC, 1000-byte MSS, 100 Gb/s,
# 1 us hops and its lossless (PFC) queues of HTSIM_QUEUE_PKTS packets (default 1000: with its
# default of 15 it prints a line per overflowing packet). Its only topology is a 3-tier fat tree
# of K^3/4 hosts: 54 for the incast (16 senders, one receiver), 16 for the permutation.
#
# Printed: a markdown table (data packets, wall seconds, peak RSS, data packets per wall second,
# sim-host's ratio to silenced (or capped) htsim and to htsim as shipped, and the ratio weighed by
# the mean number of links a packet crosses in each), the htsim commit and the compilers.
# `--doc FILE` also replaces the part of FILE between the lines `<!-- htsim-compare:begin -->` and
# `<!-- htsim-compare:end -->` with it (written whole, through a temporary file and a rename).
# SPEED_DURATION_NS overrides both scenarios' simulated time (for a quick check; the table says
# what ran). Exit 2 on a missing or unusable input, 1 when a simulator fails or reports no packet.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

die() { echo "htsim-compare: error: $1" >&2; exit "${2:-2}"; }
# shellcheck source=lib/doc-markers.sh
source scripts/lib/doc-markers.sh

DOC=
while [[ $# -gt 0 ]]; do
    case "$1" in
        --doc) [[ $# -ge 2 ]] || die "--doc needs a file"; DOC=$2; shift 2 ;;
        *) die "unknown argument '$1' (usage: HTSIM_SRC=DIR $0 [--doc FILE])" ;;
    esac
done
[[ -n "$DOC" ]] && doc_markers_check "$DOC" htsim-compare

SRC=${HTSIM_SRC:-}
[[ -n "$SRC" ]] || die "HTSIM_SRC is not set: point it at an htsim source tree (github.com/Broadcom/csg-htsim), e.g. HTSIM_SRC=\$HOME/csg-htsim $0"
for f in sim/Makefile sim/datacenter/Makefile sim/datacenter/main_hpcc.cpp sim/hpcc.cpp; do
    [[ -f "$SRC/$f" ]] || die "HTSIM_SRC=$SRC: no $f (not an htsim source tree)"
done
COMMIT=${HTSIM_COMMIT:-}
if [[ -z "$COMMIT" ]]; then
    COMMIT=$(git -C "$SRC" rev-parse HEAD 2>/dev/null) \
        || die "HTSIM_SRC=$SRC is not a git checkout: set HTSIM_COMMIT to the commit the tree was exported from"
    [[ -z $(git -C "$SRC" status --porcelain -- sim 2>/dev/null) ]] \
        || die "HTSIM_SRC=$SRC has local changes under sim/: the commit would not name what was measured"
fi
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (Debian package 'time')"
command -v make >/dev/null || die "make is missing"
command -v g++ >/dev/null || die "g++ is missing (htsim's Makefiles use it)"

INCAST=fixtures/scenarios/speed_hpcc_incast_16to1.toml
PERM=fixtures/scenarios/speed_hpcc_permutation.toml
for f in "$INCAST" "$PERM"; do [[ -f "$f" ]] || die "$f is missing"; done

if [[ -n "${HTSIM_BUILD:-}" ]]; then
    BUILD=$HTSIM_BUILD
    mkdir -p "$BUILD"
    [[ -z $(ls -A "$BUILD") ]] || die "HTSIM_BUILD=$BUILD is not empty"
else
    BUILD=$(mktemp -d "${TMPDIR:-/tmp}/htsim-compare.XXXXXX")
    trap 'rm -rf "$BUILD"' EXIT
fi
BUILD=$(cd "$BUILD" && pwd)
QPKTS=${HTSIM_QUEUE_PKTS:-1000}
[[ "$QPKTS" =~ ^[1-9][0-9]*$ ]] || die "HTSIM_QUEUE_PKTS=$QPKTS is not a positive integer"

# --- sim-host -----------------------------------------------------------------------------------
echo "htsim-compare: building sim-host (cargo build --release -p sim-host)" >&2
nice -n 10 cargo build --release -q -p sim-host
BIN=${CARGO_TARGET_DIR:-target}/release/sim-host

# --- htsim: copy, patch, build twice ---------------------------------------------------------------
build_htsim() { # $1 = variant directory name; the variant "silenced" starts from "shipped"'s tree
    local d=$BUILD/$1
    if [[ $1 == shipped ]]; then
        mkdir -p "$d"
        cp -a "$SRC/sim" "$d/"
        # Built from scratch: objects left in the source tree may come from other flags or code.
        find "$d/sim" \( -name '*.o' -o -name '*.a' \) -delete
        local m=$d/sim/datacenter/main_hpcc.cpp
        local anchor='    cout << "New: " << new_pkts << " Rtx: " << rtx_pkts << endl;'
        [[ $(grep -cxF "$anchor" "$m") == 1 ]] || die "$m: the line '$anchor' is not there exactly once (another htsim version?)"
        sed -i "/^    cout << \"New: \" << new_pkts << \" Rtx: \" << rtx_pkts << endl;\$/a\\
    { uint64_t sent = 0; for (size_t ix = 0; ix < hpcc_srcs.size(); ix++) sent += hpcc_srcs[ix]->_packets_sent; cerr << \"htsim-compare: data packets sent \" << sent << endl; }" "$m"
    elif [[ $1 == silenced ]]; then
        # Make rebuilds hpcc.o (its source is now newer) and relinks; nothing else changes.
        cp -a "$BUILD/shipped" "$d"
        local h=$d/sim/hpcc.cpp
        [[ $(grep -c 'cout << "CWND[12] "' "$h") == 2 ]] || die "$h: not exactly two per-ACK 'CWND1'/'CWND2' output lines (another htsim version?)"
        sed -i '/cout << "CWND[12] "/d' "$h"
        touch "$h"
    else
        # capped: silenced, and the window set after each ACK held at the initial window
        # (T x line rate), as in the HPCC paper; the line goes before processAck's pacing update,
        # the second of the two `_pacing_rate = ...` lines (the first is the constructor's).
        cp -a "$BUILD/silenced" "$d"
        local h=$d/sim/hpcc.cpp
        local line='    _pacing_rate = _cwnd * 8 * pow(10,12) / _T;'
        [[ $(grep -cxF "$line" "$h") == 2 ]] || die "$h: not exactly two lines '$line' (another htsim version?)"
        awk -v line="$line" '$0 == line && ++n == 2 { print "    { HPCCPacket::seq_t cap = _T * (double)_bitrate / pow(10,12) / 8; if (_cwnd > cap) _cwnd = cap; }" } { print }' "$h" >"$h.new"
        mv "$h.new" "$h"
    fi
    echo "htsim-compare: building htsim ($1) in $d/sim" >&2
    (cd "$d/sim" && nice -n 10 make -j2 libhtsim.a >"$d/build.log" 2>&1 && nice -n 10 make -C datacenter htsim_hpcc >>"$d/build.log" 2>&1) \
        || die "building htsim ($1) failed: see $d/build.log (set HTSIM_BUILD to keep the directory)"
    [[ -x "$d/sim/datacenter/htsim_hpcc" ]] || die "no $d/sim/datacenter/htsim_hpcc after the build"
}
build_htsim shipped
build_htsim silenced
build_htsim capped
CXX_VERSION=$(g++ --version | head -1)
RUSTC_VERSION=$(rustc --version)
SIMHOST_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && SIMHOST_COMMIT="$SIMHOST_COMMIT with uncommitted changes"

# --- one timed run -------------------------------------------------------------------------------
# Prints "wall_s rss_kb"; the command's standard output and error go to $2 and $3.
timed() { # $1 = label, $2 = stdout file, $3 = stderr file, rest = command
    local label=$1 out=$2 err=$3
    shift 3
    local tv=$BUILD/time.$$.txt
    if ! /usr/bin/time -v -o "$tv" "$@" >"$out" 2>"$err"; then
        echo "htsim-compare: $label failed; its standard error ends with:" >&2
        tail -5 "$err" >&2
        exit 1
    fi
    awk -F': ' '
        /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; wall = s }
        /Maximum resident set size/ { rss = $2 }
        END { if (wall == "" || rss == "") exit 1; printf "%s %s\n", wall, rss }' "$tv"
}

ROWS=$BUILD/rows.tsv
: >"$ROWS"
duration_ns() { # the scenario's duration_ns (underscores removed)
    local v
    v=$(sed -n 's/^duration_ns *= *\([0-9_]*\).*/\1/p' "$1" | tr -d _)
    [[ -n "$v" ]] || die "$1: no duration_ns line"
    echo "$v"
}

run_workload() { # $1 = workload label, $2 = scenario, $3 = htsim nodes, $4 = connection matrix body,
                  # $5 = the htsim build the ratio is taken against (silenced or capped),
                  # $6 = "htsim_links simhost_links": mean links crossed per data packet
    local label=$1 sc=$2 nodes=$3 pairs=$4 base=$5
    local hl=${6% *} sl=${6#* }
    local dur
    dur=$(duration_ns "$sc")
    if [[ -n "${SPEED_DURATION_NS:-}" ]]; then
        [[ "$SPEED_DURATION_NS" =~ ^[1-9][0-9]*$ ]] || die "SPEED_DURATION_NS=$SPEED_DURATION_NS is not a positive integer"
        dur=$SPEED_DURATION_NS
        local tmp_sc=$BUILD/$(basename "$sc")
        sed "s/^duration_ns *=.*/duration_ns = $dur/" "$sc" >"$tmp_sc"
        sc=$tmp_sc
    fi
    (( dur % 1000 == 0 )) || die "$sc: duration_ns $dur is not whole microseconds (htsim's -end is in us)"
    local end_us=$((dur / 1000))
    local cm=$BUILD/$label.cm
    local n_conns
    n_conns=$(printf '%s\n' "$pairs" | grep -c -- '->')
    { echo "Nodes $nodes"; echo "Connections $n_conns"; printf '%s\n' "$pairs"; } >"$cm"
    local v
    for v in shipped "$base"; do
        local r pk err=$BUILD/$label.$v.err
        # htsim writes idmap.txt into its working directory: run it in the build directory.
        local cmd=(env -C "$BUILD" "$BUILD/$v/sim/datacenter/htsim_hpcc" -nodes "$nodes" -tm "$cm" -end "$end_us"
            -linkspeed 100000 -hop_latency 1 -mtu 1000 -q "$QPKTS" -strat ecmp_host -paths 1
            -o "$BUILD/$label.$v.logout.dat")
        if [[ $v == shipped && $base == capped ]]; then
            # As shipped, htsim's HPCC aborts on this workload (its window grows without bound
            # on an uncongested path until the pacing gap is 0); the row says so, and the run
            # must still end that way, or the table would hide a change in htsim.
            # (through sh, so that the "Aborted" notice goes to the error file, not to the terminal)
            if sh -c '"$@" >/dev/null 2>"$0"' "$err" "${cmd[@]}" 2>/dev/null; then
                die "htsim as shipped, $label: ran to the end; the script expects it to abort (hpcc.cpp's 'next_send > eventlist().now()' assertion): revisit the capped build" 1
            fi
            grep -q "Assertion \`next_send > eventlist().now()' failed" "$err" \
                || die "htsim as shipped, $label: failed, but not with the expected assertion: $(tail -1 "$err")" 1
            local at
            at=$(sed -n 's/.*: \(hpcc\.cpp:[0-9]*\): .*/\1/p' "$err" | head -1)
            echo -e "$label\thtsim shipped\taborts at ${at:-?}\t$dur\t0 0\t$hl" >>"$ROWS"
            continue
        fi
        r=$(timed "htsim $v, $label" /dev/null "$err" "${cmd[@]}")
        pk=$(sed -n 's/^htsim-compare: data packets sent \([0-9]*\)$/\1/p' "$err")
        [[ -n "$pk" && "$pk" -gt 0 ]] || die "htsim $v, $label: no data packet count on standard error" 1
        echo -e "$label\thtsim $v\t$pk\t$dur\t$r\t$hl" >>"$ROWS"
    done
    local c
    for c in fixed reference; do
        local r pk
        r=$(timed "sim-host $c, $label" "$BUILD/$label.$c.txt" "$BUILD/$label.$c.err" "$BIN" sim "$sc" --controller "$c")
        pk=$(sed -n 's/^  packets: sent \([0-9]*\) = .*/\1/p' "$BUILD/$label.$c.txt")
        [[ -n "$pk" && "$pk" -gt 0 ]] || die "sim-host $c, $label: no 'packets: sent' line in its report" 1
        grep -q '^  invariants: all hold$' "$BUILD/$label.$c.txt" || die "sim-host $c, $label: invariants do not all hold" 1
        echo -e "$label\tsim-host $c\t$pk\t$dur\t$r\t$sl" >>"$ROWS"
    done
}

# Mean number of links a data packet crosses over the pairs "src->dst" on standard input:
# htsim's 3-tier fat tree of K^3/4 hosts (K/2 hosts per ToR, K^2/4 per pod: 2 links within a
# ToR, 4 within a pod, 6 through the core; fat_tree_topology.cpp), sim-host's star (2) and
# leaf-spine of H hosts per leaf (2 within a leaf, 4 through a spine).
mean_links() { # $1 = fattree K | star | leafspine H
    tr ' ' '\n' | sed -n 's/^\([0-9]*\)->\([0-9]*\)$/\1 \2/p' | awk -v kind="$1" -v arg="${2:-0}" '
        { s = $1; d = $2; n++
          if (kind == "fattree") { tor = arg / 2; pod = arg * arg / 4
              l += (int(s / tor) == int(d / tor)) ? 2 : (int(s / pod) == int(d / pod)) ? 4 : 6 }
          else if (kind == "star") l += 2
          else l += (int(s / arg) == int(d / arg)) ? 2 : 4 }
        END { if (n == 0) exit 1; printf "%.4g\n", l / n }'
}

incast_pairs=$(for i in $(seq 1 16); do echo "$i->0 start 0 id $i"; done)
perm_pairs=$(for i in $(seq 0 15); do echo "$i->$(((i + 4) % 16)) start 0 id $((i + 1))"; done)
# The scenarios must hold the same pairs as the connection matrices.
grep -q '^src = \[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16\]$' "$INCAST" && grep -q '^dst = 0$' "$INCAST" \
    || die "$INCAST: not the 16-to-1 incast (sources 1..16 to host 0) this script gives htsim"
[[ $(grep -c '^src = \[' "$PERM") == 16 ]] || die "$PERM: not 16 flow groups"
for i in $(seq 0 15); do
    grep -A1 -x "src = \[$i\]" "$PERM" | grep -qx "dst = $(((i + 4) % 16))" \
        || die "$PERM: no flow from host $i to host $(((i + 4) % 16)), the pair this script gives htsim"
done

grep -q '^kind = "star"$' "$INCAST" || die "$INCAST: not a star"
grep -q '^hosts_per_leaf = 4$' "$PERM" || die "$PERM: not 4 hosts per leaf"
INCAST_LINKS="$(echo "$incast_pairs" | mean_links fattree 6) $(echo "$incast_pairs" | mean_links star)"
PERM_LINKS="$(echo "$perm_pairs" | mean_links fattree 4) $(echo "$perm_pairs" | mean_links leafspine 4)"
run_workload "incast 16-to-1" "$INCAST" 54 "$incast_pairs" silenced "$INCAST_LINKS"
run_workload "permutation" "$PERM" 16 "$perm_pairs" capped "$PERM_LINKS"

# --- the table -----------------------------------------------------------------------------------
FRAG=$BUILD/fragment.md
{
    echo "Measured by \`scripts/htsim-compare.sh\` on $(date -u +%Y-%m-%d) ($(nproc) cores, $(uname -m); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)): htsim at commit \`$COMMIT\` built with its Makefiles by $CXX_VERSION (\`-O3\` library, \`-O2\` driver), sim-host at commit \`$SIMHOST_COMMIT\` in release by $RUSTC_VERSION. Both simulators are single-threaded and the runs follow one another; a packet is a data packet put on the wire (retransmissions included); the ratios are sim-host's packets per wall second over htsim's; htsim's packets cross more links (its only topology is a 3-tier fat tree), so the last column weighs each packet by the links it crosses."
    echo
    echo "| workload | simulator | data packets | simulated | wall | peak RSS | packets per wall s | × htsim (silenced) | × htsim as shipped | links per packet | × htsim per link crossed |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    awk -F'\t' '
        { split($5, t, " "); w[NR] = $1; s[NR] = $2; pk[NR] = $3; d[NR] = $4; wall[NR] = t[1]; rss[NR] = t[2]; ln[NR] = $6
          pps[NR] = ($3 !~ /^aborts/ && t[1] > 0) ? $3 / t[1] : 0
          if ($2 == "htsim silenced" || $2 == "htsim capped") { sil[$1] = pps[NR]; silln[$1] = $6 }
          if ($2 == "htsim shipped") shp[$1] = pps[NR] }
        END {
          for (i = 1; i <= NR; i++) {
            name = s[i]
            if (name == "htsim shipped") name = "htsim as shipped"
            if (name == "htsim silenced") name = "htsim, per-ACK output removed"
            if (name == "htsim capped") name = "htsim, per-ACK output removed, window capped"
            if (pk[i] ~ /^aborts/) {
              printf "| %s | %s | %s | %.3f s | — | — | — | — | — | %s | — |\n", w[i], name, pk[i], d[i] / 1e9, ln[i]
              continue
            }
            r1 = "—"; r2 = "—"; r3 = "—"
            if (s[i] ~ /^sim-host/ && sil[w[i]] > 0) {   # 0: a run shorter than the clock resolution
              r1 = sprintf("%.2f", pps[i] / sil[w[i]])
              r3 = sprintf("%.2f", pps[i] * ln[i] / (sil[w[i]] * silln[w[i]]))
              r2 = (shp[w[i]] > 0) ? sprintf("%.2f", pps[i] / shp[w[i]]) : "—"
            }
            printf "| %s | %s | %.2f M | %.3f s | %.1f s | %.1f MB | %.2f M | %s | %s | %s | %s |\n", w[i], name, pk[i] / 1e6, d[i] / 1e9, wall[i], rss[i] / 1024, pps[i] / 1e6, r1, r2, ln[i], r3
          }
        }' "$ROWS"
} >"$FRAG"
cat "$FRAG"

if [[ -n "$DOC" ]]; then
    doc_markers_write "$DOC" htsim-compare "$FRAG"
    echo "htsim-compare: $DOC updated" >&2
fi
