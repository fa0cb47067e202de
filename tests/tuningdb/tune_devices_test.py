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
import os
import shutil
import sys
import tempfile

from db_compile_test import TINY, bench_json, expect_error, run


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
        open(bench, "w").write(
            "#!/bin/sh\nbundle=$1; json=; device=-\n"
            "while [ $# -gt 0 ]; do case $1 in --json) json=$2;; --device) device=$2;; esac; "
            "shift; done\nsleep 0.2\ncp \"$bundle.template\" \"$json\"\n"
            f"echo \"$(basename $bundle) $device\" >> {log}\n")
        os.chmod(bench, 0o755)
        db = os.path.join(tmp, "db.jsonl")
        r = run([tune, cands, db, "--bench", bench, "--devices", "0,1"])
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
        again = run([tune, cands, db, "--bench", bench, "--devices", "1,0"]).stdout
        assert again.count(" 0 appended") == len(names), again
        print(f"ok: 8 bundles over devices 0 and 1 ({dict(per_device)}), each once, "
              "into one database; nothing added twice")
        for bad, text in (("0,0", "names device 0 twice"), ("a", "device ordinals"),
                          ("", "device ordinals"), ("1,", "device ordinals")):
            expect_error([tune, cands, db, "--bench", bench, "--devices", bad], text,
                         f"--devices {bad!r}")
        print("ok: --devices errors name the value")
    print("tune_devices_test: PASS")


if __name__ == "__main__":
    main()
