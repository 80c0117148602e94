#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The bash completion in a real bash with Debian's bash-completion loaded: each case sets
# COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT as readline would (words split at blanks and
# at COMP_WORDBREAKS characters such as ':' and '='), calls _unitmeter, and checks COMPREPLY.
#   tests/completion/test-completion.sh COMPLETION_SCRIPT FIT_DEMO
set -uo pipefail
completion=$1
demo=$(realpath "$2")
# bash_completion returns early unless the shell is interactive or this is set
BASH_COMPLETION_VERSINFO=${BASH_COMPLETION_VERSINFO-}
source /usr/share/bash-completion/bash_completion || { echo "bash-completion is not installed"; exit 1; }
source "$completion"
# compopt works only while readline runs a completion: here it records what it was asked
compopt() { COMPOPTS+=" $*"; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"; [ -n "${sleeper:-}" ] && kill "$sleeper" 2>/dev/null' EXIT
cat >"$scratch/fit.py" <<'PY'
import numpy as np

def fit(x):
    def inner():
        pass
    return x

class Model:
    def fit(self, x):
        return x
    class Inner:
        async def fit_async(self):
            pass

def fold(k):
    return k
PY
cp "$demo" "$scratch/fit_demo"
echo '{}' >"$scratch/calib.json"
mkdir "$scratch/bin" && ln -s "$demo" "$scratch/bin/fit_demo_on_path"
cd "$scratch"
PATH=$scratch/bin:$PATH

failures=0
# complete LINE_WITH_A_CURSOR: the cursor is where "^" is (at the end when there is none)
complete_at()
{
    local line=$1 before after
    if [[ $line == *^* ]]; then before=${line%%^*}; after=${line#*^}; else before=$line; after=; fi
    COMP_LINE=$before$after
    COMP_POINT=${#before}
    # readline's split: blanks separate words; each run of wordbreak characters is a word
    local split_before split_after
    split_before=$(sed -E 's/([:=]+)/ \1 /g' <<<"$before")
    split_after=$(sed -E 's/([:=]+)/ \1 /g' <<<"$after")
    read -ra COMP_WORDS <<<"$split_before"
    # the cursor after a blank or a wordbreak starts a new, empty word
    [[ $before == *[\ :=] ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    local rest
    read -ra rest <<<"$split_after"
    if [[ $after != ' '* && ${#rest[@]} -gt 0 && ${COMP_WORDS[COMP_CWORD]} != "" ]]; then
        COMP_WORDS[COMP_CWORD]+=${rest[0]}
        rest=("${rest[@]:1}")
    fi
    COMP_WORDS+=("${rest[@]}")
    COMPREPLY=() COMPOPTS=
    _unitmeter unitmeter "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
}

# expect LINE WORD...: each WORD is among the completions; !WORD: it is not; a file name that
# is absent is also right where the completion handed the word to readline's own file names
# (bash-completion 2.12 on, Debian 13, for a command with no completion of its own)
expect()
{
    local line=$1 want got
    shift
    complete_at "$line"
    got=" ${COMPREPLY[*]} "
    for want in "$@"; do
        if [[ $want == !* ]]; then
            [[ $got != *" ${want#!} "* ]] && continue
        elif [[ $got == *" $want "* ]]; then
            continue
        elif [[ ${#COMPREPLY[@]} == 0 && $COMPOPTS == *"-o default"* && -e $want ]]; then
            continue
        fi
        echo "FAIL: '$line' -> [${COMPREPLY[*]}], wanted $want"
        failures=$((failures + 1))
        return
    done
    echo "ok: '$line' -> ${#COMPREPLY[@]} completions"
}

expect 'unitmeter ' run attach hw check summary project report
expect 'unitmeter pr' project '!run'
expect 'unitmeter run --lo' --lookup-at-exec '!--units'
expect 'unitmeter run --a' --as-root
expect 'unitmeter attach --d' --duration
expect 'unitmeter project --time-stat ' p90 max
expect 'unitmeter project --format=' sbatch json
expect 'unitmeter help ' run attach hw check summary project report '!help'
expect 'unitmeter summary --' --by-task --json --help '!--tasks'
expect 'unitmeter project --e' --explain
expect 'unitmeter run --tmp' --tmp-dir
# the issue's case: the cursor in the middle, the command after it
expect 'unitmeter run --unit fi^ -- ./fit_demo' fit_unit '!main'
expect 'unitmeter run -u fit_^ -- ./fit_demo out' fit_unit
expect 'unitmeter run --unit=fi^ -- ./fit_demo' fit_unit
# through PATH, and without "--"
expect 'unitmeter run -q --unit fi^ fit_demo_on_path' fit_unit
# PATH:SYMBOL: the word after the colon is the symbol
expect 'unitmeter run --unit ./fit_demo:fi' fit_unit
expect 'unitmeter run --unit ./fit_d' ./fit_demo:
# python: the functions the script defines, by qualified name
expect 'unitmeter run --unit python:f^ -- python3 fit.py' fit fold '!inner' '!Model.fit'
expect 'unitmeter run --unit python:Model.^ -- python3 fit.py' Model.fit Model.Inner.fit_async
expect 'unitmeter run --unit py^ -- python3 fit.py' python:
# attach: the symbols of /proc/PID/exe
/usr/bin/python3 -c 'import time; time.sleep(60)' &
sleeper=$!
expect "unitmeter attach -p $sleeper --unit Py_Initiali" Py_Initialize
# the command after "--", and its files
expect 'unitmeter run --unit fit_unit -- fit_demo_on' fit_demo_on_path
expect 'unitmeter run -- ./fit_demo ./fi' ./fit.py
expect 'unitmeter summary ' calib.json '!fit.py'
expect 'unitmeter project --units 9 ' calib.json
expect 'unitmeter report --un' --units --units-per-task '!--unit'
expect 'unitmeter report ' calib.json '!fit.py'
expect 'unitmeter run --report ' fit.py
expect 'unitmeter hw -o ' fit.py

if ((failures)); then
    echo "completion: $failures case(s) failed"
    exit 1
fi
echo "completion: every case passed"
