#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Regenerate, or check, the output blocks of README.md (and docs/*.md) from what unitmeter prints.

A block is an HTML comment naming a command, then a fenced block that shows it and its output:

    <!-- output: unitmeter summary docs/example/calib.json -->
    ```
    $ unitmeter summary docs/example/calib.json
    ...what it printed: stdout, then stderr...
    ```

`output:` blocks run in the repository's root on committed files (docs/example/), so they are
byte-exact and are compared as such. `output-run:` blocks trace the bundled demo afresh (root,
tracefs) in a scratch directory, with `./fit_demo` standing for the demo's binary and `sudo`
shown before the command: pids, timings and cgroup paths change with every run, so each line
is compared word by word with every word that holds a digit masked.

    tools/readme-output.py                 # rewrite every block in place (make readme-output)
    tools/readme-output.py --check         # exit 1, naming each block that differs
    --no-run                               # leave output-run: blocks alone (no root needed)
    --only-run                             # only the output-run: blocks
    --fresh                                # rewrite the run blocks even when their shape holds

A run block whose shape still holds is left as it is, so `make readme-output` does not churn it
with new pids; regenerate it with --fresh on a quiet machine (a busy one shows fits at 0.4 cores).

UNITMETER and DEMO name the binaries (default: the build's, .output/); --root the directory the
commands run in (default: the repository holding this script).
"""
import argparse
import difflib
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MARK = re.compile(r"^<!-- (output|output-run): (.*?) -->\s*$")


def run_block(kind, cmd, root, unitmeter, demo):
    """What the block should hold: the command as shown, then its stdout and stderr."""
    argv = shlex.split(cmd)
    if argv[0] != "unitmeter":
        raise SystemExit("readme-output: a block's command must start with unitmeter: %s" % cmd)
    argv[0] = unitmeter
    env = dict(os.environ, LC_ALL="C.UTF-8")
    if kind == "output-run":
        argv = [demo if a == "./fit_demo" else a for a in argv]
        with tempfile.TemporaryDirectory(prefix="um-readme-") as tmp:
            p = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True)
        shown = "$ sudo " + cmd
    else:
        p = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True)
        shown = "$ " + cmd
    if p.returncode != 0:
        raise SystemExit("readme-output: `%s` exited %d:\n%s" % (cmd, p.returncode, p.stderr))
    return [shown] + (p.stdout + p.stderr).rstrip("\n").split("\n")


def masked(lines):
    """A run's lines as words, every word holding a digit replaced: its shape, not its figures."""
    return [" ".join("#" if re.search(r"\d", w) else w for w in line.split()) for line in lines]


def blocks(text):
    """(kind, command, first line of the block's body, line after its closing fence) each."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if m:
            if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
                raise SystemExit("readme-output: line %d: no fenced block after the marker" % (i + 1))
            end = i + 2
            while end < len(lines) and lines[end] != "```":
                end += 1
            if end == len(lines):
                raise SystemExit("readme-output: line %d: the block is not closed" % (i + 2))
            yield m.group(1), m.group(2), i + 2, end
            i = end
        i += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("--only-run", action="store_true")
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--root", default=os.path.dirname(HERE))
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    unitmeter = os.path.abspath(os.environ.get("UNITMETER") or os.path.join(root, ".output/unitmeter"))
    demo = os.path.abspath(os.environ.get("DEMO") or os.path.join(root, ".output/demo/fit_demo"))
    files = a.files or [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs/*.md")))
    stale = 0
    for path in files:
        with open(path) as f:
            text = f.read()
        lines = text.split("\n")
        # from the last block up, so each block's line numbers still hold when one is rewritten
        for kind, cmd, body, end in reversed(list(blocks(text))):
            if (kind == "output-run" and a.no_run) or (kind == "output" and a.only_run):
                continue
            want = run_block(kind, cmd, root, unitmeter, demo)
            have = lines[body:end]
            same = masked(have) == masked(want) if kind == "output-run" else have == want
            if same and not (a.fresh and kind == "output-run" and not a.check):
                continue
            if a.check:
                stale += 1
                sys.stderr.write("%s:%d: the block of `%s` differs from what the binary prints%s:\n"
                                 % (path, body, cmd, " (words with digits masked)" if kind == "output-run" else ""))
                old, new = (masked(have), masked(want)) if kind == "output-run" else (have, want)
                sys.stderr.writelines(l + "\n" for l in difflib.unified_diff(old, new, "README", "binary", lineterm="", n=1))
            else:
                lines[body:end] = want
        if not a.check:
            new_text = "\n".join(lines)
            if new_text != text:
                with open(path, "w") as f:
                    f.write(new_text)
                print("readme-output: rewrote %s" % os.path.relpath(path, root))
    if stale:
        sys.stderr.write("readme-output: %d block(s) stale: run `make readme-output` (as root for the run blocks)\n" % stale)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
