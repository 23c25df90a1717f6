# Shared by test_console.sh and test_console_pbs.sh (sourced, not run).

# check_labelled LINES ARGS...: `ezpz launch --output label ARGS -- output_lines.py LINES` on 4
# ranks; every console line is whole and labelled, each rank's lines are what it wrote, in
# order, and `ezpz runs show --rank K` prints exactly what rank K wrote. Leaves the console in
# $scratch/label.out.
check_labelled() {
  local lines=$1 rank; shift
  local writer=$EZPZ_SRC/tests/integration/output_lines.py
  run_ezpz label launch --output label "$@" -- python3 "$writer" "$lines"
  expect_eq "label: exit status" 0 "$rc"
  expect_eq "label: every console line labelled, whole" "$((4 * lines))" \
    "$(grep -cE '^\[([0-3])\] rank \1 seq [0-9]+ x*$' "$scratch/label.out")"
  expect_eq "label: nothing else on the console" "$((4 * lines))" "$(wc -l <"$scratch/label.out")"
  for rank in 0 1 2 3; do
    python3 "$writer" "$lines" --expect "$rank" >"$scratch/expected.$rank"
    grep "^\[$rank\] " "$scratch/label.out" | cut -c5- >"$scratch/console.$rank"
    expect_true "label: rank $rank's lines on the console, in order" \
      cmp -s "$scratch/expected.$rank" "$scratch/console.$rank"
    run_ezpz "show$rank" runs show --rank "$rank"
    expect_true "runs show --rank $rank: exactly what the rank wrote" \
      cmp -s "$scratch/expected.$rank" "$scratch/show$rank.out"
  done
}
