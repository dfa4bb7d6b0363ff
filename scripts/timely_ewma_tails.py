#!/usr/bin/env python3
"""Where a floored fixed-point EWMA of TIMELY's rtt_diff loses the sign the f64 reference keeps.

Reads a TIMELY trace (`t_send_ns,t_complete_ns,bytes`, `# set line_rate_bps=` honoured), measures
each RTT with timely-cc's integer convention (Q.4 ns, serialisation removed, saturating at
2^31 - 1), and runs the EWMA `rtt_diff = (1 - a)·rtt_diff + a·new_diff` for a = 7/8 side by side:
in f64 as the reference does, and floored with F fraction bits below Q.4 for each F in FS (F = 200
stands for the exact value). For every event with new_diff != 0 whose sign (rtt_diff > 0, the
`dec` branch) differs from the f64 reference's, it prints the event, new_diff, and the three
values in Q.4 units. docs/timely.md ("Why the EWMA has 64 fraction bits") quotes its output on
the 10 M-event NIC trace:

    cargo run --release -p sim-host --example timely_nic_trace -- 10000000 100000000000 7 > nic10m.csv
    python3 scripts/timely_ewma_tails.py nic10m.csv        # about a minute

The runs of identical RTTs (the residual countdown) are not modelled: only events with a new
RTT are compared, which is where the 64-bit form's differing branches start.
"""
import sys

FS = [32, 40, 48, 64, 200]
SAT = (1 << 31) - 1


def main(path: str) -> None:
    line_rate = 10_000_000_000
    d = {f: 0 for f in FS}
    ref = 0.0
    prev = None
    event = 0
    diffs = {f: [] for f in FS[:-1]}
    m = None
    with open(path) as trace:
        for row in trace:
            if row.startswith("# set line_rate_bps="):
                line_rate = int(row.split("=", 1)[1])
                continue
            if row.startswith("#") or row.startswith("t_send"):
                continue
            if m is None:
                m = (128_000_000_000 << 32) // line_rate
            ts, tc, b = (int(x) for x in row.split(","))
            if tc < ts:
                continue
            event += 1
            rtt = min(max(16 * (tc - ts) - (b * m >> 32), 0), SAT)
            if prev is None:
                prev = rtt
                continue
            nd = rtt - prev
            prev = rtt
            ref = 0.125 * ref + 0.875 * (nd / 16.0)
            for f in FS:
                # floor((1 - a)·d) + a·N with 1 - a = 2^-3: exact for the a·N term (F ≥ 3).
                d[f] = (d[f] >> 3) + ((7 * nd) << (f - 3))
            if nd == 0:
                continue
            for f in FS[:-1]:
                if (d[f] > 0) != (ref > 0):
                    diffs[f].append((event, nd, ref * 16, d[f] / 2.0**f, d[200] / 2.0**200))
    for f in FS[:-1]:
        print(f"F = {f}: {len(diffs[f])} sign differences at new_diff != 0")
        for ev, nd, r, fixed, exact in diffs[f]:
            print(
                f"  event {ev}: new_diff {nd}/16 ns; rtt_diff in Q.4 units: f64 {r:.3e}, "
                f"F = {f} {fixed:.3e}, exact {exact:.3e}"
            )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: timely_ewma_tails.py TRACE.csv")
    main(sys.argv[1])
