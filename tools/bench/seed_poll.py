# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The seed's method as an outside poller: start the command, read the RSS of its process tree
every 50 ms with psutil (the seed read only its own process; the tree is the generous reading
for a command that forks), keep the maximum, and take CPU from wait4's rusage at the end.
With --output PATH, output_bytes is the size of PATH after the command, as the seed's caller
set it from path_bytes() of the artefact it had saved: exact for the file it is told about,
blind to any other. Without it, output_bytes is null, as in the seed.
Prints {"peak_rss_bytes", "cpu_s", "wall_s", "samples", "output_bytes"} on stderr's last line;
the command's own stdout passes through.

    seed_poll.py [--output PATH] CMD [ARGS...]
"""
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

INTERVAL_S = 0.05


def path_bytes(path):
    """The seed's path_bytes(): a file's size, or the recursive size of a directory."""
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return 0


def main():
    cmd, output = sys.argv[1:], None
    if cmd[:1] == ["--output"]:
        output, cmd = Path(cmd[1]), cmd[2:]
    start = time.monotonic()
    proc = subprocess.Popen(cmd)
    root = psutil.Process(proc.pid)
    peak = {"rss": 0, "n": 0}
    done = threading.Event()

    def sample():
        while not done.wait(INTERVAL_S):
            try:
                procs = [root] + root.children(recursive=True)
                rss = 0
                for p in procs:
                    try:
                        rss += p.memory_info().rss
                    except psutil.Error:
                        pass
            except psutil.Error:
                break
            peak["n"] += 1
            peak["rss"] = max(peak["rss"], rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    done.set()
    sampler.join(1.0)
    sys.stderr.write(json.dumps({"peak_rss_bytes": peak["rss"], "cpu_s": usage.ru_utime + usage.ru_stime,
                                 "wall_s": wall, "samples": peak["n"],
                                 "output_bytes": path_bytes(output) if output else None}) + "\n")
    sys.exit(os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else 0)


if __name__ == "__main__":
    main()
