#!/usr/bin/env bash
# `ezpz test` never writes into an output directory that exists: a run in the
# same second as another gets <timestamp>-2. The seconds this run may start in
# are taken beforehand, each holding a marker that must survive. A fake
# trainer (it writes a passing summary.json) keeps this free of libtorch;
# MPICH's Hydra runs it, whichever mpiexec Debian's alternatives chose.
source "$(dirname "$0")/common.sh"
hydra=$(command -v mpiexec.hydra) || { echo "skipped: no mpiexec.hydra (install mpich)"; exit 77; }

bin="$scratch/bin"
work="$scratch/work"
mkdir -p "$bin" "$work" "$scratch/hydra"
# A wrapper, not a link: Hydra looks for its proxy beside the path it was started as.
printf '#!/bin/sh\nexec %s "$@"\n' "$hydra" >"$scratch/hydra/mpiexec"
chmod +x "$scratch/hydra/mpiexec"
cp "$EZPZ_BIN" "$(dirname "$EZPZ_BIN")/ezpz-rankenv" "$bin/"
cat >"$bin/ezpz-smoke" <<'SH'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --output-dir ] && dir=$2; shift; done
printf '{"status":"pass","world_size":1,"samples_per_s":10,"final_loss":0.5,"report":"%s/report.md"}' \
  "$dir" >"$dir/summary.json"
SH
chmod +x "$bin/ezpz-smoke"

taken=()
now=$(date +%s)
for second in $(seq "$now" $((now + 30))); do
  dir="$work/outputs/ezpz-test/$(date -d "@$second" +%Y-%m-%d-%H%M%S)"
  mkdir -p "$dir" && echo earlier >"$dir/marker" && taken+=("$dir")
done

out=$(cd "$work" && clean_env PATH="$scratch/hydra:/usr/bin:/bin" timeout 60 "$bin/ezpz" test -n 1 \
  --no-record 2>"$scratch/err"); rc=$?
expect_eq "exit status" 0 "$rc"
expect_eq "stderr" "" "$(cat "$scratch/err")"
made=$(sed -n 's|^ezpz test: PASS: 1 rank, 10 samples/s, final loss 0.5, report \(.*\)/report.md$|\1|p' <<<"$out")
expect_match "the run's directory is a taken one's -2" "^$work/outputs/ezpz-test/[0-9-]{17}-2\$" "$made"
expect_true "its summary is there" test -s "$made/summary.json"
intact=0
for dir in "${taken[@]}"; do
  [ "$(ls "$dir")" == marker ] && [ "$(cat "$dir/marker")" == earlier ] && intact=$((intact + 1))
done
expect_eq "every earlier directory untouched" "${#taken[@]}" "$intact"
finish
