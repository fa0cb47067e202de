#!/bin/sh
# expect-fail.sh CMD...: runs a check with a planted fault, which must fail it: exit 0
# when CMD exits 1 and printed a FAIL line, 77 when CMD skipped (77), 1 otherwise
# (passed, crashed, or failed without saying what).
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out" | tail -25
[ $rc -eq 77 ] && exit 77
if [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -q "FAIL"; then
  echo "expect-fail: the planted fault was caught"
  exit 0
fi
echo "expect-fail: the planted fault was NOT caught (exit $rc)"
exit 1
