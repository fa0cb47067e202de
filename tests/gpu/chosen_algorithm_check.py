#!/usr/bin/env python3
"""A bundle's chosen cuBLASLt algorithms on the GPU (label gpu).

1. `dmrt-bench BUNDLE --contraction all --algorithms all --reference`: every
   contraction's algorithms are timed and each one checked against the
   reference; at least one enumerated algorithm must pass for every contraction.
2. The bundle copied with, per contraction, the fastest passing algorithm that is
   not the heuristic's best written into the manifest (`contractions[].algorithm`,
   bundle version 6, as `dmc compile --db` writes it): `dmrt-bench --reference`
   must run exactly that algorithm (the step's `algorithm`) and pass its checks.
3. Planted faults, each of which must be caught: the sweep with
   `--plant-fault scale` must reject every algorithm that ran; an algorithm id
   cuBLASLt does not have must give the warning and run the heuristic's
   (and still pass); the chosen bundle with `--plant-fault scale` must fail.

Usage: chosen_algorithm_check.py --bench BUILD/runtime/tools/dmrt-bench --bundle DIR
Exit: 0 pass, 1 fail, 77 no GPU.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ALIEN = ("cublaslt id=987654 tile=0 stages=0 splitk=1 reduction=0 swizzle=0 custom=0 "
         "inner=0 cluster=0")


def bench(args, bundle, out, *extra):
    cmd = [args.bench, bundle, "--contraction", "all", "--reference", "--reps", "3",
           "--json", out, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 77:
        print(r.stdout + r.stderr)
        sys.exit(77)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return json.load(open(out)), r


def contractions(run):
    return [s for s in run["steps"] if s["kind"] == "contraction" and "skipped" not in s]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bench", required=True)
    p.add_argument("--bundle", required=True)
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="dmc-chosen-")
    sweep, _ = bench(args, args.bundle, os.path.join(tmp, "sweep.json"), "--algorithms", "all",
                     "--max-algorithms", "16")
    steps = contractions(sweep)
    if not steps:
        sys.exit(f"FAIL: {args.bundle} has no checked contraction")
    chosen = {}
    for s in steps:
        if not (s.get("checked") and s.get("pass")):
            sys.exit(f"FAIL: c{s['id']} ({s['name']}) failed its own check")
        if s.get("algorithms_checked_against") != "reference":
            sys.exit(f"FAIL: c{s['id']}: algorithms checked against "
                     f"{s.get('algorithms_checked_against')!r}, expected the reference")
        good = [a for a in s["algorithm_runs"] if a["checked"] and a["pass"] and
                a.get("heuristic_rank") != 0]
        if not good:
            sys.exit(f"FAIL: c{s['id']}: no algorithm beyond the heuristic's best passed")
        chosen[s["id"]] = min(good, key=lambda a: a["median_us"])["algorithm"]
    print(f"ok: {len(steps)} contraction(s) swept, every one with a passing algorithm "
          "beyond the heuristic's best")

    # The chosen algorithms in a copy of the bundle.
    copy = os.path.join(tmp, "chosen.dmlib")
    shutil.copytree(args.bundle, copy)
    manifest_path = os.path.join(copy, "manifest.json")
    manifest = json.load(open(manifest_path))
    if manifest["version"] < 6:
        sys.exit(f"FAIL: {args.bundle} is bundle version {manifest['version']}; 6 carries "
                 "algorithms (make the bundles again)")

    def write_manifest(algorithms):
        m = json.loads(json.dumps(manifest))
        for c in m["contractions"]:
            if c["id"] in algorithms:
                c["algorithm"] = algorithms[c["id"]]
        json.dump(m, open(manifest_path, "w"), indent=1)

    write_manifest(chosen)
    run, _ = bench(args, copy, os.path.join(tmp, "chosen.json"))
    for s in contractions(run):
        if s.get("algorithm") != chosen[s["id"]] or not (s["checked"] and s["pass"]):
            sys.exit(f"FAIL: c{s['id']}: ran {s.get('algorithm')!r} (checked {s['checked']}, "
                     f"pass {s['pass']}), expected {chosen[s['id']]!r} passing")
    print(f"ok: the bundle ran its {len(chosen)} chosen algorithm(s), every output checked")

    # Planted faults.
    # (With --plant-fault, dmrt-bench exits 0 when every checked step caught it.)
    scaled, _ = bench(args, args.bundle, os.path.join(tmp, "scaled.json"), "--algorithms", "all",
                      "--max-algorithms", "16", "--plant-fault", "scale")
    for s in contractions(scaled):
        ran = [a for a in s["algorithm_runs"] if a["median_us"] > 0]
        if not ran or any(a["pass"] for a in ran) or s["algorithms_rejected"] != len(ran):
            sys.exit(f"FAIL: c{s['id']}: a planted scale left an algorithm passing")
    print("ok: planted scale: every algorithm that ran was rejected")
    caught, _ = bench(args, copy, os.path.join(tmp, "chosen-scaled.json"), "--plant-fault",
                      "scale")
    if any(s["pass"] or s.get("algorithm") != chosen[s["id"]] for s in contractions(caught)):
        sys.exit("FAIL: planted scale on the chosen bundle: a contraction still passed")
    print("ok: planted scale on the chosen bundle: every contraction's check fails")
    first = min(chosen)
    alien_choice = dict(chosen)
    alien_choice[first] = ALIEN
    write_manifest(alien_choice)
    alien, r = bench(args, copy, os.path.join(tmp, "alien.json"))
    step = next(s for s in contractions(alien) if s["id"] == first)
    warning = f"running the heuristic's algorithm instead"
    if step.get("algorithm") != "heuristic" or warning not in r.stderr or "987654" not in r.stderr:
        sys.exit(f"FAIL: an unknown algorithm id: step ran {step.get('algorithm')!r}; "
                 f"stderr:\n{r.stderr}")
    print("ok: an algorithm id cuBLASLt lacks: warned, ran the heuristic's, checks pass")
    print("chosen_algorithm_check: PASS")


if __name__ == "__main__":
    main()
