#!/usr/bin/env bash
# On a GPU machine (see ../shared/DEVICE.md): build the MLIR-free side, run the
# GPU tests on the bundles in gpu-bundles/ (made with `dmc compile --reference`
# on a compiler machine), benchmark bert-large's kernels (stream timing, the
# default, and once isolated with an L2 flush), memcheck the small bundles and
# summarise the configuration sweep; run a whole small training step
# through dmc-run (the C API) under compute-sanitizer memcheck, racecheck and
# initcheck, and time bert-large's whole step (dmc-run --bench: with and
# without CUDA graphs, against the sum of its steps). Results go to $OUT, at
# most 8 files: device.txt build.log ctest-gpu.log bert-large.{json,txt}
# (dmc-run --bench appended) bert-large-isolated.json checks.txt (planted
# faults, memcheck, swept configurations, whole-step sanitizers) sweep.txt;
# other logs stay in build-gpu/.
# DMC_RUN=checks: correctness only (ctest, planted faults, bert-large checked
# once, memcheck, swept configurations checked), no benchmarks.
# Every mode ends with tests/gpu/train-checks.sh (examples/train.py and the
# DDP check, logged in checks.txt; its train-loss.png and train-losses.json
# in $OUT with DMC_RUN=checks, else in build-gpu/train/).
# DMC_RUN=train: the build and train-checks.sh only (output in $OUT).
# DMC_TRAIN=0: every mode but train skips train-checks.sh, for a machine whose
# time per call cannot hold both (the device tool's 600 s): then run
# DMC_RUN=train in a call of its own.
# Exit status: 0 only when the build, ctest -L gpu, the bert-large check and
# benchmarks, every memcheck and every sweep bundle succeeded; otherwise 1,
# after a FAILED line per failure (also in build-gpu/failures.txt).
set -o pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT" build-gpu
failures=$PWD/build-gpu/failures.txt
: > "$failures"
fail() { echo "FAILED: $*" | tee -a "$failures"; } # also from subshells (pipes)
nvidia-smi -L | tee "$OUT/device.txt"
prefix=()
[ -d gpu-deps ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/gpu-deps")
cmake -S . -B build-gpu -G Ninja -DDMC_COMPILER=OFF -DDMC_GPU_BUNDLES="$PWD/gpu-bundles" \
  "${prefix[@]}" > build-gpu/configure.log 2>&1 || { tail -30 build-gpu/configure.log; exit 1; }
cmake --build build-gpu -j16 > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
if [ "${DMC_RUN:-all}" = train ]; then
  tests/gpu/train-checks.sh "$OUT" 2>&1 | tee "$OUT/checks.txt"
  exit # train-checks.sh's status (pipefail)
fi
bench=build-gpu/runtime/tools/dmrt-bench
run=build-gpu/bin/dmc-run
summary=tests/gpu/sweep-summary.py
ctest --test-dir build-gpu -L gpu --output-on-failure > "$OUT/ctest-gpu.log" 2>&1 ||
  fail "ctest -L gpu: exit $? (see ctest-gpu.log)"
tail -40 "$OUT/ctest-gpu.log"
# ctest shows a passing test's output only on failure: the epilogue summary.
build-gpu/tests/gpu/dmc-gemm-epilogue-test 2>&1 | grep -E "^SUMMARY|never ran|unsupported by" | head -8
# And gpu.WholeStep's checks of two instances of one bundle at once (cubins
# loaded once, identical results) and of the caller's current device kept.
build-gpu/tests/gpu/dmc-whole-step-test --dir gpu-bundles/wholestep 2>&1 |
  grep -E "^  (shared instances|current device):" | head -40
# Planted faults on real GPU outputs: every checked step of a small bundle
# (whole references) and of bert-large (sampled) must fail its comparison.
for b in gpu-bundles/small-bert-large.dmlib gpu-bundles/small-transformer-big-decoder.dmlib \
         gpu-bundles/bert-large.dmlib; do
  [ -d "$b" ] || continue
  for f in zero scale shift permute; do
    log="build-gpu/plant-$f-$(basename "$b").log"
    $bench "$b" --kernel all --contraction all --reference --reps 1 --warmup 0 --timing isolated \
      --plant-fault $f > "$log" 2>&1
    rc=$?
    echo "$(basename "$b") $(grep -h '^planted fault' "$log" || echo "planted fault $f: no verdict") (exit $rc)"
    [ $rc -eq 0 ] || { fail "planted fault $f in $(basename "$b") not caught everywhere: exit $rc"
                       grep -h "FAILED" "$log" | head -5; }
  done
done | tee "$OUT/checks.txt"
checks_only=false
[ "${DMC_RUN:-all}" = checks ] && checks_only=true
if $checks_only; then # correctness only: bert-large checked once, no timing runs
  $bench gpu-bundles/bert-large.dmlib --kernel all --contraction all --reference --reps 1 --timing isolated \
    --warmup 0 --json "$OUT/bert-large.json" > "$OUT/bert-large.txt" 2>&1 ||
    fail "bert-large --reference: exit $?"
  tail -3 "$OUT/bert-large.txt"
elif [ -d gpu-bundles/bert-large.dmlib ]; then
  $bench gpu-bundles/bert-large.dmlib --kernel all --reference --reps 50 \
    --json "$OUT/bert-large.json" 2>&1 | tee "$OUT/bert-large.txt" ||
    fail "bert-large --reference: exit $?"
  # The same kernels timed alone after an L2 flush (launch latency included):
  # its text stays in build-gpu/; one line per kernel, next to stream timing.
  $bench gpu-bundles/bert-large.dmlib --kernel all --reps 50 --timing isolated \
    --flush-l2 --json "$OUT/bert-large-isolated.json" \
    > build-gpu/bert-large-isolated.txt 2>&1 || fail "bert-large isolated: exit $?"
  [ -f "$OUT/bert-large-isolated.json" ] && [ -f "$OUT/bert-large.json" ] &&
    python3 $summary --compare "$OUT/bert-large.json" "$OUT/bert-large-isolated.json"
  $bench gpu-bundles/bert-large.dmlib --contraction all --algorithms all --max-algorithms 64 --reps 10 --json build-gpu/bert-large-algos.json > build-gpu/bert-large-algos.txt 2>&1 ||
    fail "bert-large --algorithms all: exit $?"
  tail -25 build-gpu/bert-large-algos.txt
fi
for b in gpu-bundles/small-*.dmlib; do
  compute-sanitizer --tool memcheck --error-exitcode 9 $bench "$b" --kernel all \
    --contraction all --reference --reps 1 --warmup 0 > "build-gpu/memcheck-$(basename "$b").log" 2>&1
  rc=$?
  echo "memcheck $(basename "$b"): exit $rc ($(grep -h 'ERROR SUMMARY' "build-gpu/memcheck-$(basename "$b").log"))"
  [ $rc -eq 0 ] || fail "memcheck $(basename "$b"): exit $rc"
done | tee -a "$OUT/checks.txt"
# Every swept configuration of the small models against the references, and
# memcheck on a few (split column reductions included).
if [ -d gpu-bundles/sweep-small ]; then
  pass=0; nfail=0
  for b in gpu-bundles/sweep-small/*.dmlib; do
    if $bench "$b" --kernel all --reference --reps 1 --warmup 0 \
        > "build-gpu/check-$(basename "$b").log" 2>&1; then
      pass=$((pass + 1))
    else
      nfail=$((nfail + 1)); fail "sweep-small $(basename "$b")"
      grep -E "FAIL|error" "build-gpu/check-$(basename "$b").log" | head -5
    fi
  done
  echo "sweep-small: $pass bundles pass, $nfail fail"
  for b in gpu-bundles/sweep-small/small-bert-large-c{0,2,5}.dmlib; do
    [ -d "$b" ] || continue
    compute-sanitizer --tool memcheck --error-exitcode 9 $bench "$b" --kernel all \
      --reference --reps 1 --warmup 0 > "build-gpu/memcheck-$(basename "$b").log" 2>&1
    rc=$?
    echo "memcheck $(basename "$b"): exit $rc ($(grep -h 'ERROR SUMMARY' "build-gpu/memcheck-$(basename "$b").log"))"
    [ $rc -eq 0 ] || fail "memcheck $(basename "$b"): exit $rc"
  done
fi 2>&1 | tee -a "$OUT/checks.txt"
# Inserted transposes (tests/gpu/transpose_bundles.py, codegen/TileEmitter.cpp):
# every tile and the strided loop against whole references, a planted
# permutation caught, the default tile under memcheck; at full size the
# transposes timed side by side.
if [ -d gpu-bundles/transposes ]; then
  pass=0; nfail=0
  for b in gpu-bundles/transposes/*.dmlib; do
    if $bench "$b" --kernel all --reference --reps 1 --warmup 0 \
        > "build-gpu/check-$(basename "$b").log" 2>&1 &&
       $bench "$b" --kernel 0 --reference --reps 1 --warmup 0 --plant-fault permute \
        > "build-gpu/fault-$(basename "$b").log" 2>&1; then
      pass=$((pass + 1))
    else
      nfail=$((nfail + 1)); fail "transposes $(basename "$b")"
      grep -E "FAIL|error|passed despite" "build-gpu/check-$(basename "$b").log" \
        "build-gpu/fault-$(basename "$b").log" | head -5
    fi
  done
  echo "transposes: $pass bundles pass (each with its planted permutation caught), $nfail fail"
  for b in gpu-bundles/transposes/*-tile-v2y8.dmlib; do
    compute-sanitizer --tool memcheck --error-exitcode 9 $bench "$b" --kernel 0 --reference \
      --reps 1 --warmup 0 > "build-gpu/memcheck-$(basename "$b").log" 2>&1
    rc=$?
    echo "memcheck $(basename "$b"): exit $rc ($(grep -h 'ERROR SUMMARY' "build-gpu/memcheck-$(basename "$b").log"))"
    [ $rc -eq 0 ] || fail "memcheck $(basename "$b"): exit $rc"
  done
  for b in gpu-bundles/transposes/timed/*.dmlib; do
    printf "transpose %-28s " "$(basename "$b" .dmlib)"
    $bench "$b" --kernel 0 --reps 200 2>&1 | awk '/^k /{printf "%s us, %s GB/s", $5, $7} END{print ""}'
  done
fi 2>&1 | tee -a "$OUT/checks.txt"
# A whole small training step (forward + backward, CUDA graphs on) through
# dmc-run and the C API, under each compute-sanitizer tool: 0 errors.
# initcheck runs on a poisoned arena (--poison-arena: 0xFF, i.e. NaN): the
# tool cannot see what cuBLASLt's Hopper kernels store (their TMA bulk
# stores), so on a fresh arena it flags every later read of a contraction's
# output; reads of arena memory no step wrote are caught instead by the
# poisoned whole-step comparison (gpu.WholeStep: NaN would reach a result).
# The fresh-arena initcheck still runs, reported per kernel, not counted.
ws=gpu-bundles/wholestep/encoder-dropout
if [ -d "$ws.dmlib" ]; then
  for tool in memcheck racecheck initcheck; do
    log="build-gpu/sanitize-$tool-wholestep.log"
    extra=()
    [ $tool = initcheck ] && extra=(--poison-arena)
    compute-sanitizer --tool $tool --error-exitcode 9 $run "$ws.dmlib" --train "${extra[@]}" \
      --inputs "$ws.storage.safetensors" --out "build-gpu/sanitize-$tool.safetensors" > "$log" 2>&1
    rc=$?
    echo "$tool whole step (dmc-run ${extra[*]}): exit $rc ($(grep -h 'ERROR SUMMARY' "$log" | tail -1))"
    # On failure: the first reports (what was read, by which kernel) and the end.
    [ $rc -eq 0 ] || { fail "$tool whole step (dmc-run): exit $rc"
                       grep -m 12 -E "^========= +(Uninitialized|Invalid|Race|at |by thread)" "$log"
                       tail -3 "$log"; }
  done
  log=build-gpu/sanitize-initcheck-fresh-arena.log
  compute-sanitizer --tool initcheck --print-limit 1000000 $run "$ws.dmlib" --train \
    --inputs "$ws.storage.safetensors" --out build-gpu/sanitize-fresh.safetensors > "$log" 2>&1
  echo "initcheck whole step, fresh arena (not counted): $(grep -c '^========= Uninitialized' "$log") reads flagged, by kernel:"
  grep -oE "^=========     at [A-Za-z0-9_]+" "$log" | sed 's/.* at //' | sort | uniq -c | sort -rn | head -12
else
  fail "no $ws.dmlib (run tests/gpu/make-bundles.sh)"
fi 2>&1 | tee -a "$OUT/checks.txt"
# bert-large and gpt2-medium at full size, dropout off: dmc-run's whole step
# (bf16) against PyTorch autograd in fp32 on this GPU, from the same inputs
# (tests/gpu/torch_check.py: worst error per tensor relative to its own max
# |ref|); a planted scaled y must fail the same check.
for m in gpu-bundles/torch/*-nodrop.json; do
  [ -f "$m" ] || { fail "no gpu-bundles/torch (run tests/gpu/make-bundles.sh)"; break; }
  name=$(basename "$m" .json)
  res="build-gpu/torch-$name.safetensors"
  if ! $run "gpu-bundles/torch/$name.dmlib" --train --seed 5 --out "$res" \
      > "build-gpu/torch-$name-run.log" 2>&1; then
    fail "dmc-run $name: exit $?"; tail -5 "build-gpu/torch-$name-run.log"; continue
  fi
  python3 tests/gpu/torch_check.py --model "$m" --run "$res" ||
    fail "torch_check $name: exit $?"
  python3 tests/gpu/torch_check.py --model "$m" --run "$res" --plant-fault scale \
    > "build-gpu/torch-$name-planted.log" 2>&1
  rc=$?
  echo "torch_check $name, planted y x1.25: exit $rc ($(tail -1 "build-gpu/torch-$name-planted.log"))"
  [ $rc -eq 1 ] || fail "torch_check $name did not catch a planted fault: exit $rc"
  rm -f "$res"
done 2>&1 | tee -a "$OUT/checks.txt"
# dmc.torch (python/dmc, through build-gpu's libdmrt.so): the Layer against
# transformers' BertLayer / GPT2Block in fp32 and bf16 (y and every gradient, worst
# error per tensor), dropout statistics and seeds, the module's errors and a Stack
# (also in ctest -L gpu, gpu.torch.*, with planted faults; printed here in full).
if [ -d gpu-bundles/torch-module ]; then
  for c in hf-bert-f32 hf-bert-bf16 hf-gpt2-f32 hf-gpt2-bf16 dropout module; do
    DMC_LIBDMRT=build-gpu/runtime/libdmrt.so python3 tests/gpu/torch_module_check.py "$c" \
      --bundles gpu-bundles/torch-module || fail "dmc.torch $c: exit $?"
  done
else
  fail "no gpu-bundles/torch-module (run tests/gpu/make-bundles.sh)"
fi 2>&1 | tee -a "$OUT/checks.txt"
# bert-large's whole training step timed (with and without CUDA graphs,
# the sum of its steps' own times, launch overhead).
if ! $checks_only && [ -d gpu-bundles/bert-large.dmlib ]; then
  $run gpu-bundles/bert-large.dmlib --bench --reps 50 2>&1 | tee -a "$OUT/bert-large.txt" ||
    fail "dmc-run --bench bert-large: exit $?"
  # The same step with bias and bias-gradient kernels instead of epilogues.
  if [ -d gpu-bundles/compare/bert-large-noepi.dmlib ]; then
    echo "== bert-large --no-epilogues" | tee -a "$OUT/bert-large.txt"
    $run gpu-bundles/compare/bert-large-noepi.dmlib --bench --reps 50 2>&1 | tee -a "$OUT/bert-large.txt" ||
      fail "dmc-run --bench bert-large --no-epilogues: exit $?"
  fi
fi
# Configuration sweep: the same model compiled with --config-index N.
if ! $checks_only && [ -d gpu-bundles/sweep ]; then
  for b in gpu-bundles/sweep/*.dmlib; do
    mkdir -p build-gpu/sweep
    $bench "$b" --kernel all --reps 30 --json "build-gpu/sweep/$(basename "$b" .dmlib).json" \
      > /dev/null 2>&1 || fail "sweep $(basename "$b"): exit $?"
  done
  python3 $summary build-gpu/sweep/*.json | tee "$OUT/sweep.txt"
fi
# Optional (DMC_NCU=1): Nsight Compute metrics per bert-large kernel, one
# line each: time, issue-slot use, ALU and FMA-heavy pipe use, instructions
# per element-byte, registers, achieved occupancy.
if ! $checks_only && [ -n "${DMC_NCU:-}" ] && [ -d gpu-bundles/bert-large.dmlib ]; then
  m=gpu__time_duration.sum,sm__issue_active.avg.pct_of_peak_sustained_active
  m=$m,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
  m=$m,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active
  m=$m,smsp__inst_executed.sum,launch__registers_per_thread
  m=$m,sm__warps_active.avg.pct_of_peak_sustained_active
  ncu --metrics "$m" --csv --page raw "$bench" gpu-bundles/bert-large.dmlib --kernel all \
    --reps 1 --warmup 0 --timing isolated > build-gpu/ncu.csv 2> build-gpu/ncu.err
  python3 - build-gpu/ncu.csv <<'PY'
import csv, sys
all_rows = list(csv.DictReader(open(sys.argv[1])))
units = all_rows[0] if all_rows else {}
rows = [r for r in all_rows if r.get("Kernel Name", "").startswith("k")]
seen = set()
print("ncu: kernel, time (" + units.get("gpu__time_duration.sum", "?") +
      "), issue%, alu%, fmaheavy%, warp-instructions, regs, occupancy%")
for r in rows:
    name = r["Kernel Name"]
    if name in seen:
        continue
    seen.add(name)
    g = lambda k: r.get(k, "?")
    print(f"ncu: {name:34s} {g('gpu__time_duration.sum'):>9s} "
          f"{g('sm__issue_active.avg.pct_of_peak_sustained_active'):>6s} "
          f"{g('sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active'):>6s} "
          f"{g('sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active'):>6s} "
          f"{g('smsp__inst_executed.sum'):>12s} {g('launch__registers_per_thread'):>4s} "
          f"{g('sm__warps_active.avg.pct_of_peak_sustained_active'):>6s}")
PY
fi
# The training example and the DDP check (the 8 files of a full run leave no
# room for the plot in $OUT).
train_out=build-gpu/train
$checks_only && train_out=$OUT
if [ "${DMC_TRAIN:-1}" = 0 ]; then
  echo "train-checks.sh skipped (DMC_TRAIN=0: run DMC_RUN=train separately)" | tee -a "$OUT/checks.txt"
else
  tests/gpu/train-checks.sh "$train_out" 2>&1 | tee -a "$OUT/checks.txt" ||
    fail "tests/gpu/train-checks.sh: exit $?"
fi
# Overall status: every failure above, whichever step it came from.
if [ -s "$failures" ]; then
  echo "run-device: $(wc -l < "$failures") failure(s):"
  cat "$failures"
  exit 1
fi
echo "run-device: every check passed"
