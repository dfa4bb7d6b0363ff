"""Tests of scripts/doc_commands.py on a small repository with a stand-in `sim-host` (no build):
a failing command fails the check naming its file and line, skips are counted by reason, a stale
marker or an unmarked command block is an error, a console block's output is compared, and no
command writes into the repository.

Run: python3 -m unittest scripts/test_doc_commands.py
"""

import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "doc_commands.py")

# `sim-host ok` passes, `sim-host echo` prints "hello", anything else fails with exit 2.
FAKE = """#!/bin/sh
case "$1" in
  ok) exit 0 ;;
  echo) echo hello ;;
  *) echo "error: bad input $*" >&2; exit 2 ;;
esac
"""


class DocCommands(unittest.TestCase):
    def run_check(self, readme):
        """Runs the check on a repository whose README.md is `readme`: (exit code, output)."""
        root = self.tmp.name
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write(textwrap.dedent(readme))
        subprocess.run(["git", "init", "-q", root], check=True)
        subprocess.run(["git", "-C", root, "add", "README.md"], check=True)
        p = subprocess.run(
            [sys.executable, SCRIPT, "--root", root, "--bin", self.fake, "--timeout", "20"],
            capture_output=True, text=True,
        )
        return p.returncode, p.stdout + p.stderr

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bin = tempfile.TemporaryDirectory()
        self.fake = os.path.join(self.bin.name, "sim-host")
        with open(self.fake, "w") as f:
            f.write(FAKE)
        os.chmod(self.fake, os.stat(self.fake).st_mode | stat.S_IEXEC)

    def tearDown(self):
        self.tmp.cleanup()
        self.bin.cleanup()

    def test_a_failing_command_fails_the_check_naming_its_file_and_line(self):
        code, out = self.run_check(
            """\
            # t

            ```sh
            sim-host ok
            cargo run --release -p sim-host -- bad thing
            ```
            """
        )
        self.assertEqual(code, 1, out)
        self.assertIn("FAIL README.md:5", out)
        self.assertIn("exit 2", out)
        self.assertIn("error: bad input bad thing", out)
        self.assertIn("ok   README.md:4", out)
        self.assertIn("2 run (2 of the tool's, 0 helpers), 1 failed", out)

    def test_skips_are_counted_by_reason_and_passing_commands_pass(self):
        code, out = self.run_check(
            """\
            <!-- doc-commands: placeholder my-file.csv -->
            <!-- doc-commands: skip "sim-host slow" long: an hour -->
            ```sh
            touch written-here && sim-host ok   # in the copy, not the repository
            sim-host bad my-file.csv
            sim-host slow
            ```

            ```console
            $ sim-host echo
            hello
            ```
            """
        )
        self.assertEqual(code, 0, out)
        self.assertIn("skipped 1: placeholder my-file.csv (README.md:5)", out)
        self.assertIn("skipped 1: long: an hour (README.md:6)", out)
        self.assertIn("2 run (1 of the tool's, 1 helpers), 0 failed, 2 skipped", out)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "written-here")))

    def test_a_stale_marker_an_unmarked_block_and_other_output_are_errors(self):
        code, out = self.run_check(
            """\
            <!-- doc-commands: placeholder nothing-here -->
            ```sh
            sim-host ok
            ```

            ```
            sim-host ok
            ```

            ```console
            $ sim-host echo
            goodbye
            ```
            """
        )
        self.assertEqual(code, 1, out)
        self.assertIn("README.md:1: placeholder 'nothing-here': no command of the block below holds it", out)
        self.assertIn("README.md:7: a command in a code block without a language", out)
        self.assertIn("FAIL README.md:11", out)
        self.assertIn("its output is not the one the page shows", out)


if __name__ == "__main__":
    unittest.main()
