#!/usr/bin/env bash
# On a GPU machine (../shared/DEVICE.md), from the repository root: measures every
# candidate bundle of CANDIDATES (tuning-db/make-candidates.sh) with dmrt-bench
# (every kernel and contraction run, checked against the references, timed by
# stream timing) and appends the checked measurements to DB (dmc-db import: a
# candidate whose check failed is recorded as rejected). Builds dmrt-bench and
# dmc-db into build-gpu/ first (MLIR-free). Progress: one line per bundle with
# elapsed time and the estimate of what is left; --time-budget S starts no
# bundle after S seconds (what was measured is in DB). Re-running measures again
# but appends only records DB lacks.
# Usage: tuning-db/tune-device.sh CANDIDATES DB [--time-budget S] [--reps N]
# Exit: 0 every bundle measured and imported; 1 a bundle failed (the others
# are still imported); 2 usage.
set -o pipefail
cands=${1:?usage: tune-device.sh CANDIDATES DB [--time-budget S] [--reps N]}
db=${2:?usage: tune-device.sh CANDIDATES DB [--time-budget S] [--reps N]}
shift 2
budget=0 reps=30
while [ $# -gt 0 ]; do
  case "$1" in
    --time-budget) budget=${2:?--time-budget needs seconds}; shift 2 ;;
    --reps) reps=${2:?--reps needs a count}; shift 2 ;;
    *) echo "tune-device: unknown option $1 (allowed: --time-budget S, --reps N)" >&2; exit 2 ;;
  esac
done
bundles=("$cands"/*.dmlib)
[ -d "${bundles[0]}" ] || { echo "tune-device: no *.dmlib in $cands" >&2; exit 2; }
mkdir -p build-gpu
prefix=()
[ -d gpu-deps ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/gpu-deps")
if [ ! -f build-gpu/build.ninja ]; then
  cmake -S . -B build-gpu -G Ninja -DDMC_COMPILER=OFF "${prefix[@]}" > build-gpu/configure.log 2>&1 ||
    { tail -30 build-gpu/configure.log; exit 1; }
fi
cmake --build build-gpu -j"$(nproc)" --target dmrt-bench dmc-db > build-gpu/tune-build.log 2>&1 ||
  { tail -30 build-gpu/tune-build.log; exit 1; }
start=$(date +%s) status=0 done=0
total=${#bundles[@]}
for b in "${bundles[@]}"; do
  now=$(date +%s)
  if [ "$budget" -gt 0 ] && [ $((now - start)) -ge "$budget" ]; then
    echo "tune-device: time budget ${budget}s reached: $done of $total bundle(s) measured"
    break
  fi
  json=build-gpu/tune-$(basename "$b" .dmlib).json
  build-gpu/runtime/tools/dmrt-bench "$b" --kernel all --contraction all --reference \
    --reps "$reps" --json "$json" > "${json%.json}.log" 2>&1
  rc=$?
  # Exit 1 (a check failed) still has every step's verdict: import it (rejected).
  if [ $rc -le 1 ] && [ -f "$json" ]; then
    build-gpu/bin/dmc-db import "$db" "$json" --bundle "$b" | sed 's/^/  /' || status=1
  else
    echo "tune-device: $(basename "$b"): dmrt-bench exit $rc (see ${json%.json}.log)"; status=1
  fi
  done=$((done + 1))
  el=$(( $(date +%s) - start ))
  echo "tune-device: $done/$total $(basename "$b") (exit $rc), ${el}s elapsed, ~$(( el * (total - done) / done ))s left"
done
build-gpu/bin/dmc-db show "$db" | tail -5
exit $status
