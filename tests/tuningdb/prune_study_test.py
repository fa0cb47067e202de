#!/usr/bin/env python3
"""bench/prune_study.py on synthetic exhaustive sweeps: a model that ranks the
fastest algorithm among its cheapest loses nothing at N = 3; the same sweep with
the model's order reversed (planted) loses, and the loss is the one expected;
a pruned run is refused."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
STUDY = os.path.join(HERE, "..", "..", "bench", "prune_study.py")


def run_json(path, times, prior, pruned=0):
    runs = [{"median_us": t, "pass": True, "prior_model_us": m} for t, m in zip(times, prior)]
    json.dump({"options": {"prune_algorithms": pruned},
               "steps": [{"kind": "contraction", "id": 0, "name": "bji,ui->bju",
                          "algorithm_runs": runs}]}, open(path, "w"))
    return path


def study(*args, ok=True):
    r = subprocess.run([sys.executable, STUDY, *args, "--n", "1,3,6"], capture_output=True,
                       text=True)
    if ok and r.returncode != 0:
        sys.exit(f"FAIL: {args}: exit {r.returncode}\n{r.stderr}")
    return r


def row(out, n):
    return next(l.split() for l in out.splitlines() if len(l.split()) == 7 and l.split()[0] == str(n))


def main():
    tmp = tempfile.mkdtemp(prefix="prune-study-")
    times = [10.0, 9.0, 8.0, 12.0, 7.0, 11.0]
    good = run_json(os.path.join(tmp, "good.json"), times, [10, 9, 8, 12, 7, 11])
    out = study(good).stdout
    # N = 3: entry 0 and the two the model prices lowest (7 and 8): the optimum.
    assert row(out, 3)[3] == "0.0" and row(out, 3)[6] == "1/1", out
    # N = 1: the default alone, 10 us against the optimum 7.
    assert row(out, 1)[2] == "10.0" and row(out, 1)[3] == "3.0", out
    # Planted: the model's order reversed keeps 12 and 11: the default's 10 wins.
    bad = run_json(os.path.join(tmp, "bad.json"), times, [1, 2, 3, 0, 5, 1])
    out = study(bad).stdout
    assert row(out, 3)[2] == "10.0" and row(out, 3)[6] == "0/1", out
    assert row(out, 6)[3] == "0.0", out  # every entry: the optimum again
    pruned = run_json(os.path.join(tmp, "pruned.json"), times, times, pruned=3)
    r = study(pruned, ok=False)
    assert r.returncode != 0 and "made with --prune-algorithms" in r.stderr, r.stderr
    print("prune_study_test: PASS")


if __name__ == "__main__":
    main()
