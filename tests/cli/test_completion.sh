#!/usr/bin/env bash
# Shell completion and the man page, both generated from the definitions behind
# --help: the bash script is loaded into bash and asked to complete words (machine
# names come from the ezpz being completed, a user's profile included); the zsh
# one into zsh with its completion builtins recorded; the man page rendered by
# groff with no warnings, naming every subcommand with the words of its --help.
source "$(dirname "$0")/lib.sh"

bash_script="$scratch/ezpz.bash"
"$EZPZ_BIN" completion bash >"$bash_script"
expect_eq "bash: the script is valid bash" "" "$(bash -n "$bash_script" 2>&1)"

# complete WORD... : what bash offers for the last word (sorted, one line), as
# readline would ask _ezpz for it; "(default)" when it hands back to filenames.
complete_words() {
  clean_env EZPZ_MACHINES_PATH="${mine:-}" bash -c '
    source "$1"; shift
    compopt() { [[ $* == "-o default" ]] && echo "(default)"; }
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
    _ezpz
    printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$bash_script" "${completer:-$EZPZ_BIN}" "$@" | xargs
}
expect_eq "bash: a subcommand" "launch" "$(complete_words la)"
expect_eq "bash: every subcommand" "completion doctor env kill launch machines runs stacks submit test yeet" \
  "$(complete_words '')"
expect_eq "bash: an option of launch" "--machine" "$(complete_words launch --mach)"
expect_eq "bash: --machine's value, a profile name" "aurora" "$(complete_words launch --machine au)"
expect_eq "bash: a nested subcommand" "show" "$(complete_words machines sh)"
expect_eq "bash: machines show NAME" "perlmutter polaris" "$(complete_words machines show p)"
expect_eq "bash: --color's words" "always auto" "$(complete_words --color a)"
expect_eq "bash: --scheduler's words, flux among them" "flux local pbs slurm" \
  "$(complete_words launch --scheduler '')"
expect_eq "bash: --launcher's words, flux among them" "flux" "$(complete_words launch --launcher f)"
expect_eq "bash: --launcher's words come from the launcher table: aprun" "aprun" "$(complete_words launch --launcher ap)"
expect_eq "bash: --launcher's words, the names users type: ompi" "ompi" "$(complete_words launch --launcher om)"
expect_eq "bash: a value is not mistaken for a subcommand" "launch" "$(complete_words --color never la)"
expect_eq "bash: -q is --quiet at the top" "launch" "$(complete_words -q la)"
expect_eq "bash: after --, the user's command" "(default)" "$(complete_words launch -- pyth)"
expect_eq "bash: after the command's first word, its own arguments" "(default)" \
  "$(complete_words launch python3 --ma)"
mine="$scratch/mine"
mkdir -p "$mine"
printf 'launcher: hydra\n' >"$mine/mybox.yaml"
expect_eq "bash: a user's profile completes too" "mybox" "$(complete_words launch --machine my)"
unset mine
# Hostile machine names (a profile's file name is anyone's choice; the loader refuses such
# names, but the script must be safe whatever `ezpz machines list --names` prints): offered as
# text, never run. Before: compgen -W ran `touch` when TAB was pressed after --machine.
pwned="$scratch/pwned"
mkdir -p "$pwned"
completer="$scratch/evil-ezpz"
printf '#!/bin/sh\nprintf "%%s\\n" %s %s %s\n' \
  "'\$(touch\${IFS}$pwned/a)'" "'\`touch $pwned/b\`'" "'x;touch $pwned/c'" >"$completer"
chmod +x "$completer"
expect_eq "bash, hostile names: offered as they are" "\$(touch\${IFS}$pwned/a)" \
  "$(complete_words launch --machine '$')"
expect_eq "bash, hostile names: machines show" "x;touch $pwned/c" "$(complete_words machines show x)"
complete_words launch --machine '' >/dev/null
unset completer
expect_eq "bash, hostile names: nothing ran" "" "$(ls "$pwned")"
# A file named like code, on --hostfile: offered, not run (run, it would touch d in $pwned).
mkdir -p "$scratch/files"
touch "$scratch/files/\$(touch\${IFS}d)"
expect_eq "bash, a hostile file name: offered as it is" "$scratch/files/\$(touch\${IFS}d)" \
  "$(cd "$pwned" && complete_words launch --hostfile "$scratch/files/")"
expect_eq "bash, a hostile file name: nothing ran" "" "$(ls "$pwned")"
touch "$scratch/hosts.txt"
expect_eq "bash: --hostfile completes files" "$scratch/hosts.txt" \
  "$(complete_words launch --hostfile "$scratch/hos")"

# The installed script, found by bash-completion's own loader as bash finds it.
prefix="$scratch/prefix"
mkdir -p "$prefix/share/bash-completion/completions"
cp "$bash_script" "$prefix/share/bash-completion/completions/ezpz"
if [ -r /usr/share/bash-completion/bash_completion ]; then
  expect_eq "bash: bash-completion loads it from share/bash-completion/completions" \
    "complete -F _ezpz ezpz" \
    "$(clean_env XDG_DATA_DIRS="$prefix/share" bash -c '
        source /usr/share/bash-completion/bash_completion
        __load_completion ezpz && complete -p ezpz')"
else
  fail "bash-completion is not installed (scripts/setup installs it)"
fi

# --- zsh: the #compdef function, with compadd/_describe/_normal recorded ----------------------
zsh_script="$scratch/_ezpz"
"$EZPZ_BIN" completion zsh >"$zsh_script"
if command -v zsh >/dev/null; then
  expect_eq "zsh: the script is valid zsh" "" "$(zsh -n "$zsh_script" 2>&1)"
  zsh_complete() {
    clean_env zsh -f -c '
      compadd() { [[ $1 == -- ]] && shift; print -r -- "$@" }
      _describe() { print -r -- "${(@)${(P)4}%%:*}" }
      _normal() { print -r -- "(normal ${words[1]})" }
      _files() { print -r -- "(files)" }
      words=() CURRENT=1 PREFIX=""
      source "$1" >/dev/null; shift
      words=("$@"); CURRENT=$#; PREFIX=${@[-1]}
      _ezpz' _ "$zsh_script" "${completer:-$EZPZ_BIN}" "$@"
  }
  expect_eq "zsh: every subcommand" "launch test doctor yeet kill stacks runs submit machines env completion" \
    "$(zsh_complete '')"
  expect_eq "zsh: options of launch" "--machine" "$(zsh_complete launch --ma | tr ' ' '\n' | grep -x -- --machine)"
  expect_eq "zsh: --machine's value" "yes" \
    "$(zsh_complete launch --machine '' | tr ' ' '\n' | grep -qx aurora && echo yes)"
  expect_eq "zsh: after --, the user's command" "(normal python3)" "$(zsh_complete launch -- python3 x)"
  expect_eq "zsh: a file for --hostfile" "(files)" "$(zsh_complete launch --hostfile '')"
  completer="$scratch/evil-ezpz"
  expect_eq "zsh, hostile names: offered as they are" "\$(touch\${IFS}$pwned/a) \`touch $pwned/b\` x;touch $pwned/c" \
    "$(zsh_complete launch --machine '')"
  zsh_complete machines show '' >/dev/null
  unset completer
  expect_eq "zsh, hostile names: nothing ran" "" "$(ls "$pwned")"
else
  fail "zsh is not installed (scripts/setup installs it)"
fi

# --- The man page -------------------------------------------------------------------------------
page="$scratch/ezpz.1"
"$EZPZ_BIN" man >"$page"
expect_eq "man: groff renders it without a warning" "" "$(groff -man -ww -z "$page" 2>&1)"
text=$(MANWIDTH=200 COLUMNS=200 groff -man -Tutf8 -rLL=200n "$page" 2>/dev/null | sed 's/.\x08//g')
for sub in launch test doctor yeet kill stacks runs submit machines env completion; do
  summary=$("$EZPZ_BIN" --help | sed -n "s/^  $sub  *//p")
  expect_true "man: ezpz $sub, with its --help summary" bash -c 'test -n "$1" && grep -qF -- "$1" <<<"$2"' _ "$summary" "$text"
  expect_true "man: ezpz $sub has a section" grep -q "^   ezpz $sub " <<<"$text"
done
expect_true "man: launch's --idle-timeout is described" grep -qF -- "--idle-timeout" <<<"$text"
expect_true "man: launch's examples" grep -qF -- "ezpz launch -n 8 --ppn 4 -- python3 train.py" <<<"$text"
expect_true "man: ENVIRONMENT names NO_COLOR" grep -q "^       NO_COLOR" <<<"$text"
expect_true "man: the hidden man subcommand is not documented" bash -c '! grep -q "^   ezpz man" <<<"$1"' _ "$text"

expect_eq "completion: an unknown shell" "ezpz: error: SHELL: fish not in {bash,zsh}" \
  "$("$EZPZ_BIN" completion fish 2>&1 >/dev/null)"
finish
