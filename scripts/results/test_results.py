"""Tests of scripts/results.py against a stand-in `sim-host` (no build, no simulation).

Run: python3 -m unittest discover -s scripts/results -p 'test_*.py'
"""

import contextlib
import importlib.util
import io
import os
import stat
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("results", os.path.join(os.path.dirname(HERE), "results.py"))
results = importlib.util.module_from_spec(spec)
spec.loader.exec_module(results)

# A stand-in for `sim-host sim SCENARIO ... --json --out DIR`: prints a report whose goodput is
# 1e9 × the seed (the seed defaults to 7), `jain` null, and writes the per-flow and time-series
# CSVs `--out` writes. It records each scenario file it was given.
FAKE = textwrap.dedent(
    """\
    #!/usr/bin/env python3
    import json, os, sys
    args = sys.argv[1:]
    scenario = args[1]
    out = args[args.index("--out") + 1]
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 7
    name = os.path.basename(scenario)[:-5]
    with open(os.path.join(os.environ["FAKE_LOG"]), "a") as log:
        log.write(open(scenario).read() + "\\n----\\n")
    if name == "broken":
        print("broken.toml: key `x`: bad", file=sys.stderr)
        sys.exit(2)
    with open(os.path.join(out, name + "_flows.csv"), "w") as f:
        f.write("flow,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown\\n0,1,0,1000,100,50,40,1.25\\n1,2,0,,0,,,\\n")
    with open(os.path.join(out, name + "_timeseries.csv"), "w") as f:
        f.write("t_ns,delivered_bytes,rate_flow0_bps\\n0,0,5\\n10,100,3\\n20,300,\\n30,600,9\\n")
    print(json.dumps({"scenario": name, "goodput_bps": 1e9 * seed, "jain": None,
                      "queue_peak": [2000, 30], "slowdown": [{"bucket": "<= 3kB", "flows": 4, "p99": 1.5}]}))
    """
)


class Fixture(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.scenarios = os.path.join(d, "scenarios")
        os.makedirs(self.scenarios)
        for name in ("a", "broken"):
            with open(os.path.join(self.scenarios, name + ".toml"), "w") as f:
                f.write('name = "a"\nseed = 3\n\n[topology]\nkind = "star"\nbuffer_bytes = 100\npfc_xoff_bytes = 60\n\n[[flows]]\nkind = "long"\n')
        self.fake = os.path.join(d, "sim-host")
        with open(self.fake, "w") as f:
            f.write(FAKE)
        os.chmod(self.fake, os.stat(self.fake).st_mode | stat.S_IEXEC)
        self.log = os.path.join(d, "log")
        os.environ["FAKE_LOG"] = self.log
        self.old = results.SCENARIOS, results.TEMPLATE, results.RUNNER
        results.SCENARIOS = self.scenarios
        results.TEMPLATE = os.path.join(d, "page.md.tmpl")
        work = os.path.join(d, "work")
        os.makedirs(work)
        results.RUNNER = results.Runner(self.fake, work, 2)

    def tearDown(self):
        results.SCENARIOS, results.TEMPLATE, results.RUNNER = self.old
        self.tmp.cleanup()

    def render(self, template):
        with contextlib.redirect_stderr(io.StringIO()):
            return results.render(template)

    def error(self, template):
        with self.assertRaises(results.ResultsError) as cm:
            self.render(template)
        return str(cm.exception)


class Rendering(Fixture):
    def test_placeholders_are_filled_from_the_runs_they_name(self):
        page = self.render("goodput {{ gb(F('a').goodput_bps, 1) }} Gb/s; seeds {{ lst([r.goodput_bps for r in S('a', (1, 2))], gb, 0) }}\n")
        self.assertEqual(page, "goodput 7.0 Gb/s; seeds 1, 2\n")

    def test_lines_of_lets_leave_no_blank_line(self):
        page = self.render("a\n{{ let x = F('a') }}{{ let y = x.goodput_bps }}\nb {{ gb(y) }}\n")
        self.assertEqual(page, "a\nb 7.0\n")

    def test_a_missing_json_field_names_the_template_line_the_run_and_the_field(self):
        msg = self.error("x\n{{ f(F('a', seed=2).counters.pfc_pauses) }}\n")
        self.assertIn("page.md.tmpl:2", msg)
        self.assertIn("a (fixed, seed 2)", msg)
        self.assertIn("`counters`", msg)

    def test_a_null_value_is_refused_not_printed(self):
        msg = self.error("{{ f(F('a').jain) }}")
        self.assertIn("null", msg)

    def test_a_false_assertion_stops_the_generation(self):
        msg = self.error("{{ check(F('a').goodput_bps < 1e9, 'slower than 1 Gb/s') }}")
        self.assertIn("slower than 1 Gb/s", msg)

    def test_a_failing_run_stops_the_generation_with_its_message(self):
        msg = self.error("{{ f(F('broken').goodput_bps) }}")
        self.assertIn("exited 2", msg)
        self.assertIn("key `x`: bad", msg)

    def test_a_placeholder_that_is_not_text_is_refused(self):
        msg = self.error("{{ F('a').goodput_bps }}")
        self.assertIn("not text", msg)

    def test_csv_figures_come_from_the_out_files(self):
        page = self.render(
            "{{ us(F('a').finish_ns()[0], 2) }} {{ f(at(F('a').ts('rate_flow0_bps'), 25), 0) }} "
            "{{ lst(goodput_windows(F('a'), 0, 30, 10), f, 0) }} {{ f(slow(F('a'), '<= 3kB'), 1) }}"
        )
        # flow 0 ends at 100 + 50 ns; the rate column is empty at 20 ns, so 25 ns reads 10 ns's 3;
        # 100, 200, 300 bytes per 10 ns = 80, 160, 240 Gb/s.
        self.assertEqual(page, "0.15 3 80000000000, 160000000000, 240000000000 1.5")


class Overrides(Fixture):
    def scenario_given(self):
        return open(self.log).read().split("\n----\n")[0]

    def test_overrides_replace_add_and_remove_keys(self):
        self.render("{{ f(F('a', toml={'seed': 9, 'send_jitter_ns': 1000, 'topology.pfc_xoff_bytes': None, 'topology.buffer_bytes': 5}).goodput_bps) }}")
        text = self.scenario_given()
        self.assertIn("send_jitter_ns = 1000\n", text)
        self.assertIn("seed = 9\n", text)
        self.assertNotIn("seed = 3", text)
        self.assertNotIn("pfc_xoff_bytes", text)
        self.assertIn("buffer_bytes = 5\n", text)

    def test_param_reads_the_scenario_as_overridden(self):
        page = self.render(
            "{{ i(F('a', toml={'topology.buffer_bytes': 5}).param('topology', 'buffer_bytes')) }} "
            "{{ i(F('a').param('topology', 'buffer_bytes')) }}"
        )
        self.assertEqual(page, "5 100")

    def test_removing_a_key_the_scenario_does_not_set_is_refused(self):
        msg = self.error("{{ f(F('a', toml={'topology.ecn_threshold_bytes': None}).goodput_bps) }}")
        self.assertIn("sets no `topology.ecn_threshold_bytes`", msg)


class Formatters(unittest.TestCase):
    def test_a_tiny_difference_does_not_print_as_zero(self):
        self.assertEqual(results.diff(1.0000001, 1.0, 3), "< 0.001 %")
        self.assertEqual(results.diff(2.0, 2.0), "identical")
        self.assertEqual(results.diff(1.02, 1.0), "2.00 %")

    def test_ranges_collapse_when_both_ends_print_alike(self):
        self.assertEqual(results.rng([1.01, 1.04], results.f, 1), "1.0")
        self.assertEqual(results.rng([1.0, 2.0], results.f, 1), "1.0–2.0")

    def test_signs_use_a_true_minus(self):
        self.assertEqual(results.sgn(-104.2), "\u2212104")
        self.assertEqual(results.sci(1.66e-6), "1.7e-6")

    def test_integers_are_grouped_by_thousands(self):
        self.assertEqual(results.i(1158), "1 158")
        with self.assertRaises(results.ResultsError):
            results.i(1.5)


class FlowPercentiles(unittest.TestCase):
    class Stub:
        _run = "stub"
        flows = [
            {"status": "finished", "size_bytes": 1000, "fct_ns": float(t)} for t in (5, 1, 4, 2, 3)
        ] + [
            {"status": "unfinished", "size_bytes": 1000, "fct_ns": None},
            {"status": "finished", "size_bytes": 9000, "fct_ns": 99.0},
        ]

    def test_fct_percentiles_are_nearest_rank_over_finished_flows_up_to_the_size(self):
        self.assertEqual(results.fct_p(self.Stub, 3000, 0.5), 3.0)
        self.assertEqual(results.fct_p(self.Stub, 3000, 0.99), 5.0)
        self.assertEqual(results.fct_p(self.Stub, 3000, 0.2), 1.0)
        self.assertEqual(results.fct_p(self.Stub, 10000, 0.99), 99.0)
        with self.assertRaises(results.ResultsError):
            results.fct_p(self.Stub, 500, 0.5)


class Check(unittest.TestCase):
    def test_a_stale_page_gives_a_diff_and_a_current_one_none(self):
        self.assertEqual(results.compare("a\nb\n", "a\nb\n", "docs/results.md"), "")
        delta = results.compare("a\n2.15\n", "a\n1.93\n", "docs/results.md")
        self.assertIn("-2.15", delta)
        self.assertIn("+1.93", delta)


if __name__ == "__main__":
    sys.exit(unittest.main())
