# Helpers of the record-relay tests (sourced after common.sh, not run: ctest only runs
# test_*.sh): ranks print numbered lines (output_lines.py) through ezpz-rankenv's relay, and
# the records are decoded and checked.
rankenv=$EZPZ_BUILD/ezpz-rankenv
writer=$EZPZ_SRC/tests/integration/output_lines.py
lines=3000

# relay_run NAME LAUNCHER...: 4 ranks of output_lines.py under LAUNCHER (which starts 4), each
# through ezpz-rankenv with EZPZ_OUTPUT_RECORDS=1; the records in $scratch/records. Checked:
# every line whole and each rank's bytes as it wrote them, in order.
relay_run() {
  local name=$1 rank counts
  shift
  rm -rf "$scratch/decoded" && mkdir -p "$scratch/decoded"
  clean_env EZPZ_OUTPUT_RECORDS=1 "$@" "$rankenv" python3 "$writer" "$lines" \
    >"$scratch/records" 2>"$scratch/stderr"
  expect_eq "$name: exit status" 0 "$?"
  expect_eq "$name: nothing on stderr" "" "$(cat "$scratch/stderr")"
  counts=$("$rankenv" --decode "$scratch/decoded" <"$scratch/records")
  expect_eq "$name: every line whole" "whole $((4 * lines)) pieces 0" "$counts"
  expect_eq "$name: nothing but records" "0 1 2 3" "$(cd "$scratch/decoded" && echo *)"
  for rank in 0 1 2 3; do
    python3 "$writer" "$lines" --expect "$rank" >"$scratch/expected.$rank"
    expect_true "$name: rank $rank's bytes, in order" \
      cmp -s "$scratch/expected.$rank" "$scratch/decoded/$rank"
  done
}
