#!/usr/bin/env python3
"""Generates docs/results.md from scripts/results/results.md.tmpl and runs of `sim-host sim`.

Every number on the page is a placeholder `{{ EXPR }}` in the template: a Python expression over
the runs it names, formatted by the helpers below, e.g.

    {{ gb(F('hpcc_incast_16to1').goodput_bps, 1) }}        goodput of the fixed-point run, Gb/s
    {{ rng([r.jain for r in S('timely_converge_smooth', range(1, 6))], 3) }}

A run is `R(scenario, controller, seed=None, sets=None, toml=None)` (F = fixed, Ref = reference;
S(...) = one run per seed): `sim-host sim fixtures/scenarios/SCENARIO.toml --controller C
[--seed N] [--set K=V]... --json --out DIR`. `toml={'send_jitter_ns': 1000}` sets top-level scenario
keys that `--set` cannot reach (in a temporary copy of the scenario). A run's JSON fields are its
attributes (`r.counters.pfc_pauses`, `r.web.run.completion_ns[0]`); `r.flows` is its per-flow CSV,
`r.ts(COLUMN)` a column of its time series. A field the JSON does not have stops the generation
with an error naming the run and the field.

`{{ check(COND, 'what the prose asserts') }}` prints nothing and stops the generation when COND is
false: prose that asserts a direction ("lower", "yes") is checked against the run that fills it.

Usage: scripts/results.py           regenerate docs/results.md (written whole, or not at all)
       scripts/results.py --check   regenerate into memory and compare with docs/results.md:
                                    exit 0 when identical, 1 with a unified diff when not
Exit 2: a run failed, a field is missing, an assertion does not hold or the template is bad.
Runs go in parallel, one per core; the release build comes first (`cargo build --release -p sim-host`).
"""

import concurrent.futures
import csv
import difflib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(ROOT, "scripts", "results", "results.md.tmpl")
PAGE = os.path.join(ROOT, "docs", "results.md")
SCENARIOS = os.path.join(ROOT, "fixtures", "scenarios")
PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.S)


def _cell(v):
    """A CSV cell: a number where it reads as one, None when empty, else the text (`status`)."""
    if v in ("", None):
        return None
    try:
        return float(v)
    except ValueError:
        return v


class ResultsError(Exception):
    """A failure that stops the generation; the message names where."""


class Pending(Exception):
    """A placeholder needs runs that have not been made yet (they are queued)."""


# ---------------------------------------------------------------------------------------------
# Runs


class Field:
    """A JSON value reached from a run; a missing key names the run and the path."""

    def __init__(self, value, run, path):
        self._v, self._run, self._path = value, run, path

    def _wrap(self, value, path):
        if isinstance(value, (dict, list)):
            return Field(value, self._run, path)
        return value

    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        return self[key]

    def __getitem__(self, key):
        path = f"{self._path}[{key}]" if isinstance(key, int) else f"{self._path}.{key}"
        try:
            value = self._v[key]
        except (KeyError, IndexError, TypeError):
            raise ResultsError(f"{self._run}: the JSON of `sim-host sim` has no field `{path.lstrip('.')}`")
        return self._wrap(value, path)

    def __iter__(self):
        if not isinstance(self._v, list):
            raise ResultsError(f"{self._run}: `{self._path.lstrip('.')}` is not a list")
        return iter([self._wrap(v, f"{self._path}[{i}]") for i, v in enumerate(self._v)])

    def __len__(self):
        return len(self._v)


class Run(Field):
    def __init__(self, key, data, outdir):
        super().__init__(data, describe(key), "")
        self.key = key
        self.scenario = key[0]
        self._outdir = outdir
        self._flows = None
        self._ts = None

    def _csv(self, suffix):
        path = os.path.join(self._outdir, f"{self.scenario}_{suffix}.csv")
        if not os.path.exists(path):
            raise ResultsError(f"{self._run}: `sim-host sim --out` wrote no {os.path.basename(path)}")
        with open(path, newline="") as f:
            rows = list(csv.DictReader(row for row in f if not row.startswith("#")))
        return [{k: _cell(v) for k, v in r.items()} for r in rows]

    @property
    def flows(self):
        """Rows of NAME_flows.csv: flow, src, dst, size_bytes, start_ns, fct_ns, ... (None = empty)."""
        if self._flows is None:
            self._flows = self._csv("flows")
        return self._flows

    def flow(self, i):
        for row in self.flows:
            if row.get("flow") == i:
                return row
        raise ResultsError(f"{self._run}: the per-flow CSV has no flow {i}")

    def finish_ns(self):
        """start + FCT of every finished sized flow."""
        ends = [r["start_ns"] + r["fct_ns"] for r in self.flows if r.get("fct_ns") is not None]
        if not ends:
            raise ResultsError(f"{self._run}: no sized flow finished")
        return ends

    def ts(self, column):
        """[(t_ns, value)] of one time-series column, empty cells left out."""
        if self._ts is None:
            self._ts = self._csv("timeseries")
        if not self._ts or column not in self._ts[0]:
            raise ResultsError(f"{self._run}: the time series has no column `{column}`")
        return [(r["t_ns"], r[column]) for r in self._ts if r[column] is not None]

    def ts_columns(self):
        self.ts("t_ns")
        return list(self._ts[0].keys())

    def param(self, *path):
        """A value of the scenario file (after the run's TOML overrides), e.g. param('params', 'base_rtt_ns')."""
        value = self_toml(self.key)
        for p in path:
            if not isinstance(value, dict) or p not in value:
                raise ResultsError(f"{self._run}: the scenario has no `{'.'.join(path)}`")
            value = value[p]
        return value


def describe(key):
    scenario, controller, seed, sets, toml = key
    s = f"{scenario} ({controller}"
    if seed is not None:
        s += f", seed {seed}"
    for k, v in sets + toml:
        s += f", {k}={v}"
    return s + ")"


def self_toml(key):
    scenario, _, _, _, toml = key
    with open(os.path.join(SCENARIOS, scenario + ".toml"), "rb") as f:
        data = tomllib.load(f)
    for k, v in toml:
        *tables, name = k.split(".")
        table = data
        for t in tables:
            table = table.setdefault(t, {})
        if v is None:
            table.pop(name, None)
        else:
            table[name] = v
    return data


class PendingRun:
    """A run not made yet: naming it queues it, using it stops the placeholder until the next round."""

    def __getattr__(self, key):
        raise Pending()

    def __getitem__(self, key):
        raise Pending()

    def __iter__(self):
        raise Pending()


class Runner:
    def __init__(self, binary, workdir, jobs):
        self.binary, self.workdir, self.jobs = binary, workdir, jobs
        self.done = {}
        self.queued = set()
        self.count = 0

    def get(self, key):
        """The run, or a stand-in that queues it and stops the placeholder on first use."""
        if key in self.done:
            return self.done[key]
        self.queued.add(key)
        return PendingRun()

    def run_queued(self):
        keys = sorted(self.queued, key=repr)
        self.queued = set()
        numbered = [(self.count + n, key) for n, key in enumerate(keys)]
        self.count += len(keys)
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            for key, run in zip(keys, pool.map(self._run, numbered)):
                self.done[key] = run

    def _run(self, numbered):
        number, key = numbered
        scenario, controller, seed, sets, toml = key
        outdir = os.path.join(self.workdir, f"run{number}")
        os.makedirs(outdir)
        path = os.path.join(SCENARIOS, scenario + ".toml")
        if not os.path.exists(path):
            raise ResultsError(f"{describe(key)}: no scenario {os.path.relpath(path, ROOT)}")
        if toml:
            path = self._override(path, toml, outdir, key)
        cmd = [self.binary, "sim", path, "--controller", controller, "--json", "--out", outdir]
        if seed is not None:
            cmd += ["--seed", str(seed)]
        for k, v in sets:
            cmd += ["--set", f"{k}={v}"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise ResultsError(f"{describe(key)}: `{' '.join(cmd)}` exited {p.returncode}:\n{p.stderr.strip()}")
        try:
            data = json.loads(p.stdout)
        except json.JSONDecodeError as e:
            raise ResultsError(f"{describe(key)}: the output of `sim-host sim --json` is not JSON ({e})")
        return Run(key, data, outdir)

    @staticmethod
    def _override(path, toml, outdir, key):
        """A copy of the scenario with keys replaced, added or (value None) removed: `KEY` is a
        top-level key, `TABLE.KEY` a key of `[TABLE]`."""
        with open(path) as f:
            text = f.read()
        # The copy lives elsewhere: its file paths (`cdf`, `page`) are made absolute.
        here = os.path.dirname(os.path.abspath(path))
        text = re.sub(
            r'^(\s*(?:cdf|page)\s*=\s*)"([^"]*)"',
            lambda m: m.group(1) + json.dumps(os.path.join(here, m.group(2))),
            text,
            flags=re.M,
        )
        for k, v in toml:
            table, _, name = k.rpartition(".")
            if table:
                head = re.search(rf"^\[{re.escape(table)}\]\s*$", text, re.M)
                if not head:
                    raise ResultsError(f"{describe(key)}: the scenario has no [{table}] table")
                start = head.end()
            else:
                start = 0
            nxt = re.compile(r"^\[", re.M).search(text, start)
            end = nxt.start() if nxt else len(text)
            line = "" if v is None else f"{name} = {json.dumps(v)}\n"
            m = re.compile(rf"^{re.escape(name)}\s*=.*\n", re.M).search(text, start, end)
            if m:
                text = text[: m.start()] + line + text[m.end() :]
            elif v is None:
                raise ResultsError(f"{describe(key)}: the scenario sets no `{k}` to remove")
            else:
                at = start + 1 if table else 0
                text = text[:at] + line + text[at:]
        copy = os.path.join(outdir, os.path.basename(path))
        with open(copy, "w") as f:
            f.write(text)
        return copy


RUNNER = None


def _key(scenario, controller, seed, sets, toml):
    if controller not in ("fixed", "reference"):
        raise ResultsError(f"{scenario}: controller must be fixed or reference, not {controller!r}")
    return (scenario, controller, seed, tuple(sorted((sets or {}).items())), tuple(sorted((toml or {}).items())))


def R(scenario, controller="fixed", seed=None, sets=None, toml=None):
    return RUNNER.get(_key(scenario, controller, seed, sets, toml))


def F(scenario, **kw):
    return R(scenario, "fixed", **kw)


def Ref(scenario, **kw):
    return R(scenario, "reference", **kw)


REPLAYS = {}


def Replay(kind, trace):
    """`sim-host replay KIND TRACE --json` (free mode): its one result (agreement, rel_err, ...)."""
    if (kind, trace) not in REPLAYS:
        cmd = [RUNNER.binary, "replay", kind, os.path.join(ROOT, trace), "--json"]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        what = f"replay {kind} {trace}"
        if p.returncode != 0:
            raise ResultsError(f"{what}: exited {p.returncode}:\n{p.stderr.strip()}")
        try:
            data = json.loads(p.stdout)
        except json.JSONDecodeError as e:
            raise ResultsError(f"{what}: the output of `--json` is not JSON ({e})")
        results = Field(data, what, "").results
        if len(results) != 1:
            raise ResultsError(f"{what}: {len(results)} results, expected 1")
        REPLAYS[(kind, trace)] = results[0]
    return REPLAYS[(kind, trace)]


def S(scenario, seeds, controller="fixed", sets=None, toml=None):
    """One run per seed, in the order given."""
    return [RUNNER.get(_key(scenario, controller, s, sets, toml)) for s in seeds]


# ---------------------------------------------------------------------------------------------
# Formatters: every one returns the text that goes on the page


def _num(x, what="value"):
    if isinstance(x, Field):
        raise ResultsError(f"{x._run}: `{x._path.lstrip('.')}` is not a number")
    if x is None:
        raise ResultsError(f"a {what} the page needs is null in the run's JSON")
    if isinstance(x, bool) or not isinstance(x, (int, float)) or math.isnan(x):
        raise ResultsError(f"a {what} the page needs is {x!r}, not a number")
    return x


def f(x, d=2):
    """x with d decimals."""
    return f"{_num(x):.{d}f}"


def jain(x, d=2):
    """Jain's index, or "—" when the run's is null: no long flow delivered a byte in its
    fairness window (the table's note says so)."""
    return "—" if x is None else f(x, d)


def i(x):
    """An integer, thousands separated by a space (1 158)."""
    x = _num(x)
    if x != int(x):
        raise ResultsError(f"{x} is not an integer")
    return f"{int(x):,}".replace(",", " ")


def gb(bps, d=1):
    return f(_num(bps) / 1e9, d)


def mb(bps, d=0):
    return f(_num(bps) / 1e6, d)


def kb(b, d=1):
    return f(_num(b) / 1e3, d)


def MB(b, d=2):
    return f(_num(b) / 1e6, d)


def us(ns, d=1):
    return f(_num(ns) / 1e3, d)


def ms(ns, d=1):
    return f(_num(ns) / 1e6, d)


def pct(x, d=1):
    """x (a fraction) as a percentage."""
    return f(100 * _num(x), d)


def rng(xs, fmt=f, *a):
    """'lo–hi' of the formatted minimum and maximum (one value when they print alike)."""
    xs = [_num(x) for x in xs]
    lo, hi = fmt(min(xs), *a), fmt(max(xs), *a)
    return lo if lo == hi else f"{lo}–{hi}"


def lst(xs, fmt=f, *a):
    # `jain` prints a null itself; every other formatter is given numbers only.
    return ", ".join(fmt(x if fmt is jain else _num(x), *a) for x in xs)


def mean(xs):
    return statistics.fmean(_num(x) for x in xs)


def sd(xs):
    return statistics.stdev(_num(x) for x in xs)


def reld(a, b):
    """|a − b| / |b|."""
    a, b = _num(a), _num(b)
    return 0.0 if a == b else abs(a - b) / abs(b)


def diff(a, b, d=2):
    """'identical' or the relative difference in percent ('0.02 %'; '< 0.01 %' when it rounds to 0)."""
    r = reld(a, b)
    if r == 0:
        return "identical"
    text = f"{100 * r:.{d}f}"
    return f"< {10.0 ** -d:.{d}f} %" if float(text) == 0 else f"{text} %"


def sgn(x, d=0):
    """x with its sign, a true minus (−104, +3)."""
    text = f"{_num(x):+.{d}f}"
    return text.replace("-", "\u2212")


def sci(x, d=1):
    """x in scientific notation without padding (1.7e-6)."""
    mant, exp = f"{_num(x):.{d}e}".split("e")
    return f"{mant}e{int(exp)}"


def at(series, t):
    """The last value of [(t, v)] at or before t."""
    before = [v for tt, v in series if tt <= t]
    if not before:
        raise ResultsError(f"the time series starts after {t} ns")
    return before[-1]


def first(series, cond, after=0):
    """The first t ≥ after whose value satisfies cond."""
    for t, v in series:
        if t >= after and cond(v):
            return t
    raise ResultsError(f"no point of the time series after {after} ns satisfies the condition")


def slow(run, bucket, p="p99"):
    """The slowdown percentile p of the size bucket labelled `bucket` (e.g. '<= 3kB')."""
    for b in run.slowdown:
        if b.bucket == bucket:
            if b[p] is None:
                raise ResultsError(f"{run._run}: bucket {bucket} has no {p} (no flow finished in it)")
            return b[p]
    raise ResultsError(f"{run._run}: no slowdown bucket {bucket!r}")


def fct_diff(a, b):
    """The largest relative FCT difference between two runs, flow by flow."""
    fa = {r["flow"]: r["fct_ns"] for r in a.flows if r.get("fct_ns") is not None}
    fb = {r["flow"]: r["fct_ns"] for r in b.flows if r.get("fct_ns") is not None}
    if not fa or fa.keys() != fb.keys():
        raise ResultsError(f"{a._run} and {b._run} did not finish the same flows")
    return max(reld(fa[k], fb[k]) for k in fa)


def goodput_windows(run, t0, t1, w):
    """Goodput (b/s) of all flows in consecutive windows of w ns from t0 to t1 (time series)."""
    series = run.ts("delivered_bytes")
    out, t = [], t0
    while t + w <= t1:
        out.append((at(series, t + w) - at(series, t)) * 8e9 / w)
        t += w
    if not out:
        raise ResultsError(f"{run._run}: no {w}-ns window between {t0} and {t1} ns")
    return out


def lowest_rates(run, t0, t1):
    """Per tracked flow, its lowest controller rate (b/s) between t0 and t1 (time series)."""
    cols = [c for c in (run.ts_columns()) if re.fullmatch(r"rate_flow\d+_bps", c)]
    if not cols:
        raise ResultsError(f"{run._run}: the time series tracks no flow's rate")
    out = []
    for c in cols:
        vs = [v for t, v in run.ts(c) if t0 <= t <= t1]
        if vs:
            out.append(min(vs))
    return out


def fct_p(run, max_bytes, p):
    """Nearest-rank percentile p of the FCT (ns) of the finished flows of at most max_bytes
    (per-flow CSV), as the slowdown buckets take theirs."""
    xs = sorted(
        r["fct_ns"] for r in run.flows if r.get("status") == "finished" and r["size_bytes"] <= max_bytes
    )
    if not xs:
        raise ResultsError(f"{run._run}: no finished flow of at most {max_bytes} B")
    return xs[max(1, math.ceil(p * len(xs))) - 1]


def nflows(run, bucket):
    """How many flows finished in the slowdown bucket labelled `bucket`."""
    for b in run.slowdown:
        if b.bucket == bucket:
            return b.flows
    raise ResultsError(f"{run._run}: no slowdown bucket {bucket!r}")


def traces(kind):
    """The CSV traces shipped in fixtures/KIND, sorted by name."""
    d = os.path.join(ROOT, "fixtures", kind)
    return sorted(n for n in os.listdir(d) if n.endswith(".csv"))


# ---------------------------------------------------------------------------------------------
# The NIC pacer in the loop: cc-pacer against the f64 reference pacer

PACING_SCENARIOS = ("hpcc_incast_7to1", "hpcc_websearch_50", "timely_converge", "timely_hai")


def pacing_runs():
    """Per scenario, controller and pacer side: the run (the pacer is the controller's side unless
    the scenario's `pacer` key is set). Every run is queued before any is used."""
    runs = {}
    for s in PACING_SCENARIOS:
        for c in ("fixed", "reference"):
            for p in ("fixed", "reference"):
                runs[s, c, p] = R(s, c, toml=None if p == c else {"pacer": p})
    return runs


def _pacing_metrics(r):
    """What a run's results are compared on: goodput, queue found p95/p99, RTT p99, Jain, the
    p99 slowdown of every size bucket, the finished flows."""
    return (
        r.goodput_bps,
        r.queue_seen_bytes[1] if r.queue_seen_bytes is not None else None,
        r.queue_seen_bytes[2] if r.queue_seen_bytes is not None else None,
        r.rtt_ns[2] if r.rtt_ns is not None else None,
        r.jain,
        tuple(b.p99 for b in r.slowdown),
        r.flows_finished,
    )


def pacing_table():
    """One row per scenario, controller and pacer: the segments, the pacing error against the
    controller's rate (paced pairs), the flow table, and the results the pacer could move."""
    runs = pacing_runs()
    head = (
        "| scenario | controller | pacer | segments | paced pairs | gap error vs the rate, mean | "
        "largest excess | most flows in one pacer | goodput Gb/s | queue found p95 / p99 KB | RTT p99 µs | "
        "Jain | same results as the other pacer |\n|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|\n"
    )
    rows = []
    for (s, c, p), r in runs.items():
        k = r.counters
        other = runs[s, c, "reference" if p == "fixed" else "fixed"]
        same = _pacing_metrics(r) == _pacing_metrics(other) and k.sent == other.counters.sent
        check(k.pacer_early == 0, f"{s}: no segment leaves before its pacing gap")
        check(k.pacer_gap_err_min >= -1e-12, f"{s}: no gap shorter than the rate asks")
        qs = r.queue_seen_bytes
        rows.append(
            f"| `{s}` | {c} | {'cc-pacer' if p == 'fixed' else 'f64 reference'} | {i(k.pacer_segments)} | "
            f"{i(k.pacer_paced_pairs)} | "
            + (f"{f(k.pacer_gap_err_sum / k.pacer_paced_pairs * 1e6, 1)} ppm" if k.pacer_paced_pairs else "none")
            + f" | {f(k.pacer_gap_excess_max_ns, 3)} ns | {i(k.pacer_max_flows)} | {gb(r.goodput_bps)} | "
            + (f"{kb(qs[1])} / {kb(qs[2])}" if qs is not None else "none")
            + f" | {us(r.rtt_ns[2]) if r.rtt_ns is not None else 'none'} | "
            + (f(r.jain, 3) if r.jain is not None else "none")
            + f" | {'yes' if same else 'no'} |"
        )
    return head + "\n".join(rows)


def pacing_summary():
    """Whether the two pacers give the same results, per scenario and controller, as a sentence."""
    runs = pacing_runs()
    pairs = [(s, c) for s in PACING_SCENARIOS for c in ("fixed", "reference")]
    same = [
        (s, c)
        for s, c in pairs
        if _pacing_metrics(runs[s, c, "fixed"]) == _pacing_metrics(runs[s, c, "reference"])
        and runs[s, c, "fixed"].counters.sent == runs[s, c, "reference"].counters.sent
    ]
    if len(same) == len(pairs):
        return (
            f"All {len(pairs)} (scenario, controller) pairs give the same goodput, queues, RTT, fairness, "
            "slowdowns and packets with either pacer: the two pacers hand out the same segments at the "
            "same times, so none of the fixed-point-vs-f64 differences in the tables above comes from "
            "pacing; all of it comes from the controllers."
        )
    differ = ", ".join(f"`{s}` ({c})" for s, c in pairs if (s, c) not in same)
    return (
        f"{len(same)} of the {len(pairs)} (scenario, controller) pairs give the same results with either "
        f"pacer; these differ: {differ}."
    )


def check(cond, what):
    if not cond:
        raise ResultsError(f"the page asserts '{what}', which this run does not show")
    return ""


NAMESPACE = {
    n: v
    for n, v in globals().items()
    if n in "R F Ref S Replay f jain i gb mb kb MB us ms pct rng lst mean sd reld diff sgn sci at first check slow nflows fct_p fct_diff goodput_windows lowest_rates traces".split()
}
NAMESPACE.update(pacing_table=pacing_table, pacing_summary=pacing_summary)
NAMESPACE.update(min=min, max=max, abs=abs, len=len, sum=sum, range=range, all=all, any=any, round=round, math=math)


# ---------------------------------------------------------------------------------------------


def line_of(template, pos):
    return template.count("\n", 0, pos) + template.count("\0", 0, pos) + 1


LET = re.compile(r"let\s+([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)(.*)", re.S)


def render(template):
    """Evaluates every placeholder, making the runs it needs (in parallel, one round per layer).

    `{{ let NAME = EXPR }}` binds NAME for the placeholders after it and prints nothing (a line
    holding only lets disappears with its newline)."""
    rel = os.path.relpath(TEMPLATE, ROOT)
    # The newline ending a line of lets becomes NUL (still counted as a line, dropped at the end).
    template = re.sub(r"(?m)^(?:[ \t]*\{\{\s*let\s.*?\}\}[ \t]*)+\n", lambda m: m.group(0)[:-1] + "\0", template)
    while True:
        out, pos, pending = [], 0, False
        namespace = dict(NAMESPACE)
        unbound = set()
        for m in PLACEHOLDER.finditer(template):
            out.append(template[pos : m.start()])
            pos = m.end()
            expr = m.group(1).strip()
            let = LET.fullmatch(expr)
            where = f"{rel}:{line_of(template, m.start())}: {{{{ {expr} }}}}"
            try:
                value = eval(let.group(2).strip() if let else expr, namespace)
            except Pending:
                pending = True
                if let:
                    unbound.add(let.group(1))
                continue
            except NameError as e:
                if e.name in unbound:
                    if let:
                        unbound.add(let.group(1))
                    continue
                raise ResultsError(f"{where}: {e}")
            except ResultsError as e:
                raise ResultsError(f"{where}: {e}")
            except Exception as e:
                raise ResultsError(f"{where}: {type(e).__name__}: {e}")
            if let:
                namespace[let.group(1)] = value
                continue
            if not isinstance(value, str):
                raise ResultsError(f"{where} gives {value!r}, not text (use a formatter)")
            out.append(value)
        out.append(template[pos:])
        if not pending:
            return "".join(out).replace("\0", "")
        if not RUNNER.queued:
            raise ResultsError(f"{rel}: placeholders wait for runs but none is queued")
        names = ", ".join(sorted(describe(k) for k in RUNNER.queued)) if len(RUNNER.queued) <= 3 else ""
        print(f"results: {len(RUNNER.queued)} runs {names}".rstrip(), file=sys.stderr)
        RUNNER.run_queued()


def compare(current, page, rel):
    """A unified diff from the committed page to the regenerated one; empty when they are equal."""
    return "".join(
        difflib.unified_diff(current.splitlines(True), page.splitlines(True), f"{rel} (committed)", f"{rel} (this run)")
    )


def main(argv):
    global RUNNER
    check_mode = argv[1:] == ["--check"]
    if argv[1:] not in ([], ["--check"]):
        print("usage: scripts/results.py [--check]", file=sys.stderr)
        return 2
    build = subprocess.run(["cargo", "build", "--release", "-q", "-p", "sim-host"], cwd=ROOT)
    if build.returncode != 0:
        print("results: cargo build --release -p sim-host failed", file=sys.stderr)
        return 2
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    binary = os.path.join(target, "release", "sim-host")
    workdir = tempfile.mkdtemp(prefix="results.")
    try:
        RUNNER = Runner(binary, workdir, os.cpu_count() or 1)
        try:
            with open(TEMPLATE) as f:
                template = f.read()
            page = render(template)
        except ResultsError as e:
            print(f"results: {e}", file=sys.stderr)
            return 2
        print(f"results: {RUNNER.count} runs", file=sys.stderr)
        rel = os.path.relpath(PAGE, ROOT)
        if check_mode:
            current = ""
            if os.path.exists(PAGE):
                with open(PAGE) as f:
                    current = f.read()
            delta = compare(current, page, rel)
            if not delta:
                print(f"results: {rel} matches a run", file=sys.stderr)
                return 0
            sys.stdout.write(delta)
            print(f"results: {rel} does not match a run; regenerate with python3 scripts/results.py", file=sys.stderr)
            return 1
        tmp = PAGE + ".tmp"
        with open(tmp, "w") as out:
            out.write(page)
        os.replace(tmp, PAGE)
        print(f"results: wrote {rel}", file=sys.stderr)
        return 0
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
