#!/usr/bin/python3
"""dmc tune's layout candidates end to end, without a GPU: what the bundles hold,
what dmrt-tune runs on them (through a fake dmrt-bench that records its arguments),
and dmc compile --db choosing a candidate's contraction layout from synthetic
dmrt-bench runs when it is faster and not when it is slower; and a transpose
candidate's (t<n>_<i>.dmlib): the selection inserts the transpose when the measured
transpose plus the contraction in its layout beat the default, not when they do not,
and never without a measured transpose.

Usage: layout_candidates_test.py --dmc BUILD/bin/dmc --dmc-db BUILD/bin/dmc-db
"""

import argparse
import json
import os
import re
import sys
import tempfile

from db_compile_test import TINY, priced_json, run


def tune_steps(bundle):
    """The steps a layout candidate's tune-steps lists, as {"k3", "c1"}."""
    steps = set()
    for line in open(os.path.join(bundle, "tune-steps")):
        key, value = line.split()
        if value != "-":
            steps |= {key[0] + x for x in value.split(",")}
    return steps


def layout_candidates(args, tmp):
    """dmc tune's layout candidates (l<n>_<i>.dmlib): one tensor of one contraction
    moved, references of their own for exactly the steps tune-steps lists, and
    dmrt-tune runs dmrt-bench on those steps only (with the algorithm sweep); dmc
    compile --db takes a candidate's contraction layout when its measured steps are
    faster (the bundle compiles in it, the contraction's form following), and keeps
    the default's when they are slower."""
    cands = os.path.join(tmp, "layout-cands")
    r = run([args.dmc, "tune", TINY, "--emit-candidates", cands, "--candidates", "1",
             "--layout-candidates", "3"])
    default = os.path.join(cands, "default.dmlib")
    names = sorted(n for n in os.listdir(cands) if n.startswith("l") and n.endswith(".dmlib"))
    assert names, f"no layout candidates in {os.listdir(cands)}"
    base = {t["name"]: t["dims"] for t in json.load(open(os.path.join(default, "config.json")))["tensors"]}
    for n in names:
        b = os.path.join(cands, n)
        steps = tune_steps(b)
        refs = {f[:-len(".safetensors")] for f in os.listdir(os.path.join(b, "reference"))}
        assert steps and refs == steps, f"{n}: references {refs} != tune-steps {steps}"
        dims = {t["name"]: t["dims"] for t in json.load(open(os.path.join(b, "config.json")))["tensors"]}
        moved = [t for t in dims if dims[t] != base[t]]
        assert len(moved) == 1, f"{n}: moved {moved}"
        assert any(s.startswith("c") for s in steps), f"{n}: no contraction among {steps}"
    assert len(names) == 3, names
    print(f"ok: {len(names)} layout candidate(s), each one tensor moved, references for its "
          "tune-steps only")
    log = os.path.join(tmp, "bench-args.txt")
    bench = os.path.join(tmp, "fake-bench.sh")
    open(bench, "w").write(f"#!/bin/sh\necho \"$@\" >> {log}\nexit 3\n")
    os.chmod(bench, 0o755)
    tune = os.path.join(os.path.dirname(args.dmc_db), "dmrt-tune")
    run([tune, cands, os.path.join(tmp, "fake.jsonl"), "--bench", bench], ok=False)
    lines = open(log).read().splitlines()
    for n in names:
        line = next(l for l in lines if l.split()[0].endswith("/" + n))
        steps = tune_steps(os.path.join(cands, n))
        ks = ",".join(sorted((x[1:] for x in steps if x[0] == "k"), key=int))
        cs = ",".join(sorted((x[1:] for x in steps if x[0] == "c"), key=int))
        assert (f"--kernel {ks} " in line) == bool(ks) and f"--contraction {cs} " in line \
            and "--algorithms all" in line and "--kernel all" not in line, (n, line, steps)
    c0 = next(l for l in lines if l.split()[0].endswith("/c0.dmlib"))
    # A knob candidate measures the kernels its tune-steps lists (--prune-kernels: those
    # whose configuration there is among the cost model's cheapest), never contractions.
    c0_kernels = ",".join(sorted((x[1:] for x in tune_steps(os.path.join(cands, "c0.dmlib"))
                                  if x[0] == "k"), key=int))
    assert f"--kernel {c0_kernels} " in c0 and "--contraction" not in c0, (c0, c0_kernels)
    print("ok: dmrt-tune measures a layout candidate's tune-steps only, contractions swept")
    cand = os.path.join(cands, names[0])
    cfg = json.load(open(os.path.join(cand, "config.json")))
    dims = {t["name"]: t["dims"] for t in cfg["tensors"]}
    tensor = next(t for t in dims if dims[t] != base[t])
    steps = tune_steps(cand)
    out = os.path.join(tmp, "layout-cand.dmlib")
    for what, us, taken in (("faster", 5.0, True), ("slower", 20.0, False)):
        db = os.path.join(tmp, f"layout-{what}.jsonl")
        run([args.dmc_db, "import", db, priced_json(default, db + ".d.json", 10.0, 10.0),
             "--bundle", default])
        run([args.dmc_db, "import", db, priced_json(cand, db + ".l.json", us, us, steps),
             "--bundle", cand])
        r = run([args.dmc, "compile", TINY, "-o", out, "--db", db])
        got = json.load(open(os.path.join(out, "config.json")))
        got_dims = {t["name"]: t["dims"] for t in got["tensors"]}
        # The report's lower bound is in the records' medians like the
        # prediction (the path's 1% tie-breaker is not a time): never above it.
        m = re.search(r"predicted ([0-9.]+) us, lower bound ([0-9.]+) us", r.stdout + r.stderr)
        assert m and float(m.group(2)) <= float(m.group(1)) + 1e-9, (what, m and m.groups())
        want = dims[tensor] if taken else base[tensor]
        if got_dims[tensor] != want:
            sys.exit(f"FAIL: {what}: {tensor} in {got_dims[tensor]!r}, expected {want!r}\n"
                     f"{r.stderr}")
        if taken:  # every contraction as the candidate has it: equation and form
            strip = lambda c: {k: v for k, v in c.items() if k != "algorithm"}
            assert [strip(c) for c in got["contractions"]] == \
                [strip(c) for c in cfg["contractions"]], (got["contractions"], cfg["contractions"])
    print(f"ok: {names[0]}'s {tensor} in {dims[tensor]} taken when its steps are faster, "
          f"{base[tensor]} kept when slower")
    transpose_candidates(args, tmp, cands, default)


def transpose_candidates(args, tmp, cands, default):
    """A transpose candidate keeps the tensor's layout and inserts a transpose before
    the contraction; its tune-steps are that kernel and the contraction. dmc compile
    --db inserts it (config.json transposes[], a transpose kernel in the bundle, the
    later kernels renamed) when transpose + contraction are faster than the default's
    contraction, keeps the default when slower, and without a transpose record never
    reads the operand in the other layout however fast the contraction is there."""
    names = sorted(n for n in os.listdir(cands) if n.startswith("t") and n.endswith(".dmlib"))
    assert len(names) == 3, names  # --layout-candidates 3: the first 3 of each kind
    cand = os.path.join(cands, names[0])
    cfg = json.load(open(os.path.join(cand, "config.json")))
    assert len(cfg["transposes"]) == 1, cfg["transposes"]
    want = cfg["transposes"][0]
    base = {t["name"]: t["dims"] for t in json.load(open(os.path.join(default, "config.json")))["tensors"]}
    assert {t["name"]: t["dims"] for t in cfg["tensors"]} == base, "a transpose candidate moved a tensor"
    steps = tune_steps(cand)
    manifest = json.load(open(os.path.join(cand, "manifest.json")))
    transposes = [k for k in manifest["kernels"] if k["name"] == "transpose"]
    assert len(transposes) == 1 and steps == {f"k{transposes[0]['id']}", want["contraction"]}, \
        (steps, transposes)
    out = os.path.join(tmp, "transpose-cand.dmlib")
    cases = (("faster", 1.0, 5.0, True), ("slower", 6.0, 5.0, False), ("unmeasured", None, 1.0, False))
    for what, transpose_us, contraction_us, taken in cases:
        db = os.path.join(tmp, f"transpose-{what}.jsonl")
        run([args.dmc_db, "import", db, priced_json(default, db + ".d.json", 10.0, 10.0),
             "--bundle", default])
        only = steps if transpose_us is not None else {want["contraction"]}
        run([args.dmc_db, "import", db,
             priced_json(cand, db + ".t.json", transpose_us or 0.0, contraction_us, only),
             "--bundle", cand])
        r = run([args.dmc, "compile", TINY, "-o", out, "--db", db])
        got = json.load(open(os.path.join(out, "config.json")))
        have = [(t["contraction"], t["operand"], t["tensor"], t["dims"]) for t in got["transposes"]]
        expect = [(want["contraction"], want["operand"], want["tensor"], want["dims"])] if taken else []
        if have != expect or f"{len(expect)} transpose(s) inserted" not in r.stderr:
            sys.exit(f"FAIL: {what}: transposes {have}, expected {expect}\n{r.stderr}")
        kernels = [k["name"] for k in json.load(open(os.path.join(out, "manifest.json")))["kernels"]]
        assert kernels.count("transpose") == len(expect), (what, kernels)
        assert {t["name"]: t["dims"] for t in got["tensors"]} == base, what
        if taken:  # the knobs of every kernel still name a kernel of the bundle
            entries = {k["entry"] for k in json.load(open(os.path.join(out, "manifest.json")))["kernels"]}
            assert {k["name"] for k in got["kernels"]} <= entries, (got["kernels"], entries)
            assert "(1.00 us)" in r.stderr, r.stderr
    print(f"ok: {names[0]}: the transpose of {want['tensor']} to {want['dims']} for "
          f"{want['contraction']} inserted when faster, not when slower nor unmeasured")



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dmc", required=True)
    ap.add_argument("--dmc-db", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dmc-layout-test-") as tmp:
        layout_candidates(args, tmp)
    print("layout_candidates_test: PASS")


if __name__ == "__main__":
    main()
