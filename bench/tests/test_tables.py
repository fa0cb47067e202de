#!/usr/bin/env python3
"""bench/table.py and bench/readme_table.py: JSON -> Markdown, the README's section."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import fixtures

import readme_table
import table


class Table(unittest.TestCase):
    def test_rows(self):
        text = table.table(fixtures.sample())
        lines = text.splitlines()
        self.assertEqual(lines[0], "| " + " | ".join(table.COLUMNS) + " |")
        self.assertEqual(len(lines), 2 + 4)
        self.assertEqual(lines[2], "| case-a | dmc | 2.000 | 1.500 | 1000 | 1500 | 2000 | "
                                   "1.00x | 1.00x | 1.00x |")
        self.assertEqual(lines[3], "| case-a | eager | 3.000 | 2.250 | 1500 | 1000 | 1333 | "
                                   "1.50x | 1.50x | 1.50x |")
        # A failure's reason in place of the figures, its '|' escaped.
        self.assertEqual(lines[4], "| case-a | compile | failed: BackendCompilerFailed: "
                                   "inductor \\| raised an error |  |  |  |  |  |  |  |")
        self.assertTrue(lines[5].startswith("| case-a | compile-cudagraphs | skipped: time budget"))
        for line in lines:  # every row has every column ('|' not preceded by a backslash)
            self.assertEqual(len(re.split(r"(?<!\\)\|", line)), len(table.COLUMNS) + 2, line)

    def test_fallback_source_is_marked(self):
        doc = fixtures.sample()
        doc["cases"][0]["systems"]["dmc"]["source"] = "dmc-run --bench (subprocess): ..."
        self.assertIn("| case-a | dmc * | 2.000 |", table.table(doc))
        self.assertIn("\\* case-a dmc: dmc-run --bench (subprocess): ....", table.notes(doc))

    def test_missing_ratio_and_memory(self):
        doc = fixtures.sample()
        eager = doc["cases"][0]["systems"]["eager"]
        eager["vs_dmc"], eager["peak_mib"] = None, None
        self.assertIn("| case-a | eager | 3.000 | 2.250 | - | 1000 | 1333 | - | - | - |",
                      table.table(doc))

    def test_document_and_cli(self):
        doc = fixtures.sample()
        doc["cases"][0]["systems"]["eager"]["warnings"] = ["kernels overlapped"]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bench.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            out = subprocess.run([sys.executable, os.path.join(fixtures.BENCH, "table.py"), path],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout, table.document(doc))
            self.assertIn("# dmc benchmark: NVIDIA H100 80GB HBM3, 2026-01-02", out.stdout)
            self.assertIn("Command: `python3 bench/run.py --out gpu-out/bench`", out.stdout)
            self.assertIn("Warning, case-a eager: kernels overlapped.", out.stdout)
            self.assertNotIn("Layers:", out.stdout)  # the sample records no module
            del doc["settings"]
            with open(path, "w") as f:
                json.dump(doc, f)
            out = subprocess.run([sys.executable, os.path.join(fixtures.BENCH, "table.py"), path],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 2)
            self.assertIn("not a dmc benchmark result (no 'settings')", out.stderr)


class Readme(unittest.TestCase):
    README = ("# dmc\n\n## Performance\n\n<!-- bench:begin -->\nold text\n<!-- bench:end -->\n"
              "\n## Next\n")

    def test_section(self):
        body = readme_table.section(fixtures.sample())
        self.assertIn("**NVIDIA H100 80GB HBM3** on 2026-01-02", body)
        self.assertIn("PyTorch 2.11.0, CUDA 13.0, cuBLASLt 13.1.0, Triton 3.5.0; dmc abc123", body)
        self.assertIn("```sh\npython3 bench/run.py --out gpu-out/bench\n```", body)
        self.assertIn(table.table(fixtures.sample()), body)

    def test_update_replaces_only_the_section(self):
        text = readme_table.update(self.README, "new\n")
        self.assertEqual(text, "# dmc\n\n## Performance\n\n<!-- bench:begin -->\nnew\n"
                               "<!-- bench:end -->\n\n## Next\n")
        self.assertEqual(readme_table.update(text, "new\n"), text)  # idempotent

    def test_markers_missing_or_doubled(self):
        for bad in ("# no markers\n", self.README + "<!-- bench:begin -->\n",
                    "<!-- bench:end -->\n<!-- bench:begin -->\n"):
            with self.assertRaises(ValueError):
                readme_table.update(bad, "new\n")

    def test_cli_update(self):
        with tempfile.TemporaryDirectory() as tmp:
            path, readme = os.path.join(tmp, "bench.json"), os.path.join(tmp, "README.md")
            with open(path, "w") as f:
                json.dump(fixtures.sample(), f)
            with open(readme, "w") as f:
                f.write(self.README)
            script = os.path.join(fixtures.BENCH, "readme_table.py")
            out = subprocess.run([sys.executable, script, path, "--update", readme],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            with open(readme) as f:
                self.assertIn("| case-a | dmc | 2.000 |", f.read())
            out = subprocess.run([sys.executable, script, path, "--update",
                                  os.path.join(tmp, "missing.md")], capture_output=True, text=True)
            self.assertEqual(out.returncode, 2)
            self.assertIn("readme_table:", out.stderr)

    def test_the_repository_readme_has_the_markers(self):
        with open(os.path.join(fixtures.REPO, "README.md")) as f:
            readme_table.update(f.read(), "x\n")


if __name__ == "__main__":
    unittest.main()
