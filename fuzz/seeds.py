#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, made from the shipped fixtures (fixtures/).

    python3 fuzz/seeds.py OUTDIR

writes OUTDIR/<target>/<name> for every target in fuzz/Cargo.toml: the first rows of every
CSV fixture (with its comments and `# set` lines), the first records of every capture, the INT
blocks of the HPCC fixtures, and the fixtures' events in each API target's binary format (see
the header comment of each fuzz_targets/*.rs). Small on purpose: libFuzzer's default maximum
input length is the longest seed, and short seeds keep every execution fast.
"""

import os
import struct
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
ROWS = 40  # data rows per CSV seed
API_EVENTS = 48  # events per API seed


def write(out, target, name, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def csv_parts(path):
    """(comment and `# set` lines before the header, header, data rows)."""
    pre, header, rows = [], None, []
    for line in path.read_text().splitlines():
        if header is None:
            if line.startswith("#") or not line.strip():
                pre.append(line)
            else:
                header = line
        elif line and not line.startswith("#"):
            rows.append(line.split(","))
    return pre, header, rows


def sets(pre):
    out = {}
    for line in pre:
        body = line.lstrip("#").strip()
        if body.startswith("set "):
            k, v = body[4:].split("=", 1)
            out[k.strip()] = v.strip()
    return out


def csv_seeds(out):
    for kind in ("timely", "hpcc", "cats"):
        for f in sorted((FIX / kind).glob("*.csv")):
            pre, header, rows = csv_parts(f)
            text = "\n".join(pre + [header] + [",".join(r) for r in rows[:ROWS]]) + "\n"
            # option byte 0: free mode; a forced-mode copy with --out and --plot of the first few
            write(out, f"csv_{kind}", f.stem, b"\x00" + text.encode())
            short = "\n".join(pre + [header] + [",".join(r) for r in rows[:8]]) + "\n"
            write(out, f"csv_{kind}", f.stem + "-forced-out-plot", b"\x07" + short.encode())


def pcap_records(data, keep):
    """A classic pcap cut after `keep` records."""
    off = 24
    for _ in range(keep):
        if off + 16 > len(data):
            break
        (caplen,) = struct.unpack_from("<I", data, off + 8)
        off += 16 + caplen
    return data[:off]


def pcapng_blocks(data, keep):
    """A pcapng cut after its section and interface headers and `keep` packet blocks."""
    off, packets = 0, 0
    while off + 12 <= len(data) and packets < keep:
        kind, length = struct.unpack_from("<II", data, off)
        off += length
        packets += kind == 6
    return data[:off]


def capture_seeds(out):
    for f in sorted((FIX / "hpcc").glob("*.pcap*")):
        data = f.read_bytes()
        cut = pcapng_blocks if f.suffix == ".pcapng" else pcap_records
        opt = 8 if f.suffix == ".pcapng" else 0
        for keep in (6, 24):
            write(out, "pcap_reader", f"{f.name}-{keep}", bytes([opt]) + cut(data, keep))
        write(out, "pcap_reader", f"{f.name}-4-forced", bytes([opt | 7]) + cut(data, 4))


def int_seeds(out):
    seen = set()
    for f in sorted((FIX / "hpcc").glob("*.csv")):
        _, _, rows = csv_parts(f)
        for r in rows[:3]:
            b = bytes.fromhex(r[3])
            if b not in seen:
                seen.add(b)
                write(out, "int_parse", f"{f.stem}-{len(seen)}", b)


def ratio(v):
    """`# set` decimal or fraction → (num, den), as the host parses it."""
    if "/" in v:
        n, d = v.split("/")
        return int(n), int(d)
    fr = Fraction(v)
    return fr.numerator, fr.denominator


def timely_seeds(out):
    for f in sorted((FIX / "timely").glob("*.csv")):
        pre, _, rows = csv_parts(f)
        s = sets(pre)
        p = struct.pack(
            "<QQQQIII",
            int(s["line_rate_bps"]),
            int(s["min_rate_bps"]),
            int(s["max_rate_bps"]),
            int(s["init_rate_bps"]),
            int(s["t_low_ns"]),
            int(s["t_high_ns"]),
            int(s["min_rtt_ns"]),
        )
        p += struct.pack("<II", *ratio(s["alpha"])) + struct.pack("<II", *ratio(s["beta"]))
        p += struct.pack("<QII", int(s["delta_bps"]), int(s["hai_n"]), int(s["hai_after"]))
        p += struct.pack("<II", 4, 5)
        rows = rows[:API_EVENTS]
        t0 = int(rows[0][0])
        ev, prev = b"", t0
        for ts, tc, nb in rows:
            ts, tc, nb = int(ts), int(tc), int(nb)
            ev += struct.pack("<IqI", ts - prev, tc - ts, nb)
            prev = ts
        body = struct.pack("<Q", t0) + ev
        write(out, "timely_api", f.stem, bytes([4]) + p + body)
        write(out, "timely_api", f.stem + "-app-scaling", bytes([7]) + p + body)


def hpcc_seeds(out):
    for f in sorted((FIX / "hpcc").glob("*.csv")):
        pre, _, rows = csv_parts(f)
        s = sets(pre)
        num, den = ratio(s["eta"])
        p = struct.pack(
            "<QIIIBIQ",
            int(s["nic_rate_bps"]),
            int(s["base_rtt_ns"]),
            num,
            den,
            int(s["max_stage"]),
            int(s["w_ai_bytes"]),
            int(s["min_rate_bps"]),
        )
        ev = b""
        for _, ack, nxt, hexint in rows[:API_EVENTS]:
            b = bytes.fromhex(hexint)
            ev += bytes([len(b)]) + struct.pack("<II", int(ack), int(nxt)) + b
        write(out, "hpcc_api", f.stem, b"\x01" + p + ev)
    # Well-formed blocks with moving counters: 1 and 3 hops, light and heavy load.
    for nhop, dts, dtx, q in ((1, 1000, 60, 10), (3, 700, 120, 400)):
        evs = b""
        for i in range(API_EVENTS):
            e = bytes([0x80 | nhop | (0x40 if i == 0 else 0)])
            if i == 0:
                e += struct.pack("<H", 0x123)
            e += struct.pack("<HH", 1000, 1000)
            for h in range(nhop):
                e += bytes([4]) + struct.pack("<HHH", dts, dtx + 17 * (i % 5), q + h)
            evs += e
        write(out, "hpcc_api", f"moving-{nhop}hop", b"\x00" + evs)


def cats_seeds(out):
    d = {"mss_bytes": 1460, "snd_buf_bytes": 131072}
    high = [60000, 30000, 15000, 6000]
    mult = [0.25, 0.5, 1.0, 1.5, 2.0]
    for f in sorted((FIX / "cats").glob("*.csv")):
        pre, _, rows = csv_parts(f)
        s = sets(pre)
        h = [int(s.get(f"h{i}", high[i])) for i in range(4)]
        lo = [int(s.get(f"l{i}", h[i] // 2)) for i in range(4)]
        m = [round(float(s.get(f"m{i}", mult[i])) * 65536) for i in range(5)]
        p = struct.pack("<H", int(s.get("mss_bytes", d["mss_bytes"])))
        p += struct.pack("<4I", *h) + struct.pack("<4I", *lo) + struct.pack("<5I", *m)
        p += struct.pack("<I", int(s.get("snd_buf_bytes", d["snd_buf_bytes"])))
        ev = b""
        for _, event, prio, nbytes in rows[:API_EVENTS]:
            if event == "enqueue":
                ev += bytes([int(prio)]) + struct.pack("<I", int(nbytes))
            elif event == "ack":
                ev += bytes([5]) + struct.pack("<I", int(nbytes))
            else:
                ev += bytes([6])
        write(out, "cats_api", f.stem, b"\x01" + p + ev)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    csv_seeds(out)
    capture_seeds(out)
    int_seeds(out)
    timely_seeds(out)
    hpcc_seeds(out)
    cats_seeds(out)
    n = sum(1 for _ in out.rglob("*") if _.is_file())
    print(f"seeds: {n} files in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
