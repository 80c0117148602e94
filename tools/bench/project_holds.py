#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Does a projection hold? Calibrate on a few units, project a task 10-20x larger, run that task
untraced and confined as SLURM would, and compare what was asked with what it took.

Each round of each workload:
  1. `unitmeter run --unit SPEC -q -o DIR/calib.json -- CMD --units n_cal` (the calibration);
  2. `unitmeter project DIR/calib.json --units N --tasks 1 --format json [--project-args ...]`;
  (the page cache dropped before 1 and 3, unless --warm-cache: each starts as on a fresh node)
  3. CMD --units N, untraced, in a fresh memory cgroup limited to request.mem_mib (no swap),
     under `taskset` to request.cpus_per_task CPUs, killed (its whole process group) when it
     passes request.time_s_projected, the time limit before its rounding to whole minutes.
Recorded: time asked/took, memory asked/the cgroup's own peak, CPUs asked, and whether the task
was killed (time: it passed the limit; memory: the cgroup's OOM killer ran, or SIGKILL came from
elsewhere). A kill is a finding, not a failure; a failure is a step that crashed.

Prints a Markdown table (one row per workload) and, with --json, writes every round's figures.
Needs root (tracing, cgroups). Standard library only.
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
UNITMETER = os.environ.get("UNITMETER") or os.path.join(TOP, ".output", "unitmeter")
WORKLOAD_DIR = os.environ.get("WORKLOADS") or os.path.join(TOP, ".output", "workloads")
FITS = os.path.join(TOP, "tools", "workloads", "python", "fits.py")
PYTHON = "/usr/bin/python3"
MIB = 1024 * 1024
CALIBRATION_LIMIT_S = 600  # a calibration of a few units that runs longer than this is hung


def calib(*args):
    return [os.path.join(WORKLOAD_DIR, "calib")] + list(args)


def fits(*args):
    return [PYTHON, FITS] + list(args)


# name: the unit spec, the command (without --units), units calibrated, units of the full task
# and of the --quick task, and what the workload stands for (the cases a-f).
WORKLOADS = {
    "c-serial": ("fit_unit", calib("--mode", "serial", "--mib", "64", "--cpu-ms", "20"), 10, 200, 60,
                 "C units, a 64 MiB spike each and 20 ms of CPU"),
    "fork-pool": ("fit_unit", calib("--mode", "pool", "--workers", "4", "--shared-mib", "256",
                                    "--mib", "16", "--cpu-ms", "400"), 6, 72, 36,
                  "4 forked workers sharing a 256 MiB array touched before the fork"),
    "py-serial": ("python:fit", fits("--mode", "serial"), 8, 100, 40,
                  "sklearn fits in one process, a 3 s data load, sklearn imported by the first fit"),
    "py-pool": ("python:fit", fits("--mode", "pool", "--workers", "2"), 8, 96, 40,
                "ProcessPoolExecutor of 2, one BLAS thread, the data loaded before the pool"),
    # 18 calibrated: each worker's first fit (its warm-up) and 16 steady ones, 4 of them big: the
    # full run's mix. Its period is 4 fits, so the first 8 held a third of big fits, not a quarter,
    # and every projection from them asked ~1.1x the mean: a calibration must cover the mix.
    "py-pool-mixed": ("python:fit", fits("--mode", "pool", "--workers", "2", "--mixed"), 18, 216, 36,
                      "the same, every 4th fit on 3x the rows"),
    "c-threads": ("fit_unit", calib("--mode", "threads", "--threads", "2", "--mib", "32",
                                    "--cpu-ms", "300"), 8, 80, 40,
                  "C units of 2 threads of CPU each"),
}


class Failed(Exception):
    """A step of a round that crashed: the message says which and why."""


def tail(text, n=300):
    text = (text or "").strip()
    return text[-n:] if text else "(nothing on stderr)"


def last_json(text):
    for line in reversed((text or "").splitlines()):
        if line.strip().startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


# --- the memory cgroup -----------------------------------------------------------------------

def cgroup_version():
    """2 on the unified hierarchy, 1 when v1 has a memory controller, None without one."""
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        with open("/sys/fs/cgroup/cgroup.controllers") as f:
            return 2 if "memory" in f.read().split() else None
    return 1 if os.path.isdir("/sys/fs/cgroup/memory") else None


def read_file(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def write_file(path, text):
    with open(path, "w") as f:
        f.write(text)


class MemCgroup:
    """A memory cgroup of this run's own, limited as SLURM's task/cgroup plugin limits a task:
    the memory and no swap on top. v1: a child of this process's own memory cgroup (so whatever
    confines this process confines the task too); v2: a child of the root, as tests/test_charge.c
    does (a non-root v2 cgroup with processes in it cannot give its children the controller)."""

    def __init__(self, version, name, limit_bytes):
        self.version = version
        if version == 1:
            own = "/"
            for line in (read_file("/proc/self/cgroup") or "").splitlines():
                parts = line.split(":", 2)
                if len(parts) == 3 and "memory" in parts[1].split(","):
                    own = parts[2]
            self.dir = os.path.join("/sys/fs/cgroup/memory" + own.rstrip("/"), name)
        else:
            try:
                write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory")
            except OSError:
                pass  # already on, or refused: mkdir's memory.max shows which
            self.dir = os.path.join("/sys/fs/cgroup", name)
        os.mkdir(self.dir)
        try:
            if version == 1:
                write_file(self.path("memory.limit_in_bytes"), str(limit_bytes))
                # memory+swap, where the kernel accounts swap: equal to memory, so no swap
                if os.path.exists(self.path("memory.memsw.limit_in_bytes")):
                    write_file(self.path("memory.memsw.limit_in_bytes"), str(limit_bytes))
            else:
                write_file(self.path("memory.max"), str(limit_bytes))
                if os.path.exists(self.path("memory.swap.max")):
                    write_file(self.path("memory.swap.max"), "0")
        except OSError:
            self.remove()
            raise

    def path(self, name):
        return os.path.join(self.dir, name)

    def join(self):
        """In the child between fork and exec: move it into the cgroup."""
        write_file(self.path("cgroup.procs"), str(os.getpid()))

    def peak_bytes(self):
        """The kernel's high-water mark of the cgroup's charge; None where it keeps none
        (v2 before 5.19)."""
        text = read_file(self.path("memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"))
        return int(text) if text and text.strip().isdigit() else None

    def oom_kills(self):
        """How many processes the OOM killer killed in the cgroup; None where not counted."""
        text = read_file(self.path("memory.oom_control" if self.version == 1 else "memory.events"))
        for line in (text or "").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return None

    def remove(self):
        """Kill whatever is left in it, then remove it; the kernel refuses rmdir (EBUSY) until
        the last task has exited, so retry for a few seconds."""
        for _ in range(50):
            for pid in (read_file(self.path("cgroup.procs")) or "").split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.rmdir(self.dir)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)
        sys.stderr.write("project_holds: cannot remove the cgroup %s: remove it with rmdir\n" % self.dir)


# --- one round -------------------------------------------------------------------------------

def drop_caches():
    """A fresh node: neither the calibration nor the task finds the modules and libraries it
    reads already cached (and charged to an earlier cgroup), so both are charged for them and
    neither's time depends on what ran before it."""
    os.sync()
    try:
        write_file("/proc/sys/vm/drop_caches", "3")
    except OSError as e:
        raise Failed("cannot drop the page cache (/proc/sys/vm/drop_caches): %s" % e)


def calibrate(spec, cmd, n_cal, manifest):
    """unitmeter run on n_cal units. In our process group, so a Ctrl-C reaches unitmeter too and
    it finishes as it does on its own Ctrl-C; on any other way out, SIGINT, then SIGKILL."""
    args = [UNITMETER, "run", "--unit", spec, "-q", "-o", manifest, "--"] + cmd + ["--units", str(n_cal)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=CALIBRATION_LIMIT_S)
    except BaseException:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=10)
        except BaseException:
            proc.kill()
            proc.wait()
        raise
    if proc.returncode or not os.path.exists(manifest):
        raise Failed("calibration (%s) exited %d: %s" % (" ".join(args), proc.returncode, tail(err)))


def project(manifest, n_units, project_args):
    args = [UNITMETER, "project", manifest, "--units", str(n_units), "--tasks", "1", "--format", "json"]
    proc = subprocess.run(args + project_args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode:
        raise Failed("project (%s) exited %d: %s" % (" ".join(args + project_args), proc.returncode,
                                                    tail(proc.stderr)))
    try:
        request = json.loads(proc.stdout)["request"]
        return request["time_s_projected"], request["mem_mib"], request["cpus_per_task"]
    except (ValueError, KeyError, TypeError) as e:
        raise Failed("project printed no request.time_s_projected/mem_mib/cpus_per_task: %s" % e)


def run_confined(cmd, n_units, time_s, mem_mib, cpus, cg_version, rec, limit_factor=1.0):
    """The full task as SLURM would run it (killed at limit_factor x the time asked: 1 as SLURM
    does); fills rec's took/peak/killed figures."""
    allowed = sorted(os.sched_getaffinity(0))
    given = allowed[:cpus]
    rec["cpus_given"] = len(given)
    rec["cpus_capped"] = cpus > len(allowed)
    cg = MemCgroup(cg_version, "um-holds-%d" % os.getpid(), mem_mib * MIB)
    proc = None
    try:
        start = time.monotonic()
        # a session of its own: the timeout kills its whole process group (pool workers too),
        # and a Ctrl-C at the terminal reaches this script, which then kills it
        proc = subprocess.Popen(["taskset", "-c", ",".join(map(str, given))] + cmd + ["--units", str(n_units)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, preexec_fn=cg.join)
        try:
            out, err = proc.communicate(timeout=time_s * limit_factor)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        rec["time_took_s"] = time.monotonic() - start
        rec["mem_peak_mib"] = cg.peak_bytes() / MIB if cg.peak_bytes() is not None else None
        ooms = cg.oom_kills()
        rec["exit_status"] = proc.returncode
        if timed_out:
            rec["killed"] = "time"
        elif ooms or proc.returncode == -signal.SIGKILL:
            rec["killed"] = "memory"
        else:
            rec["killed"] = "none"
        truth = last_json(out) or {}
        rec["units_done"] = truth.get("units")
        rec["task_wall_s"] = truth.get("wall_s")
        rec["finished"] = proc.returncode == 0 and truth.get("units") == n_units
        if rec["killed"] == "none" and not rec["finished"]:
            raise Failed("the task (%s) exited %d with %s of %d units: %s"
                         % (" ".join(cmd), proc.returncode, truth.get("units"), n_units, tail(err)))
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        cg.remove()


def one_round(name, index, quick, project_args, cg_version, limit_factor=1.0, cold=True, keep=None):
    spec, cmd, n_cal, n_full, n_quick, _ = WORKLOADS[name]
    n_units = n_quick if quick else n_full
    rec = {"workload": name, "round": index, "spec": spec, "units_calibrated": n_cal, "units_task": n_units,
           "time_asked_s": None, "time_took_s": None, "time_ratio": None,
           "mem_asked_mib": None, "mem_peak_mib": None, "mem_ratio": None,
           "cpus_asked": None, "cpus_given": None, "cpus_capped": None,
           "time_limit_s": None, "killed": None, "finished": False, "exit_status": None, "units_done": None,
           "task_wall_s": None, "error": None}
    tmp = tempfile.mkdtemp(prefix="um-holds-")
    try:
        manifest = os.path.join(tmp, "calib.json")
        if cold:
            drop_caches()
        calibrate(spec, cmd, n_cal, manifest)
        time_s, mem_mib, cpus = project(manifest, n_units, project_args)
        rec.update(time_asked_s=time_s, mem_asked_mib=mem_mib, cpus_asked=cpus,
                   time_limit_s=time_s * limit_factor)
        if cold:
            drop_caches()
        run_confined(cmd, n_units, time_s, mem_mib, cpus, cg_version, rec, limit_factor)
    except (Failed, OSError, subprocess.SubprocessError) as e:
        rec["error"] = "%s round %d: %s" % (name, index, e)
    finally:
        if keep:
            # the calibration's files, to project again from them (a changed model against the
            # same tasks' figures in --json)
            rec["kept"] = os.path.join(keep, "%s-%d" % (name, index))
            shutil.copytree(tmp, rec["kept"], dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
    if rec["time_took_s"]:
        rec["time_ratio"] = rec["time_asked_s"] / rec["time_took_s"]
    if rec["mem_peak_mib"]:
        rec["mem_ratio"] = rec["mem_asked_mib"] / rec["mem_peak_mib"]
    return rec


def run(names, rounds, quick=False, project_args=(), log=sys.stderr, limit_factor=1.0, cold=True,
        keep=None):
    """Every round of every named workload: (the rounds' records, the failures' messages)."""
    cg_version = cgroup_version()
    if cg_version is None:
        return [], ["no memory controller on this kernel or boot: the task cannot be confined"]
    records = []
    for index in range(1, rounds + 1):
        for name in names:
            rec = one_round(name, index, quick, list(project_args), cg_version, limit_factor, cold, keep)
            records.append(rec)
            log.write("project_holds: %s round %d: %s\n" % (name, index, rec["error"] or
                      "time %s, memory %s, killed: %s" % (ratio(rec["time_ratio"]), ratio(rec["mem_ratio"]),
                                                         rec["killed"])))
    return records, [r["error"] for r in records if r["error"]]


# --- the table -------------------------------------------------------------------------------

def ratio(x):
    return "%.2fx" % x if x is not None else "n/a"


def spread(values, fmt):
    """median (min-max) of the figures that could be read; n/a when none."""
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    if len(values) == 1:
        return fmt % values[0]
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(values), min(values), max(values))


def table(records):
    lines = ["| workload | units: calibrated, task | rounds | killed | time asked/took | "
             "asked, took (s) | memory asked/peak | asked, peak (MiB) | CPUs asked |",
             "|---|---|---|---|---|---|---|---|---|"]
    capped = False
    for name in WORKLOADS:
        rows = [r for r in records if r["workload"] == name]
        if not rows:
            continue
        kills = [r["killed"] for r in rows if r["killed"] not in (None, "none")]
        med = lambda key: spread([r[key] for r in rows], "%.1f")
        cpus = sorted({r["cpus_asked"] for r in rows if r["cpus_asked"] is not None})
        capped = capped or any(r["cpus_capped"] for r in rows)
        lines.append("| %s | %d, %d | %d | %s | %s | %s, %s | %s | %s, %s | %s |" % (
            name, rows[0]["units_calibrated"], rows[0]["units_task"], len(rows),
            ", ".join("%d %s" % (kills.count(k), k) for k in sorted(set(kills))) or "none",
            spread([r["time_ratio"] for r in rows], "%.2fx"), med("time_asked_s"), med("time_took_s"),
            spread([r["mem_ratio"] for r in rows], "%.2fx"), med("mem_asked_mib"), med("mem_peak_mib"),
            ", ".join(map(str, cpus)) or "n/a"))
    lines.append("")
    lines.append("Medians over the rounds, min-max in brackets. Time asked is `request.time_s_projected` "
                 "(the margin in, before the rounding to whole minutes), and the task is killed there; "
                 "memory asked is `request.mem_mib`, the cgroup's limit, beside the cgroup's own peak "
                 "(%s); the task runs under `taskset` on as many CPUs as asked%s."
                 % ("memory.max_usage_in_bytes" if cgroup_version() == 1 else "memory.peak",
                    " (capped at this machine's %d: some rounds asked for more)" % len(os.sched_getaffinity(0))
                    if capped else ""))
    return lines


def interrupted(signum, frame):
    raise KeyboardInterrupt


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     epilog="workloads: " + ", ".join(WORKLOADS) + " (or all)")
    parser.add_argument("--workloads", default="all", help="comma-separated names, or all")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller tasks (about 10x the calibration)")
    parser.add_argument("--project-args", default="",
                        help="more arguments for unitmeter project, e.g. '--workers 2'")
    parser.add_argument("--json", metavar="FILE", help="write every round's figures here")
    parser.add_argument("--time-limit", type=float, default=1.0, metavar="F",
                        help="kill the task at F x the time asked (default 1, as SLURM does; the test "
                             "suite, which runs beside other tests, gives 2)")
    parser.add_argument("--warm-cache", action="store_true",
                        help="do not drop the page cache before each calibration and task (dropped by "
                             "default: each starts as on a fresh node)")
    parser.add_argument("--keep", metavar="DIR", help="keep each round's calibration in DIR/WORKLOAD-ROUND")
    args = parser.parse_args()
    names = list(WORKLOADS) if args.workloads == "all" else args.workloads.split(",")
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        parser.error("unknown workload %s (known: %s)" % (", ".join(unknown), ", ".join(WORKLOADS)))
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if os.geteuid() != 0:
        sys.exit("project_holds: tracing and memory cgroups need root: run it with sudo")
    for path in (UNITMETER, os.path.join(WORKLOAD_DIR, "calib")):
        if not os.access(path, os.X_OK):
            sys.exit("project_holds: %s is missing: run 'make' and 'make build-test' first" % path)
    if any(WORKLOADS[n][0].startswith("python:") for n in names) and not os.access(PYTHON, os.X_OK):
        sys.exit("project_holds: %s is missing: apt-get install python3-sklearn" % PYTHON)
    # SIGTERM (a killed make, a CI timeout) takes the same way out as Ctrl-C: the finally blocks
    # kill the task and remove its cgroup
    signal.signal(signal.SIGTERM, interrupted)
    try:
        records, failures = run(names, args.rounds, args.quick, shlex.split(args.project_args),
                                limit_factor=args.time_limit, cold=not args.warm_cache, keep=args.keep)
    except KeyboardInterrupt:
        sys.exit("project_holds: interrupted; the task and its cgroup are gone")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpus": len(os.sched_getaffinity(0)), "cgroup": cgroup_version(),
                       "project_args": args.project_args, "rounds": records, "failures": failures}, f, indent=1)
    print("\n".join(table(records)))
    for f in failures:
        sys.stderr.write("project_holds: FAILED: %s\n" % f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
