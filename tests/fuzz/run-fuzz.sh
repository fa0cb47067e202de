#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-19, ASan + UBSan, build-fuzz/) and fuzzes
# each for a while, then prints per target: executions, coverage and findings.
#
#   tests/fuzz/run-fuzz.sh [--time SECONDS] [--runs N] [--jobs J] [TARGET ...]
#
#   --time S   stop each target after S seconds (default 600)
#   --runs N   or after N executions, whichever comes first (default 1000000)
#   --jobs J   targets fuzzed at once (default: the number of cores)
#   TARGET     model config manifest bundle safetensors tuningdb (default: all)
#
# Each target starts from its seeds (tests/fuzz/corpus/TARGET) with its
# dictionary (tests/fuzz/dict/TARGET.dict) and grows a working corpus in
# build-fuzz/corpus/TARGET (kept between runs). Crashes, hangs (timeouts),
# leaks and out-of-memory inputs land in build-fuzz/findings/TARGET/ (an
# earlier run's move to build-fuzz/findings-earlier/TARGET/); keep
# each one as tests/fuzz/regressions/TARGET/<what-it-found> once fixed, and
# the normal test suite runs it from then on (fuzz.inputs.TARGET).
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=600 runs=1000000 jobs=$(nproc) targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run-fuzz: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(model config manifest bundle safetensors tuningdb)
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "run-fuzz: unknown target '$t' (one of: ${all[*]})" >&2; exit 2; }
done

DMC_FUZZ=1 .ci/install-deps
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang-19 CXX=clang++-19 cmake -S . -B build-fuzz -G Ninja -DDMC_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CUDAToolkit_ROOT:+-DCUDAToolkit_ROOT=$CUDAToolkit_ROOT}
fi
cmake --build build-fuzz --target fuzz-targets -j "$(nproc)"

fuzz_one() {
  local t=$1 corpus=build-fuzz/corpus/$1 findings=build-fuzz/findings/$1
  mkdir -p "$corpus" "$findings"
  # An earlier run's findings move aside, so that the table counts this run's.
  if [ -n "$(ls -A "$findings")" ]; then
    mkdir -p build-fuzz/findings-earlier/"$t"
    mv "$findings"/* build-fuzz/findings-earlier/"$t"/
    echo "run-fuzz: $t: earlier findings moved to build-fuzz/findings-earlier/$t/"
  fi
  # Hangs: a model may take seconds (a 1024-layer stack); everything else is fast.
  local timeout=10; [ "$t" = model ] && timeout=120
  local start=$SECONDS
  ASAN_OPTIONS=detect_leaks=1 build-fuzz/bin/fuzz-"$t" "$corpus" tests/fuzz/corpus/"$t" \
    -dict=tests/fuzz/dict/"$t".dict -max_total_time="$seconds" -runs="$runs" \
    -timeout="$timeout" -rss_limit_mb=4096 -max_len=262144 -print_final_stats=1 \
    -artifact_prefix="$findings"/ > build-fuzz/"$t".log 2>&1 || true
  echo $((SECONDS - start)) > build-fuzz/"$t".seconds
}

mkdir -p build-fuzz
echo "run-fuzz: ${targets[*]}: up to $seconds s or $runs executions each, $jobs at once"
running=0
for t in "${targets[@]}"; do
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

printf '\n%-12s %11s %7s %7s %8s %8s %7s %8s  %s\n' target executions exec/s seconds coverage features corpus findings kinds
status=0
for t in "${targets[@]}"; do
  log=build-fuzz/$t.log
  execs=$(awk '/^stat::number_of_executed_units:/ {v = $2} END {print v}' "$log")
  rate=$(awk '/^stat::average_exec_per_sec:/ {v = $2} END {print v}' "$log")
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  secs=$(cat build-fuzz/"$t".seconds 2>/dev/null || echo -)
  corpus=$(find build-fuzz/corpus/"$t" -type f | wc -l)
  found=$(find build-fuzz/findings/"$t" -type f | wc -l)
  what=$(find build-fuzz/findings/"$t" -type f -printf '%f\n' | sed 's/-.*//' | sort | uniq -c | awk '{printf "%s%d %s", sep, $1, $2; sep=", "}')
  printf '%-12s %11s %7s %7s %8s %8s %7s %8s  %s\n' "$t" "${execs:--}" "${rate:--}" "$secs" \
    "${cov:--}" "${ft:--}" "$corpus" "$found" "${what:--}"
  [ "$found" -eq 0 ] || status=1
  grep -q 'stat::number_of_executed_units' "$log" || { echo "  $t: no final statistics; see $log" >&2; status=1; }
done
echo "run-fuzz: logs in build-fuzz/TARGET.log; findings in build-fuzz/findings/"
exit $status
