#!/usr/bin/python3
"""dmrt-tune --devices: several GPUs of one host measure candidate bundles in parallel
into one database, without a GPU here: a fake dmrt-bench copies a synthetic run file
(db_compile_test.bench_json) to its --json path and logs its bundle and --device.
Every bundle is measured exactly once, on one of the devices, every device takes some,
all land in the one database; bad device lists are usage errors naming the value.

Usage: tune_devices_test.py --dmc BUILD/bin/dmc --dmc-db BUILD/bin/dmc-db
"""

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile

from db_compile_test import DEVICE, TINY, bench_json, expect_error, priced_json, run


def bench_runs(log):
    """The measuring runs a logging fake bench saw (its --device-info calls left out)."""
    if not os.path.exists(log + ".args"):
        return []
    return [l for l in open(log + ".args").read().splitlines()
            if not l.startswith("--device-info")]


def skip_recorded(args, tmp, tune, cands, base, bench, log):
    """Without --remeasure, once a bundle of a GPU is imported, the kernels the
    database holds for it are left out of the later bundles: the copies of one
    bundle are not run at all, and a bundle with other knobs for some kernels
    (--config-index 1) runs those only (dmrt-bench --kernel)."""
    other = os.path.join(cands, "c8.dmlib")
    run([args.dmc, "compile", TINY, "-o", other, "--config-index", "1"])
    bench_json(other, other + ".template", 5.0)
    entry = lambda b: {k["entry"]: k["id"] for k in
                       json.load(open(os.path.join(b, "manifest.json")))["kernels"]}
    knobs = lambda b: {k["name"]: k for k in json.load(open(os.path.join(b, "config.json")))["kernels"]}
    ids = entry(other)
    kb, ko = knobs(base), knobs(other)
    changed = sorted(ids[n] for n in ko if {**ko[n], "describe": ""} != {**kb[n], "describe": ""})
    assert 0 < len(changed) < len(ids), (changed, ids)
    text = open(bench).read().split("\n", 1)
    bench = bench + ".args.sh"  # the same, logging its arguments first
    open(bench, "w").write(f"{text[0]}\necho \"$@\" >> {log}.args\n{text[1]}")
    os.chmod(bench, 0o755)
    db = os.path.join(tmp, "skip.jsonl")
    r = run([tune, cands, db, "--bench", bench])
    runs = bench_runs(log)
    assert len(runs) == 2 and runs[0].split()[0].endswith("c0.dmlib"), runs
    assert runs[1].split()[0].endswith("c8.dmlib"), runs
    kernel_arg = runs[1].split()[runs[1].split().index("--kernel") + 1]
    assert kernel_arg == ",".join(map(str, changed)), (kernel_arg, changed)
    assert r.stdout.count("nothing left to measure") == 7, r.stdout
    assert f"c8.dmlib: {len(ids) - len(changed)} of {len(ids)} kernel(s) and 0 of 0 " \
        "contraction(s) already in" in r.stdout, r.stdout
    print(f"ok: 7 copies of a measured bundle not run; c8 runs its {len(changed)} other "
          f"kernel(s) only (--kernel {kernel_arg})")
    # Everything recorded: the GPU known from --device-info before the first bundle,
    # so not even that one runs; a bench without the option runs the first whole.
    os.remove(log + ".args")
    r = run([tune, cands, db, "--bench", bench])
    assert not bench_runs(log), bench_runs(log)
    assert "dmrt-tune: device default: NVIDIA H200 (132 SMs, cc 9.0)" in r.stdout, r.stdout
    assert r.stdout.count("nothing left to measure") == 9, r.stdout
    plain = bench + ".plain.sh"  # the same without --device-info: it fails
    open(plain, "w").write(open(bench).read().replace("--device-info", "--no-such-option"))
    os.chmod(plain, 0o755)
    os.remove(log + ".args")
    r = run([tune, cands, db, "--bench", plain])
    runs = bench_runs(log)
    assert len(runs) == 1 and runs[0].split()[0].endswith("c0.dmlib"), runs
    assert r.stdout.count("nothing left to measure") == 8 and "device default" not in r.stdout
    print("ok: a GPU known from dmrt-bench --device-info: a fully recorded run measures "
          "nothing, not even its first bundle (a bench without it: the first, whole)")
    os.remove(log + ".args")
    run([tune, cands, db, "--bench", bench, "--remeasure"])
    assert len(bench_runs(log)) == 9 and len(open(log + ".args").read().splitlines()) == 9
    print("ok: --remeasure runs every bundle (and asks no --device-info)")
    skip_contractions(args, tmp, tune, base, bench, log)


def skip_contractions(args, tmp, tune, base, bench, log):
    """Contractions too: a path bundle (measured with its contractions and their
    algorithm sweeps) whose kernels and contractions default.dmlib's run recorded,
    but for contraction 1's, runs contraction 1 only."""
    cands = os.path.join(tmp, "paths")
    default, path = os.path.join(cands, "default.dmlib"), os.path.join(cands, "nobgrad.dmlib")
    shutil.copytree(base, default)
    shutil.copytree(base, path)
    m = json.load(open(os.path.join(base, "manifest.json")))
    mapped = [c["id"] for c in m["contractions"] if c.get("gemm")]
    assert len(mapped) >= 2, m["contractions"]
    steps = {f"k{k['id']}" for k in m["kernels"]} | {f"c{c}" for c in mapped if c != mapped[1]}
    priced_json(default, default + ".template", 10.0, 10.0, only=steps)
    priced_json(path, path + ".template", 10.0, 10.0)
    os.remove(log + ".args")
    db = os.path.join(tmp, "paths.jsonl")
    r = run([tune, cands, db, "--bench", bench])
    runs = [l.split() for l in bench_runs(log)]
    assert len(runs) == 2 and runs[1][0] == path, runs
    assert "--kernel" not in runs[1] and runs[1][runs[1].index("--contraction") + 1] == \
        str(mapped[1]), runs[1]
    assert f"{len(m['kernels'])} of {len(m['kernels'])} kernel(s) and {len(mapped) - 1} of " \
        f"{len(mapped)} contraction(s) already in" in r.stdout, r.stdout
    print(f"ok: a path bundle runs its one unrecorded contraction only (--contraction {mapped[1]})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dmc", required=True)
    ap.add_argument("--dmc-db", required=True)
    args = ap.parse_args()
    tune = os.path.join(os.path.dirname(args.dmc_db), "dmrt-tune")
    with tempfile.TemporaryDirectory(prefix="dmc-devices-test-") as tmp:
        cands = os.path.join(tmp, "cands")
        os.makedirs(cands)
        base = os.path.join(tmp, "base.dmlib")
        run([args.dmc, "compile", TINY, "-o", base])
        names = [f"c{i}" for i in range(8)]
        for i, n in enumerate(names):
            bundle = os.path.join(cands, n + ".dmlib")
            shutil.copytree(base, bundle)
            bench_json(bundle, bundle + ".template", 10.0 + i)
        log = os.path.join(tmp, "bench.log")
        bench = os.path.join(tmp, "fake-bench.sh")
        # Slow enough that one device cannot take every bundle before the other starts.
        # --device-info: the device block of its runs (dmrt-bench's), logging nothing.
        info = os.path.join(tmp, "device-info.json")
        json.dump({"device": DEVICE}, open(info, "w"))
        open(bench, "w").write(
            "#!/bin/sh\nbundle=$1; json=; device=-\n"
            "while [ $# -gt 0 ]; do case $1 in --json) json=$2;; --device) device=$2;; esac; "
            f"shift; done\nif [ \"$bundle\" = --device-info ]; then cp {info} \"$json\"; "
            "exit 0; fi\nsleep 0.2\ncp \"$bundle.template\" \"$json\"\n"
            f"echo \"$(basename $bundle) $device\" >> {log}\n")
        os.chmod(bench, 0o755)
        db = os.path.join(tmp, "db.jsonl")
        r = run([tune, cands, db, "--bench", bench, "--devices", "0,1", "--remeasure"])
        lines = [l.split() for l in open(log).read().splitlines()]
        per_bundle = collections.Counter(b for b, _ in lines)
        per_device = collections.Counter(d for _, d in lines)
        assert sorted(per_bundle) == sorted(n + ".dmlib" for n in names) and \
            set(per_bundle.values()) == {1}, per_bundle
        assert set(per_device) == {"0", "1"} and min(per_device.values()) >= 1, per_device
        assert "measuring on devices 0 1 in parallel" in r.stdout, r.stdout
        assert r.stdout.count(" appended to ") == len(names), r.stdout
        assert "8/8 " in r.stdout and "problem(s) measured" in r.stdout, r.stdout
        for d in ("0", "1"):
            assert f" on device {d}, " in r.stdout, r.stdout
        again = run([tune, cands, db, "--bench", bench, "--devices", "1,0",
                     "--remeasure"]).stdout
        assert again.count(" 0 appended") == len(names), again
        print(f"ok: 8 bundles over devices 0 and 1 ({dict(per_device)}), each once, "
              "into one database; nothing added twice")
        skip_recorded(args, tmp, tune, cands, base, bench, log)
        for bad, text in (("0,0", "names device 0 twice"), ("a", "device ordinals"),
                          ("", "device ordinals"), ("1,", "device ordinals")):
            expect_error([tune, cands, db, "--bench", bench, "--devices", bad], text,
                         f"--devices {bad!r}")
        print("ok: --devices errors name the value")
    print("tune_devices_test: PASS")


if __name__ == "__main__":
    main()
