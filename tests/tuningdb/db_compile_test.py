#!/usr/bin/python3
"""`dmc-db import` and `dmc compile --db` end to end, without a GPU.

Compiles the tiny encoder twice (default knobs, --config-index 1), writes for each
bundle what `dmrt-bench BUNDLE --reference --json` writes on a GPU (times made up
here: every kernel of bundle b is faster than a's, except one whose check failed),
imports both, and compiles with --db: every kernel must get b's knobs except the
one whose b candidate was rejected, which keeps a's. Planted faults: a run without
--reference, a run of another model, a database of two devices without
--db-device, and the one-device database asked for another device must fail with
their messages; a record of another NVRTC version must not be used.

Usage: db_compile_test.py --dmc BUILD/bin/dmc --dmc-db BUILD/bin/dmc-db
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = os.path.join(HERE, "..", "lit", "dmc", "Inputs", "tiny-encoder.json")
# Fused attention (bf16, dropout): dmc compile --db prices it against the unfused path.
TGPT = os.path.join(HERE, "..", "lit", "dmc", "Inputs", "tiny-gpt-bf16-dropout.json")
DEVICE = {"ordinal": 0, "name": "NVIDIA H200", "sm_count": 132, "compute_capability": "9.0",
          "l2_bytes": 52428800, "memory_bytes": 1, "driver_version": 13000,
          "runtime_version": 13000, "mem_clock_khz": 3201000, "cublaslt_version": 130100,
          "copy_bytes": 1, "copy_gbs": 1.0}


def run(cmd, ok=True):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if ok and r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def write_run(bundle, manifest, path, steps, device=DEVICE, reference=True, model=None):
    """What `dmrt-bench --json` writes for a run of `steps` on `bundle` (its `manifest`)."""
    doc = {"bundle": bundle, "model": model or manifest["model"],
           "arch": manifest["arch"], "device": device, "options": {"reference": reference},
           "planted_fault": "none", "steps": steps}
    json.dump(doc, open(path, "w"))
    return path


def bench_json(bundle, path, us, failing=(), device=DEVICE, reference=True, model=None):
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    steps = []
    for k in manifest["kernels"]:
        passed = k["name"] not in failing
        steps.append({"kind": "kernel", "id": k["id"], "name": k["name"], "median_us": us,
                      "min_us": us * 0.9, "reps": 50, "checked": True, "pass": passed,
                      "outputs": [{"output": "out0", "pass": passed, "failing": 0 if passed else 7}]})
    for c in manifest["contractions"]:
        steps.append({"kind": "contraction", "id": c["id"], "name": c["equation"],
                      "skipped": "above the flop limit"})
    return write_run(bundle, manifest, path, steps, device, reference, model)


def algo(i):
    """A serialized cuBLASLt algorithm (runtime/format/GemmAlgoConfig.h), distinct per i."""
    return (f"cublaslt id={i} tile=18 stages=22 splitk=1 reduction=0 swizzle=0 custom=0 "
            "inner=0 cluster=0")


def sweep_json(bundle, path, runs_of):
    """dmrt-bench --contraction all --algorithms all on a bundle whose contractions'
    references were skipped: each contraction lists runs_of(id) as its algorithm_runs."""
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    steps = []
    for c in manifest["contractions"]:
        runs = runs_of(c["id"])
        steps.append({"kind": "contraction", "id": c["id"], "name": c["equation"],
                      "median_us": 10.0, "min_us": 9.0, "reps": 30, "checked": False,
                      "pass": True, "reference_skipped": "above the flop limit",
                      "algorithm_reps": 5, "algorithms_checked_against": "default",
                      "algorithm_runs": runs})
    return write_run(bundle, manifest, path, steps)


def contraction_algorithms(args, tmp):
    """Each contraction gets its fastest checked algorithm from a sweep: never one whose
    output was rejected, nor one within 1% of the default's time; config.json and the
    manifest carry it; a malformed algorithm in a run is an import error."""
    a = os.path.join(tmp, "alg-a.dmlib")
    run([args.dmc, "compile", TINY, "-o", a])
    ids = [c["id"] for c in json.load(open(os.path.join(a, "manifest.json")))["contractions"]]
    if len(ids) < 2:
        sys.exit("FAIL: the tiny encoder needs two contractions for this test")

    def runs_of(cid):
        def r(i, us, source="enumerated", passed=True, **extra):
            d = {"algorithm": algo(i), "description": f"algo {i}", "source": source,
                 "median_us": us, "min_us": us * 0.95, "checked": True, "pass": passed,
                 "worst_ratio": 0.1 if passed else 3.0}
            d.update(extra)
            if not passed:
                d["error"] = "out0: 9 elements out of bound"
            return d
        runs = [r(1, 10.0, "heuristic", heuristic_rank=0), r(2, 11.0, "heuristic", heuristic_rank=1),
                r(3, 2.0, passed=False),  # the fastest, but wrong
                {"algorithm": algo(4), "description": "algo 4", "source": "enumerated",
                 "median_us": 0, "min_us": 0, "checked": False, "pass": False,
                 "worst_ratio": 0, "error": "did not run"}]
        # The first contraction: algo 10 is 0.5% faster (noise: the default stays);
        # every other one: algo 100 + id is 40% faster.
        runs.append(r(10, 9.95) if cid == ids[0] else r(100 + cid, 6.0))
        return runs

    db = os.path.join(tmp, "alg.jsonl")
    out = run([args.dmc_db, "import", db, sweep_json(a, os.path.join(tmp, "alg.json"), runs_of),
               "--bundle", a]).stdout
    n = len(ids)
    want = f"0 kernel(s), {5 * n} contraction(s): {3 * n} ok, {2 * n} rejected"
    assert want in out, f"expected {want!r} in {out}"
    t = os.path.join(tmp, "alg-t.dmlib")
    r = run([args.dmc, "compile", TINY, "-o", t, "--db", db])
    config = {c["name"]: c["algorithm"] for c in
              json.load(open(os.path.join(t, "config.json")))["contractions"]}
    manifest = {c["id"]: c.get("algorithm") for c in
                json.load(open(os.path.join(t, "manifest.json")))["contractions"]}
    for cid in ids:
        want = "heuristic" if cid == ids[0] else algo(100 + cid)
        if config[f"c{cid}"] != want or manifest[cid] != want:
            sys.exit(f"FAIL: c{cid}: config {config[f'c{cid}']!r}, manifest {manifest[cid]!r}, "
                     f"expected {want!r}\n{r.stderr}")
    assert f"{n} of {n} contraction(s) measured, {n - 1} changed" in r.stderr, r.stderr
    assert "predicted contraction time" in r.stderr, r.stderr
    print(f"ok: --db gave {n - 1} contractions their fastest checked algorithm, kept the "
          "heuristic's within noise, never took the rejected faster one")
    # Planted: a malformed algorithm in a run.
    def bad(cid):
        runs = runs_of(cid)
        runs[1]["algorithm"] = "cublaslt id=2 tile=big"
        return runs
    expect_error([args.dmc_db, "import", os.path.join(tmp, "alg2.jsonl"),
                  sweep_json(a, os.path.join(tmp, "bad.json"), bad), "--bundle", a],
                 "algorithm_runs[1].algorithm: algorithm \"cublaslt id=2 tile=big\"",
                 "a malformed algorithm")
    # Planted: every algorithm rejected -> nothing changes.
    def wrong(cid):
        return [dict(x, **{"pass": False, "error": "out0: differs"}) for x in runs_of(cid)]
    db3 = os.path.join(tmp, "alg3.jsonl")
    run([args.dmc_db, "import", db3, sweep_json(a, os.path.join(tmp, "wrong.json"), wrong),
         "--bundle", a])
    expect_error([args.dmc, "compile", TINY, "-o", t, "--db", db3],
                 "the database has no usable record", "a database of rejected algorithms only")


def priced_json(bundle, path, kernel_us, contraction_us, only=None):
    """A dmrt-bench run that prices every step of `bundle` (or those of `only`, a set
    of "k<id>"/"c<id>"): each kernel checked at kernel_us, each contraction's sweep
    with the heuristic's best at contraction_us."""
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    steps = [{"kind": "kernel", "id": k["id"], "name": k["name"], "median_us": kernel_us,
              "min_us": kernel_us * 0.9, "reps": 50, "checked": True, "pass": True,
              "outputs": [{"output": "out0", "pass": True, "failing": 0}]}
             for k in manifest["kernels"] if only is None or f"k{k['id']}" in only]
    for c in manifest["contractions"]:
        if only is not None and f"c{c['id']}" not in only:
            continue
        run_ = {"algorithm": algo(1), "description": "algo 1", "source": "heuristic",
                "heuristic_rank": 0, "median_us": contraction_us, "min_us": contraction_us,
                "checked": True, "pass": True, "worst_ratio": 0.0}
        steps.append({"kind": "contraction", "id": c["id"], "name": c["equation"],
                      "median_us": contraction_us, "min_us": contraction_us, "reps": 30,
                      "checked": False, "pass": True, "reference_skipped": "above the flop limit",
                      "algorithm_reps": 5, "algorithms_checked_against": "default",
                      "algorithm_runs": [run_]})
    return write_run(bundle, manifest, path, steps)


def compare_paths(args, tmp, model, bundles, names, cases, is_default):
    """dmc compile --db prices the default path of `model` (bundles[0]) against the
    alternative (bundles[1]) from one database per case and compiles the faster; with
    the alternative unmeasured it keeps the default and says why; with the default
    unmeasured it takes the alternative, the only path priced, and says so. `names`: the choice
    and its two paths as the line spells them; `cases`: (name, the alternative's kernel
    us, its contraction us, the path wanted), the default's steps at 10 us each;
    `is_default(bundle)`: whether a compiled bundle is the default path's."""
    default, alternative = bundles
    what, default_name, alt_name = names
    out = os.path.join(tmp, "choice.dmlib")

    def database(name, alt_prices, default_priced=True):
        db = os.path.join(tmp, name + ".jsonl")
        if default_priced:
            run([args.dmc_db, "import", db, priced_json(default, db + ".d.json", 10.0, 10.0),
                 "--bundle", default])
        if alt_prices:
            run([args.dmc_db, "import", db, priced_json(alternative, db + ".a.json", *alt_prices),
                 "--bundle", alternative])
        return db

    for name, kernel_us, contraction_us, want in cases:
        db = database(f"{what}-{alt_name}-{kernel_us}", (kernel_us, contraction_us))
        r = run([args.dmc, "compile", model, "-o", out, "--db", db])
        line = next((l for l in r.stderr.splitlines()
                     if f"{what}: {default_name}" in l and alt_name in l), "")
        if f": {want} chosen" not in line:
            sys.exit(f"FAIL: {name}: expected {want} chosen, got {line!r}\n{r.stderr}")
        if is_default(out) != (want == default_name):
            sys.exit(f"FAIL: {name}: the bundle has kernels {kernels(out)}")
        print(f"ok: {name}: {line.split('dmc compile: ')[-1]}")
    r = run([args.dmc, "compile", model, "-o", out, "--db",
             database(f"{what}-{alt_name}-default-only", None)])
    assert f"{default_name} kept, not compared" in r.stderr and f"{alt_name} not priced" in r.stderr, \
        r.stderr
    assert is_default(out), kernels(out)
    print(f"ok: the {alt_name} path unmeasured: {default_name} kept, said why")
    r = run([args.dmc, "compile", model, "-o", out, "--db",
             database(f"{what}-{alt_name}-only", (10.0, 10.0), default_priced=False)])
    assert f"{default_name} not priced" in r.stderr and \
        f"{alt_name} chosen, the only path priced in full" in r.stderr, r.stderr
    assert not is_default(out), kernels(out)
    print(f"ok: the {default_name} path unmeasured: {alt_name} taken, said why")


def column_paths(args, tmp):
    """Column sums inside the row kernels (dm-fuse-column-reductions) against apart."""
    inside, apart = os.path.join(tmp, "col-in.dmlib"), os.path.join(tmp, "col-apart.dmlib")
    run([args.dmc, "compile", TINY, "-o", inside])
    run([args.dmc, "compile", TINY, "-o", apart, "--no-column-fusion"])
    assert "layernorm_dparams" not in kernels(inside) and "layernorm_dparams" in kernels(apart)
    compare_paths(args, tmp, TINY, (inside, apart), ("column sums", "in the row kernels", "apart"),
                  (("apart faster", 1.0, 10.0, "apart"),
                   ("inside faster", 50.0, 10.0, "in the row kernels")),
                  lambda b: "layernorm_dparams" not in kernels(b))


def prediction_written(args, tmp):
    """dmc compile --db writes the chosen path's prediction into config.json (for
    dmc-run --bench to compare with the measured step): the printed prediction, split by
    the steps' phases; with a step unmeasured there is none."""
    default = os.path.join(tmp, "pred-default.dmlib")
    run([args.dmc, "compile", TINY, "-o", default, "--no-gemm-addends"])
    manifest = json.load(open(os.path.join(default, "manifest.json")))
    db = os.path.join(tmp, "pred.jsonl")
    run([args.dmc_db, "import", db, priced_json(default, db + ".json", 10.0, 20.0),
         "--bundle", default])
    out = os.path.join(tmp, "pred.dmlib")
    r = run([args.dmc, "compile", TINY, "-o", out, "--db", db, "--no-gemm-addends"])
    line = next(l for l in r.stderr.splitlines()
                if l.startswith("dmc compile: the configuration written predicts "))
    printed = float(line.split()[6])
    p = json.load(open(os.path.join(out, "config.json")))["prediction"]
    assert p["device"] == DEVICE["name"] and p["database"] == db, p
    step = p["forward_us"] + p["backward_us"]
    assert abs(step - printed) < 0.05 and step > 0, (p, line)
    # Every step priced: kernels 10 us, contractions 20 us, each in its phase.
    want = {"forward": 0.0, "backward": 0.0}
    for k in manifest["kernels"]:
        want[k["phase"]] += 10.0
    for c in manifest["contractions"]:
        want[c["phase"]] += 20.0
    assert abs(p["forward_us"] - want["forward"]) < 1e-6 and \
        abs(p["backward_us"] - want["backward"]) < 1e-6, (p, want)
    print(f"ok: config.json's prediction: {p['forward_us']} + {p['backward_us']} = "
          f"{step} us, as printed")
    assert "calibration" not in p and "whole step: no step record" in r.stderr, (p, r.stderr)
    whole_step_calibration(args, tmp, default, db, step)
    # A step without a record: no prediction (and the bundle says nothing false).
    partial = os.path.join(tmp, "pred-partial.jsonl")
    only = {f"k{k['id']}" for k in manifest["kernels"][1:]} | \
        {f"c{c['id']}" for c in manifest["contractions"]}
    run([args.dmc_db, "import", partial, priced_json(default, partial + ".json", 10.0, 20.0, only),
         "--bundle", default])
    run([args.dmc, "compile", TINY, "-o", out, "--db", partial, "--no-gemm-addends"])
    assert "prediction" not in json.load(open(os.path.join(out, "config.json")))
    print("ok: a step without a record: no prediction in config.json")


def whole_step_calibration(args, tmp, default, db, default_sum):
    """A `step` record of the default configuration (dmc-run --bench --record; its key
    from dmc-db step) calibrates the prediction by its measured / summed ratio; one of
    another step, of another device or rejected does not."""
    key = json.loads(run([args.dmc_db, "step", default]).stdout)
    assert key["signature"].startswith("step ") and key["kind"] == "step", key
    template = json.loads(open(db).readline())
    def record(signature=key["signature"], us=1.25 * default_sum, device=None, status="ok"):
        rec = dict(template, kind="step", signature=signature, sizes=key["sizes"],
                   dtype=key["dtype"], layouts=[], knobs={}, algorithm="", epilogue="",
                   median_us=us, min_us=us * 0.99, samples=300, status=status)
        rec["software"] = dict(template["software"], nvrtc=key["nvrtc"], codegen=key["codegen"])
        if device:
            rec["device"] = dict(template["device"], name=device)
        if status == "rejected":
            rec["reason"] = "planted"
        return json.dumps(rec)
    def compile_with(lines, extra=()):
        cal = os.path.join(tmp, "cal.jsonl")
        with open(cal, "w") as f:
            f.write(open(db).read() + "".join(l + "\n" for l in lines))
        out = os.path.join(tmp, "cal.dmlib")
        r = run([args.dmc, "compile", TINY, "-o", out, "--db", cal, "--no-gemm-addends",
                 *extra])
        return r.stderr, json.load(open(os.path.join(out, "config.json")))["prediction"]
    log, p = compile_with([record()])
    cal = p.get("calibration")
    assert cal and abs(cal["default_measured_us"] - 1.25 * default_sum) < 1e-6 and \
        abs(cal["default_predicted_us"] - default_sum) < 1e-6, (p, log)
    assert "predictions calibrated x1.250" in log and \
        f"calibrated by the default's whole step x1.250: {1.25 * default_sum:.1f} us" in log, log
    print(f"ok: a step record of the default's whole step calibrates the prediction x1.250")
    planted = key["signature"][:-1] + ("0" if key["signature"][-1] != "0" else "1")
    for lines, what in (([record(signature=planted)], "another step's record"),
                        ([record(device="NVIDIA B200")], "another device's record"),
                        ([record(status="rejected")], "a rejected record")):
        log, p = compile_with(lines, ("--db-device", DEVICE["name"]))
        assert "calibration" not in p and "whole step: no step record" in log, (what, p, log)
        print(f"ok: {what} does not calibrate")


def addend_paths(args, tmp):
    """A kernel's sum of a contraction's result and another tensor read by cuBLASLt as
    C with beta 1 (dm-gemm-epilogues' accumulate, the default) against the sum left in
    its kernel (--no-gemm-addends: add_layernorm_dx_layernorm_dparams); dmc tune
    writes noaddend.dmlib for that path."""
    gemm, kern = os.path.join(tmp, "add-g.dmlib"), os.path.join(tmp, "add-k.dmlib")
    run([args.dmc, "compile", TINY, "-o", gemm])
    run([args.dmc, "compile", TINY, "-o", kern, "--no-gemm-addends"])
    epilogues = lambda b: [c["epilogue"] for c in
                           json.load(open(os.path.join(b, "manifest.json")))["contractions"]]
    assert epilogues(gemm).count("accumulate") == 1 and "accumulate" not in epilogues(kern), \
        (epilogues(gemm), epilogues(kern))
    assert "add_layernorm_dx_layernorm_dparams" in kernels(kern) \
        and "add_layernorm_dx_layernorm_dparams" not in kernels(gemm), (kernels(gemm), kernels(kern))
    compare_paths(args, tmp, TINY, (gemm, kern), ("addends", "in the GEMMs (C)", "in kernels"),
                  (("kernels faster", 1.0, 1.0, "in kernels"),
                   ("GEMMs faster", 50.0, 50.0, "in the GEMMs (C)")),
                  lambda b: "add_layernorm_dx_layernorm_dparams" not in kernels(b))


def bias_grad_paths(args, tmp):
    """Bias gradients folded into the GEMMs only where they save bytes (the default)
    against every one cuBLASLt can compute (dm-gemm-epilogues{bias-grads=all}): the
    column sums leave dgelu_reduce_sum, stack_reduce_sum and reduce_sum_add; and
    against none (--bias-grads none: each a column sum in a kernel); dmc tune writes
    bgrad.dmlib and nobgrad.dmlib for those paths."""
    saving, every = os.path.join(tmp, "bg-s.dmlib"), os.path.join(tmp, "bg-e.dmlib")
    run([args.dmc, "compile", TINY, "-o", saving])
    run([args.dmc, "compile", TINY, "-o", every, "--bias-grads", "all"])
    assert "dgelu_reduce_sum" in kernels(saving) and "dgelu" in kernels(every) \
        and "dgelu_reduce_sum" not in kernels(every), (kernels(saving), kernels(every))
    epilogues = [c.get("epilogue") for c in
                 json.load(open(os.path.join(every, "manifest.json")))["contractions"]]
    assert epilogues.count("bgradb") == 4, epilogues
    compare_paths(args, tmp, TINY, (saving, every),
                  ("bias gradients", "in the GEMMs where they save bytes",
                   "in every GEMM that computes them"),
                  (("every GEMM faster", 1.0, 10.0, "in every GEMM that computes them"),
                   ("saving bytes faster", 50.0, 10.0, "in the GEMMs where they save bytes")),
                  lambda b: "dgelu_reduce_sum" in kernels(b))
    # --bias-grads none: the bias gradient cuBLASLt computed goes back into a row
    # kernel (dm-fuse-column-reductions merges it) and no contraction has bgrad.
    none = os.path.join(tmp, "bg-n.dmlib")
    run([args.dmc, "compile", TINY, "-o", none, "--bias-grads", "none"])
    assert "layernorm_dx_layernorm_dparams_reduce_sum" in kernels(none), kernels(none)
    epilogues = [c.get("epilogue") for c in
                 json.load(open(os.path.join(none, "manifest.json")))["contractions"]]
    assert "bgradb" not in epilogues and "bgrada" not in epilogues, epilogues
    compare_paths(args, tmp, TINY, (saving, none),
                  ("bias gradients", "in the GEMMs where they save bytes", "in kernels"),
                  (("kernels faster", 1.0, 1.0, "in kernels"),
                   ("GEMMs faster", 50.0, 50.0, "in the GEMMs where they save bytes")),
                  lambda b: "layernorm_dx_layernorm_dparams_reduce_sum" not in kernels(b))
    expect_error([args.dmc, "compile", TINY, "-o", none, "--bias-grads", "some"],
                 "--bias-grads is 'some': expected saving, all or none", "a bad --bias-grads")
    cands = os.path.join(tmp, "bg-cands")
    r = run([args.dmc, "tune", TINY, "--emit-candidates", cands, "--candidates", "1",
             "--layout-candidates", "0"])
    for b in ("bgrad.dmlib", "nobgrad.dmlib", "noaddend.dmlib"):
        assert os.path.isdir(os.path.join(cands, b, "reference")), os.listdir(cands)
    # The paths share steps with default.dmlib: those reference files are copies
    # (the tune says how many), and each equals what a compile of that path alone
    # computes, byte for byte (a stale or misplaced copy would differ: every step's
    # inputs are drawn by its index).
    assert re.search(r"dmc tune: [1-9][0-9]* reference file\(s\) copied from an identical step",
                     r.stderr), r.stderr
    # apart.dmlib has more kernels than default.dmlib, so identical ops sit at other
    # indices there: a copy keyed without the index would differ.
    for b, flags in (("apart.dmlib", ["--no-column-fusion"]),
                     ("nobgrad.dmlib", ["--bias-grads", "none"]),
                     ("bgrad.dmlib", ["--bias-grads", "all"]),
                     ("noaddend.dmlib", ["--no-gemm-addends"])):
        alone = os.path.join(tmp, "alone-" + b)
        run([args.dmc, "compile", TINY, "-o", alone, "--reference", "--reference-samples",
             "16384"] + flags)
        mine, theirs = os.path.join(cands, b, "reference"), os.path.join(alone, "reference")
        assert sorted(os.listdir(mine)) == sorted(os.listdir(theirs)), (b, os.listdir(mine))
        for f in os.listdir(theirs):
            assert open(os.path.join(mine, f), "rb").read() == \
                open(os.path.join(theirs, f), "rb").read(), f"{b}: reference/{f} differs"
    assert "add_layernorm_dx_layernorm_dparams" in kernels(os.path.join(cands, "noaddend.dmlib"))
    assert "dgelu" in kernels(os.path.join(cands, "bgrad.dmlib"))
    assert "layernorm_dx_layernorm_dparams_reduce_sum" in kernels(os.path.join(cands, "nobgrad.dmlib"))
    print("ok: dmc tune wrote bgrad.dmlib, nobgrad.dmlib and noaddend.dmlib (with references) "
          "beside default.dmlib")


def attention_paths(args, tmp):
    """Fused attention against the unfused path; dmc tune writes unfused.dmlib for a
    model whose attention fuses."""
    fused, unfused = os.path.join(tmp, "tg-f.dmlib"), os.path.join(tmp, "tg-u.dmlib")
    run([args.dmc, "compile", TGPT, "-o", fused])
    run([args.dmc, "compile", TGPT, "-o", unfused, "--no-fused-attention"])
    if "attention" not in kernels(fused) or "attention" in kernels(unfused):
        sys.exit(f"FAIL: {TGPT} must fuse its attention: {kernels(fused)} / {kernels(unfused)}")
    compare_paths(args, tmp, TGPT, (fused, unfused), ("attention", "fused", "unfused"),
                  (("unfused faster", 1.0, 1.0, "unfused"), ("fused faster", 50.0, 50.0, "fused")),
                  lambda b: "attention" in kernels(b))
    cands = os.path.join(tmp, "tg-cands")
    run([args.dmc, "tune", TGPT, "--emit-candidates", cands, "--candidates", "1",
         "--layout-candidates", "0"])
    assert os.path.isdir(os.path.join(cands, "unfused.dmlib", "reference")), os.listdir(cands)
    assert "attention" not in kernels(os.path.join(cands, "unfused.dmlib"))
    print("ok: dmc tune wrote unfused.dmlib (with references) beside default.dmlib")


def dropout_paths(args, tmp):
    """Dropout keep bits saved for the backward (dm-save-dropout-bits) against drawn
    again, decided first; dmc tune writes drawn.dmlib."""
    saved, drawn = os.path.join(tmp, "tg-s.dmlib"), os.path.join(tmp, "tg-d.dmlib")
    run([args.dmc, "compile", TGPT, "-o", saved])
    run([args.dmc, "compile", TGPT, "-o", drawn, "--no-dropout-bits"])
    if not saved_bits(saved) or saved_bits(drawn):
        sys.exit(f"FAIL: {TGPT} must save keep bits only by default")
    compare_paths(args, tmp, TGPT, (saved, drawn),
                  ("dropout masks", "saved for the backward", "drawn again"),
                  (("drawn faster", 1.0, 10.0, "drawn again"),
                   ("saved faster", 50.0, 10.0, "saved for the backward")),
                  saved_bits)
    each_dropout(args, tmp, saved, drawn)
    cands = os.path.join(tmp, "tg-drawn-cands")
    run([args.dmc, "tune", TGPT, "--emit-candidates", cands, "--candidates", "1",
         "--layout-candidates", "0"])
    assert saved_bits(os.path.join(cands, "default.dmlib")), os.listdir(cands)
    assert not saved_bits(os.path.join(cands, "drawn.dmlib")), os.listdir(cands)
    print("ok: dmc tune wrote drawn.dmlib beside default.dmlib")


def each_dropout(args, tmp, saved, drawn):
    """Then each dropout alone: with dropout 1's kernels faster drawing (1 against
    10 us) and dropout 3's slower (20), the whole graph saves (4 x 10 < 2 x 1 + 2 x 20)
    and then dropout 1 alone is drawn; dropout 3 keeps its bits."""
    m = json.load(open(os.path.join(saved, "manifest.json")))
    name = {t["id"]: t["name"] for t in m["tensors"]}
    holding = lambda d: {f"k{k['id']}" for k in m["kernels"]
                         if any(name[t].startswith(f"dropout{d}.keep_bits")
                                for t in k["inputs"] + k["outputs"])}
    one, three = holding(1), holding(3)
    assert len(one) == 2 and len(three) == 2 and not one & three, (one, three)
    db = os.path.join(tmp, "each-dropout.jsonl")
    run([args.dmc_db, "import", db, priced_json(saved, db + ".s.json", 10.0, 10.0),
         "--bundle", saved])
    for ks, us in ((one, 1.0), (three, 20.0)):
        run([args.dmc_db, "import", db, priced_json(drawn, db + f".{us}.json", us, 10.0, ks),
             "--bundle", drawn])
    out = os.path.join(tmp, "each-dropout.dmlib")
    r = run([args.dmc, "compile", TGPT, "-o", out, "--db", db])
    lines = [l for l in r.stderr.splitlines() if "dropout" in l and " chosen" in l]
    want = ["dropout masks: saved for the backward 240.0 us", ": saved for the backward chosen",
            "dropout 1's mask: saved for the backward 240.0 us", "drawn again 222.0 us",
            ": drawn again chosen", "dropout 3's mask: saved for the backward 222.0 us",
            "drawn again 242.0 us", "saved for the backward chosen"]
    text = "\n".join(lines)
    missing = [w for w in want if w not in text]
    if missing:
        sys.exit(f"FAIL: each dropout alone: {missing} not in\n{r.stderr}")
    kept = [n for n in (t["name"] for t in json.load(open(os.path.join(out, "manifest.json")))
                        ["tensors"]) if n.endswith(".keep_bits")]
    assert kept == ["dropout3.keep_bits"], kept
    print("ok: each dropout alone: dropout 1 drawn again, dropout 3 saved")


def kernel_problems(bundle):
    """Each kernel's tuning problem, as tuning-db/Problem.h keys it: its name (the
    member ops) and the layouts, shapes and dtypes of its tensors."""
    m = json.load(open(os.path.join(bundle, "manifest.json")))
    tensors = {t["id"]: t for t in m["tensors"]}
    def problem(k):
        side = lambda ids: tuple((tensors[i]["dims"], tuple(tensors[i]["shape"]),
                                  tensors[i]["dtype"]) for i in ids)
        return (k["name"], side(k["inputs"]), side(k["outputs"]))
    return [problem(k) for k in m["kernels"]]


def path_knob_candidates(args, tmp):
    """dmc tune writes knob candidates of the kernels only a path bundle has
    (<path>-k<j>.dmlib: bundle j gives each of them its j-th other configuration):
    their tune-steps list only those kernels, which have those knobs while the
    others keep the path's defaults; their references are the path bundle's;
    --path-candidates 1 writes none, a negative is refused."""
    cands = os.path.join(tmp, "tg-path-knobs")
    run([args.dmc, "tune", TGPT, "--emit-candidates", cands, "--candidates", "3",
         "--layout-candidates", "0"])
    base = set(kernel_problems(os.path.join(cands, "default.dmlib")))
    drawn = kernel_problems(os.path.join(cands, "drawn.dmlib"))
    own = {i for i, p in enumerate(drawn) if p not in base}
    # The comparison can tell kernels apart: none of the default's is its own, and
    # the drawing kernels are drawn.dmlib's own.
    assert not [p for p in kernel_problems(os.path.join(cands, "default.dmlib")) if p not in base]
    assert own and len(own) < len(drawn), (own, len(drawn))
    bundles = sorted(b for b in os.listdir(cands) if re.fullmatch(r"drawn-k\d+\.dmlib", b))
    # --path-candidates 4: up to 3 others a kernel, fewer below --candidates 3.
    assert 1 <= len(bundles) <= 3, os.listdir(cands)
    # The drawing graph in configuration i, to compare knobs with.
    swept = {}
    for i in range(3):
        out = os.path.join(tmp, f"tg-drawn-{i}.dmlib")
        run([args.dmc, "compile", TGPT, "--no-dropout-bits", "--config-index", str(i), "-o", out])
        swept[i] = knobs(out)
    defaults = knobs(os.path.join(cands, "drawn.dmlib"))
    listed = set()
    refs = sorted(os.listdir(os.path.join(cands, "drawn.dmlib", "reference")))
    for b in bundles:
        steps = open(os.path.join(cands, b, "tune-steps")).read().split()
        assert steps[0] == "kernels" and steps[2:] == ["contractions", "-"], (b, steps)
        ks = {int(k) for k in steps[1].split(",")}
        assert ks <= own, f"{b}: measures {sorted(ks - own)}, which default.dmlib has too"
        assert sorted(os.listdir(os.path.join(cands, b, "reference"))) == refs, b
        got = knobs(os.path.join(cands, b))
        for n, name in enumerate(got):
            if n in ks:  # one of the configurations below --candidates, not the default
                assert got[name] != defaults[name] and got[name] in \
                    [swept[i][name] for i in range(3)], (b, name, got[name])
            else:
                assert got[name] == defaults[name], (b, name, got[name], defaults[name])
        listed |= ks
    # (An own kernel with no other configuration below --candidates is in none.)
    assert listed and listed <= own, (listed, own)
    assert any(re.fullmatch(r"nobgrad-k\d+\.dmlib|apart-k\d+\.dmlib", b)
               for b in os.listdir(cands)), os.listdir(cands)
    none = os.path.join(tmp, "tg-path-knobs-1")
    run([args.dmc, "tune", TGPT, "--emit-candidates", none, "--candidates", "1",
         "--layout-candidates", "0", "--path-candidates", "1"])
    assert not [b for b in os.listdir(none) if "-k" in b], os.listdir(none)
    expect_error([args.dmc, "tune", TGPT, "--dry-run", "--path-candidates", "-1"],
                 "--path-candidates must be >= 0", "dmc tune --path-candidates -1")
    print(f"ok: dmc tune wrote {len(bundles)} drawn-k<j>.dmlib measuring only drawn.dmlib's "
          f"{len(listed)} of {len(own)} own kernel(s) in other knobs, the rest at the path's "
          "defaults, with its references; none with --path-candidates 1")


def saved_bits(bundle):
    """Whether a bundle saves dropout keep bits (its `dropout<id>.keep_bits` tensors)."""
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    return any(t["name"].endswith(".keep_bits") for t in manifest["tensors"])


def kernels(bundle):
    return [k["name"] for k in json.load(open(os.path.join(bundle, "manifest.json")))["kernels"]]


def knobs(bundle):
    return {k["name"]: k["describe"] for k in json.load(open(os.path.join(bundle, "config.json")))["kernels"]}


def expect_error(cmd, text, what):
    r = run(cmd, ok=False)
    if r.returncode == 0 or text not in r.stderr:
        sys.exit(f"FAIL: {what}: expected an error with {text!r}, got exit {r.returncode}\n{r.stderr}")
    print(f"ok: {what}: {text}")


def layouts_by_shortest_path(args, tmp, db):
    """The global selection keeps layouts consistent: a fast record of a kernel writing
    the one free tensor of the tiny encoder with its column sums apart (t69, k8 -> k9,
    --no-column-fusion; --no-gemm-addends keeps the add in k8) in another layout is not taken while its reader has no record
    in that layout, and is once it has."""
    bundle = os.path.join(tmp, "apart.dmlib")
    run([args.dmc, "compile", TINY, "-o", bundle, "--no-column-fusion", "--no-gemm-addends"])
    run([args.dmc_db, "import", db, bench_json(bundle, os.path.join(tmp, "apart.json"), 10.0),
         "--bundle", bundle])
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    by_entry = {k["entry"]: k for k in manifest["kernels"]}
    tensor = {t["id"]: t for t in manifest["tensors"]}
    free = next(t for t in manifest["tensors"] if t["name"] == "t69")
    assert free["dims"] == "bji", free

    def variant(entry):
        k = by_entry[entry]
        ids = k["inputs"] + k["outputs"]
        dims = [tensor[i]["dims"] for i in ids]
        for line in open(db):
            r = json.loads(line)
            if r["layouts"] == dims and r["signature"].startswith("kernel " + k["name"] + "(") \
                    and r["status"] == "ok" and r["device"]["name"] == DEVICE["name"]:
                r["layouts"][ids.index(free["id"])] = "jbi"
                r["median_us"] = r["min_us"] = 0.5
                return json.dumps(r)
        sys.exit(f"FAIL: no record of {entry} to vary")

    t = os.path.join(tmp, "layout.dmlib")
    with open(db, "a") as f:
        f.write(variant("k8_add_layernorm_dx") + "\n")
    r = run([args.dmc, "compile", TINY, "-o", t, "--db", db, "--db-device", DEVICE["name"],
             "--no-column-fusion", "--no-gemm-addends"])
    dims = {x["name"]: x["dims"] for x in json.load(open(os.path.join(t, "config.json")))["tensors"]}
    assert dims["t69"] == "bji" and "0 layout(s) changed" in r.stderr, r.stderr
    print("ok: a faster writer of t69 in jbi is not taken while its reader cannot read jbi")
    with open(db, "a") as f:
        f.write(variant("k9_layernorm_dparams") + "\n")
    r = run([args.dmc, "compile", TINY, "-o", t, "--db", db, "--db-device", DEVICE["name"],
             "--no-column-fusion", "--no-gemm-addends"])
    dims = {x["name"]: x["dims"] for x in json.load(open(os.path.join(t, "config.json")))["tensors"]}
    assert dims["t69"] == "jbi" and "1 layout(s) changed" in r.stderr, r.stderr
    assert "global selection (shortest path, exact)" in r.stderr, r.stderr
    print("ok: with both kernels measured in jbi the shortest path moves t69 to jbi, "
          "and the bundle compiles in it")


def tune_command(args, tmp):
    """dmc tune: the dry run's counts, a missing mode, and the candidates (references
    shared) with the measurement handed to dmrt-tune, which needs a GPU."""
    r = run([args.dmc, "tune", TINY, "--dry-run"])
    assert "k0_bias" in r.stdout and "candidate bundle(s) and the default" in r.stdout, r.stdout
    expect_error([args.dmc, "tune", TINY], "give --dry-run, --emit-candidates DIR or --db DB",
                 "dmc tune without a mode")
    cands, db = os.path.join(tmp, "cands"), os.path.join(tmp, "tune.jsonl")
    r = run([args.dmc, "tune", TINY, "--emit-candidates", cands, "--candidates", "2", "--db", db,
             "--layout-candidates", "0", "--path-candidates", "1"], ok=False)
    refs = sorted(os.listdir(os.path.join(cands, "default.dmlib", "reference")))
    assert not os.path.exists(os.path.join(cands, "unfused.dmlib")), \
        "unfused.dmlib for a model without fused attention"
    for c in ("c0", "c1"):
        got = sorted(os.listdir(os.path.join(cands, c + ".dmlib", "reference")))
        assert got == refs and refs, f"{c}: references {got} != the default's {refs}"
    # The column sums apart (the alternative to dm-fuse-column-reductions), with
    # references of its own.
    assert os.path.isdir(os.path.join(cands, "apart.dmlib", "reference")), os.listdir(cands)
    assert "layernorm_dx_layernorm_dparams" in kernels(os.path.join(cands, "default.dmlib"))
    assert "layernorm_dparams" in kernels(os.path.join(cands, "apart.dmlib")), \
        kernels(os.path.join(cands, "apart.dmlib"))
    if r.returncode == 77:
        assert "no GPU on this machine: the candidates are in" in r.stderr, r.stderr
        print("ok: dmc tune: candidates written, no GPU here (exit 77, what to run said)")
    elif r.returncode == 0:
        shown = run([args.dmc, "db", "show", db]).stdout
        assert "records" in shown, shown
        print("ok: dmc tune: candidates measured on this machine's GPU")
    else:
        sys.exit(f"FAIL: dmc tune --db: exit {r.returncode}\n{r.stdout}{r.stderr}")
    resume(args, tmp, cands)


def resume(args, tmp, cands):
    """dmrt-tune --resume imports the run files an interrupted run left instead of
    measuring again (its dmrt-bench here is /bin/false: any measurement fails); a
    truncated run file is measured again; without --resume everything is."""
    tune = os.path.join(os.path.dirname(args.dmc_db), "dmrt-tune")
    names = ["default", "apart", "bgrad", "noaddend", "nobgrad", "c0", "c1"]
    # c0 faster, c1 slower than the default; apart's, bgrad's, noaddend's and
    # nobgrad's kernels are other problems or slower.
    for n, us in zip(names, [10.0, 11.0, 11.0, 11.0, 11.0, 9.0, 12.0]):
        bundle = os.path.join(cands, n + ".dmlib")
        bench_json(bundle, bundle + ".run.json", us)
    db = os.path.join(tmp, "resume.jsonl")
    r = run([tune, cands, db, "--resume", "--bench", "/bin/false"])
    assert r.stdout.count("not measured again") == 7 and "dmrt-bench exit" not in r.stdout, r.stdout
    # Best so far: only c0 improves (every kernel whose knobs differ from the default's).
    faster = [l for l in r.stdout.splitlines() if l.strip().startswith("faster: ")]
    assert len(faster) == 1 and faster[0].endswith("(c0.dmlib)"), r.stdout
    assert "10.0 -> 9.0 us" in faster[0] and "problem(s) measured" in r.stdout, r.stdout
    shown = run([args.dmc_db, "show", db]).stdout
    assert "records" in shown, shown
    again = run([tune, cands, db, "--resume", "--bench", "/bin/false"]).stdout
    assert again.count("0 appended") == 7, again
    print("ok: dmrt-tune --resume: 7 run files imported, nothing measured, nothing added twice")
    c1 = os.path.join(cands, "c1.dmlib.run.json")
    text = open(c1).read()
    open(c1, "w").write(text[: len(text) // 2])  # planted: a run file cut mid-write
    # Its records came in with the first import: once another bundle of this GPU is
    # imported, c1 has nothing left to measure; with --remeasure it is run (and fails).
    r = run([tune, cands, db, "--resume", "--bench", "/bin/false"])
    assert "measuring it again" in r.stdout and "7/7 c1.dmlib: nothing left to measure" \
        in r.stdout, r.stdout
    assert r.stdout.count("(resumed: not measured again)") == 6, r.stdout
    assert not os.path.exists(c1), "the cut run file must not outlive its measurement"
    open(c1, "w").write(text[: len(text) // 2])
    r = run([tune, cands, db, "--resume", "--remeasure", "--bench", "/bin/false"], ok=False)
    assert r.returncode == 1 and "measuring it again" in r.stdout, r.stdout
    assert r.stdout.count("not measured again") == 6 and "7/7 c1.dmlib," in r.stdout, r.stdout
    r = run([tune, cands, db, "--bench", "/bin/false"], ok=False)
    assert r.returncode == 1 and "not measured again" not in r.stdout, r.stdout
    assert "1/7 default.dmlib" in r.stdout and "2/7 apart.dmlib" in r.stdout \
        and "3/7 bgrad.dmlib" in r.stdout and "4/7 noaddend.dmlib" in r.stdout \
        and "5/7 nobgrad.dmlib" in r.stdout and "7/7 c1.dmlib" in r.stdout, r.stdout
    print("ok: dmrt-tune: a truncated run file, and every bundle without --resume, measured again")
    expect_error([tune, cands, db, "--prune-algorithms", "0"],
                 "--prune-algorithms needs an integer in [1, 100000]", "dmrt-tune pruning to none")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dmc", required=True)
    p.add_argument("--dmc-db", required=True)
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="dmc-db-test-")
    a, b = os.path.join(tmp, "a.dmlib"), os.path.join(tmp, "b.dmlib")
    run([args.dmc, "compile", TINY, "-o", a])
    run([args.dmc, "compile", TINY, "-o", b, "--config-index", "1"])
    ka, kb = knobs(a), knobs(b)
    differ = [n for n in ka if ka[n] != kb[n]]
    if len(differ) < 3:
        sys.exit(f"FAIL: --config-index 1 changes only {differ}: the test needs several")
    manifest = json.load(open(os.path.join(b, "manifest.json")))
    entry_of = {k["name"]: k["entry"] for k in manifest["kernels"]}
    rejected = next(k["name"] for k in manifest["kernels"] if entry_of[k["name"]] in differ)
    db = os.path.join(tmp, "db.jsonl")
    out = run([args.dmc_db, "import", db, bench_json(a, os.path.join(tmp, "a.json"), 10.0),
               "--bundle", a]).stdout
    assert "11 kernel(s), 0 contraction(s): 11 ok, 0 rejected; 18 step(s) not checked" in out, out
    out = run([args.dmc_db, "import", db, bench_json(b, os.path.join(tmp, "b.json"), 5.0,
                                                     failing=[rejected]), "--bundle", b]).stdout
    assert "10 ok, 1 rejected" in out, out
    again = run([args.dmc_db, "import", db, os.path.join(tmp, "a.json"), "--bundle", a]).stdout
    assert "0 appended" in again and "11 already there" in again, again
    shown = run([args.dmc, "db", "show", db]).stdout  # `dmc db` is dmc-db
    assert "16 records (1 rejected by the tuner)" in shown, shown  # distinct candidates
    # An NVRTC version nobody compiled with: such a record must never be chosen.
    lines = open(db).read().splitlines()
    alien = json.loads(lines[0])
    alien["software"]["nvrtc"] = "99.9"
    alien["median_us"] = alien["min_us"] = 0.001
    with open(db, "a") as f:
        f.write(json.dumps(alien) + "\n")
    t = os.path.join(tmp, "t.dmlib")
    r = run([args.dmc, "compile", TINY, "-o", t, "--db", db])
    kt = knobs(t)
    rejected_entry = entry_of[rejected]
    for n in ka:
        want = ka[n] if n == rejected_entry else kb[n]
        if kt[n] != want:
            sys.exit(f"FAIL: {n}: knobs {kt[n]!r}, expected {want!r}\n{r.stderr}")
    assert "1 other NVRTC (99.9)" in r.stderr and "1 rejected by the tuner" in r.stderr, r.stderr
    assert f"{len(differ) - 1} changed" in r.stderr, r.stderr
    print(f"ok: --db chose the faster knobs for {len(differ) - 1} kernels, kept the default "
          f"where the faster candidate was rejected ({rejected_entry}), ignored another NVRTC")
    # Planted faults.
    expect_error([args.dmc_db, "import", db, bench_json(a, os.path.join(tmp, "n.json"), 1.0,
                  reference=False), "--bundle", a], "did not check outputs", "run without --reference")
    expect_error([args.dmc_db, "import", db, bench_json(a, os.path.join(tmp, "m.json"), 1.0,
                  model="other"), "--bundle", a], "the run is of model \"other\"", "another model's run")
    expect_error([args.dmc, "compile", TINY, "-o", t, "--db", db, "--db-device", "NVIDIA A100"],
                 "no record of device \"NVIDIA A100\"", "an absent device")
    other = dict(DEVICE, name="NVIDIA H100 80GB HBM3")
    run([args.dmc_db, "import", db, bench_json(a, os.path.join(tmp, "o.json"), 1.0, device=other),
         "--bundle", a])
    expect_error([args.dmc, "compile", TINY, "-o", t, "--db", db], "records of several devices",
                 "two devices, no --db-device")
    expect_error([args.dmc, "compile", TINY, "-o", t, "--db", db, "--config-index", "1"],
                 "--db needs -o OUT.dmlib and chooses the knobs itself", "--db with --config-index")
    expect_error([args.dmc, "compile", TINY, "-o", t, "--db", os.path.join(tmp, "none.jsonl")],
                 "none.jsonl", "a missing database")
    r = run([args.dmc, "compile", TINY, "-o", t, "--db", db, "--db-device", "NVIDIA H200"])
    if knobs(t) != kt:
        sys.exit("FAIL: --db-device NVIDIA H200 chose differently from the one-device database")
    layouts_by_shortest_path(args, tmp, db)
    contraction_algorithms(args, tmp)
    attention_paths(args, tmp)
    dropout_paths(args, tmp)
    path_knob_candidates(args, tmp)
    column_paths(args, tmp)
    bias_grad_paths(args, tmp)
    addend_paths(args, tmp)
    prediction_written(args, tmp)
    tune_command(args, tmp)
    print("db_compile_test: PASS")


if __name__ == "__main__":
    main()
