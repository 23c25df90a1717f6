#!/usr/bin/env bash
# ezpz machines: list (every profile on the search path, a user's replacing a
# bundled one), show (YAML the loader reads back to the same profile), which (the
# profile ezpz launch would use, and its rule), and the errors word for word.
source "$(dirname "$0")/lib.sh"

machines() { clean_env "$@" "$EZPZ_BIN" machines "${words[@]}"; }
bundled=$(ls "$EZPZ_SRC/machines" | sed -n 's/\.yaml$//p')

words=(list --names)
expect_eq "list --names: every bundled profile, by name" "$bundled" "$(machines)"
words=()
expect_eq "machines alone lists" "$(words=(list); machines)" "$(machines)"
words=(list)
out=$(machines)
expect_eq "list: a header, then one row per profile" "NAME SCHEDULER LAUNCHER MATCH FILE" \
  "$(head -1 <<<"$out" | xargs)"
expect_eq "list: aurora's row" "aurora pbs pals hostname x4* or aurora* $EZPZ_SRC/machines/aurora.yaml" \
  "$(grep '^aurora ' <<<"$out" | tr -s ' ')"
expect_eq "list: columns line up" 1 "$(awk '{print index($0, $NF)}' <<<"$out" | sort -u | wc -l)"
expect_true "list: the generic PBS profile says when it applies" \
  grep -q "^generic-pbs .* fallback for pbs jobs  " <<<"$out"

mine="$scratch/mine"
mkdir -p "$mine"
printf 'description: mine\nlauncher: hydra\ngpus_per_node: 3\n' >"$mine/local.yaml"
expect_eq "list: a user's profile replaces the bundled one" \
  "local - hydra fallback for local jobs $mine/local.yaml" \
  "$(machines EZPZ_MACHINES_PATH="$mine" | grep '^local ' | tr -s ' ')"

words=(show aurora)
shown=$(machines)
expect_eq "show: the file it came from first" "# aurora: $EZPZ_SRC/machines/aurora.yaml" "$(head -1 <<<"$shown")"
expect_true "show: aurora's keys" grep -q "^gpus_per_node: 12$" <<<"$shown"
expect_true "show: aurora's batch filesystems" grep -q "^  filesystems: home:flare$" <<<"$shown"
# Shown YAML is a profile: saved under another name, it loads and shows the same.
sed 1d <<<"$shown" >"$mine/copy.yaml"
words=(show copy)
expect_eq "show: what it prints loads back unchanged" "$(sed 1d <<<"$shown")" \
  "$(machines EZPZ_MACHINES_PATH="$mine" | sed 1d)"

words=(which)
expect_eq "which: no scheduler, no match: the local profile" "local
  file: $EZPZ_SRC/machines/local.yaml
  rule: no hostname matched; generic profile for local" "$(machines | head -3)"
expect_eq "which: EZPZ_MACHINE names one" "polaris EZPZ_MACHINE=polaris" \
  "$(machines EZPZ_MACHINE=polaris | sed -n '1p;3p' | sed 's/^  rule: //' | xargs)"
words=(which --scheduler pbs)
expect_eq "which --scheduler pbs: the generic PBS profile" \
  "generic-pbs no hostname matched; generic profile for pbs" \
  "$(machines | sed -n '1p;3p' | sed 's/^  rule: //' | xargs)"

words=(show nosuch)
expect_eq "show: an unknown name" \
  "ezpz: error: unknown machine \"nosuch\" (from ezpz machines show); known: $(paste -sd, <<<"$bundled" | sed 's/,/, /g')" \
  "$(machines 2>&1 >/dev/null)"
machines >/dev/null 2>&1
expect_eq "show: an unknown name exits 2" 2 "$?"
words=(show)
expect_eq "show: no name" "ezpz: error: NAME is required" "$(machines 2>&1 >/dev/null)"
printf 'launcher: hydra\ngpus_per_node: many\n' >"$mine/broken.yaml"
words=(list)
expect_eq "list: a broken profile is listed, its error where the file goes" \
  "broken - - BROKEN $mine/broken.yaml:2: gpus_per_node: expected an integer, got \"many\"" \
  "$(machines EZPZ_MACHINES_PATH="$mine" 2>"$scratch/list.err" | grep '^broken ' | tr -s ' ')"
expect_eq "list: and says nothing on stderr" "" "$(cat "$scratch/list.err")"
words=(show broken)
expect_eq "show: a broken profile gives its own error" \
  "ezpz: error: $mine/broken.yaml:2: gpus_per_node: expected an integer, got \"many\"" \
  "$(machines EZPZ_MACHINES_PATH="$mine" 2>&1 >/dev/null)"
printf 'launcher: hydra\nenv:\n  HF_TOKEN: hf_s3cr3t\n  GITHUB_PAT: ghp_s3cr3t\n  NCCL_DEBUG: INFO\n' >"$mine/secrets.yaml"
words=(show secrets)
expect_eq "show: a profile's secret env values are redacted" "env:
  HF_TOKEN: <redacted>
  GITHUB_PAT: <redacted>
  NCCL_DEBUG: INFO" "$(machines EZPZ_MACHINES_PATH="$mine" | sed -n '/^env:/,/^[a-z]/p' | grep -v '^[a-z_]*: ')"
finish
