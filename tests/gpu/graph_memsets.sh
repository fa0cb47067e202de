#!/bin/sh
# cuBLASLt's memset nodes as the runtime's fill kernels (runtime/GraphFills.h) in a
# whole training step: dmc-run --bench must report memset nodes replaced (and with
# --graph-memsets, kept); the step's results must be bit for bit those of the step
# with memset nodes; a run with another dropout seed must differ (the comparison can
# fail). Exit 77 without a GPU, or when this cuBLASLt puts no memset in the bundle's
# graphs (nothing to compare).
# Usage: graph_memsets.sh DMC_RUN BUNDLE OUTDIR
run=$1 bundle=$2 dir=$3
mkdir -p "$dir"
counts() { # "F K": memset nodes as fill kernels and kept, both phases
  sed -n 's/.*memset nodes in the graphs: forward \([0-9]*\) as fill kernels, \([0-9]*\) kept; backward \([0-9]*\) as fill kernels, \([0-9]*\) kept.*/\1 \2 \3 \4/p' |
    awk '{print $1 + $3, $2 + $4}'
}
out=$("$run" "$bundle" --bench --reps 3 --warmup 1 2>&1); rc=$?
[ $rc -eq 77 ] && { echo "graph_memsets: skipped: no GPU"; exit 77; }
[ $rc -eq 0 ] || { echo "$out" | tail -5; echo "graph_memsets: FAIL: dmc-run --bench: exit $rc"; exit 1; }
set -- $(echo "$out" | counts)
filled=${1:-x} kept=${2:-x}
[ "$filled" = x ] && { echo "graph_memsets: FAIL: dmc-run --bench printed no memset-node counts"; exit 1; }
[ "$filled" -eq 0 ] && [ "$kept" -eq 0 ] &&
  { echo "graph_memsets: skipped: this cuBLASLt puts no memset into $bundle's graphs"; exit 77; }
[ "$kept" -eq 0 ] || { echo "graph_memsets: FAIL: $kept memset nodes kept by default"; exit 1; }
out=$("$run" "$bundle" --bench --reps 3 --warmup 1 --graph-memsets 2>&1) ||
  { echo "graph_memsets: FAIL: dmc-run --bench --graph-memsets: exit $?"; exit 1; }
set -- $(echo "$out" | counts)
[ "${1:-x}" = 0 ] && [ "${2:-x}" = "$filled" ] ||
  { echo "graph_memsets: FAIL: with --graph-memsets: ${1:-?} as fill kernels, ${2:-?} kept (expected 0 and $filled)"; exit 1; }
"$run" "$bundle" --train --out "$dir/fills.safetensors" > /dev/null ||
  { echo "graph_memsets: FAIL: dmc-run --train: exit $?"; exit 1; }
"$run" "$bundle" --train --graph-memsets --out "$dir/memsets.safetensors" > /dev/null ||
  { echo "graph_memsets: FAIL: dmc-run --train --graph-memsets: exit $?"; exit 1; }
cmp -s "$dir/fills.safetensors" "$dir/memsets.safetensors" ||
  { echo "graph_memsets: FAIL: the step with fill kernels differs from the step with memset nodes"; exit 1; }
"$run" "$bundle" --train --seed 6 --out "$dir/planted.safetensors" > /dev/null ||
  { echo "graph_memsets: FAIL: dmc-run --train --seed 6: exit $?"; exit 1; }
if cmp -s "$dir/fills.safetensors" "$dir/planted.safetensors"; then
  echo "graph_memsets: FAIL: another dropout seed gave the same results (the comparison cannot fail)"
  exit 1
fi
echo "graph_memsets: PASS: $filled memset nodes as fill kernels, the step bit for bit as with memset nodes; another seed differs"
