#!/usr/bin/env python3
"""bench/chart.py: one bar per system that ran, its status where one did not.

Exits 77 (ctest: skipped) when matplotlib is not installed.
"""

import os
import sys
import tempfile
import unittest

import fixtures

try:
    import matplotlib
    matplotlib.use("Agg")
except ImportError:
    print("test_chart: matplotlib is not installed (Debian: python3-matplotlib); skipped")
    sys.exit(77)

import chart  # noqa: E402


def bars(axis):
    return [p.get_height() for p in axis.patches]


class Chart(unittest.TestCase):
    def test_bars_and_statuses(self):
        fig = chart.figure(fixtures.sample())
        wall, gpu = fig.axes
        # dmc and eager ran: their TFLOP/s; compile failed, compile-cudagraphs skipped.
        self.assertEqual(sorted(bars(wall)), [1000.0, 1500.0])
        self.assertEqual(sorted(bars(gpu)), [1333.3, 2000.0])
        self.assertEqual(sorted(t.get_text() for t in wall.texts), ["failed", "skipped"])
        self.assertEqual([t.get_text() for t in wall.get_legend().get_texts()],
                         ["dmc", "eager", "compile", "compile-cudagraphs"])
        self.assertIn("NVIDIA H100 80GB HBM3, 2026-01-02", fig._suptitle.get_text())

    def test_png(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bench.png")
            chart.render(fixtures.sample(), path)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_nothing_to_draw(self):
        with self.assertRaisesRegex(ValueError, "no case or system"):
            chart.figure(dict(fixtures.sample(), cases=[]))


if __name__ == "__main__":
    unittest.main()
