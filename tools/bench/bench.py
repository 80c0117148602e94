#!/usr/bin/env python3
"""make bench: unitmeter's accuracy and overhead against the tools people use instead.

Peers, on the same workloads in the same run: no tracer (the overhead baseline), unitmeter,
GNU `time -v`, the seed's method (RSS of the process tree polled every 50 ms with psutil, CPU
from wait4), and a bpftrace script that does unitmeter's job as well as bpftrace can
(tools/bench/peer.bt). Accuracy is judged against each workload's own truth; overhead from
interleaved untraced/traced pairs (median and spread). Benchmarks never fail on a timing, but
they fail loudly on a crash or a lost event.

Prints a Markdown report and writes it to .output/bench/report.md.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(TOP, ".output")
UNITMETER = os.path.join(OUT, "unitmeter")
WORK = os.path.join(OUT, "workloads")
DEMO = os.path.join(OUT, "demo", "fit_demo")
PYDEMO = os.path.join(TOP, "tools", "demo", "fit_gmm.py")
PYUNITS = os.path.join(TOP, "tools", "workloads", "python", "py_units.py")
PEER_BT = os.path.join(TOP, "tools", "bench", "peer.bt")
SEED = os.path.join(TOP, "tools", "bench", "seed_poll.py")
PYTHON = "/usr/bin/python3.11"
MIB = 1024.0 * 1024.0

failures = []


def w(name, *args):
    return [os.path.join(WORK, name)] + [str(a) for a in args]


def last_json(text, prefix=""):
    for line in reversed(text.splitlines()):
        line = line.strip()
        if prefix:
            if not line.startswith(prefix):
                continue
            line = line[len(prefix):].strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def timed(cmd, env=None):
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    return time.monotonic() - start, proc


def run_none(cmd):
    wall, proc = timed(cmd)
    if proc.returncode:
        failures.append("untraced %s exited %d" % (" ".join(cmd), proc.returncode))
    return {"wall_s": wall, "truth": last_json(proc.stdout)}


def run_unitmeter(cmd, units=()):
    with tempfile.TemporaryDirectory() as tmp:
        manifest = os.path.join(tmp, "run.json")
        args = [UNITMETER, "run", "-q", "-o", manifest]
        for spec in units:
            args += ["--unit", spec]
        wall, proc = timed(args + ["--"] + cmd)
        try:
            with open(manifest) as f:
                m = json.load(f)
        except (OSError, ValueError):
            m = None
    if proc.returncode or m is None:
        failures.append("unitmeter on %s: exit %d, %s" % (" ".join(cmd), proc.returncode,
                                                          proc.stderr.strip()[-300:]))
        return {"wall_s": wall, "truth": last_json(proc.stdout), "manifest": None}
    lost = m["run"]["lost_events"] + m["run"]["map_full_events"]
    if lost:
        failures.append("LOST EVENTS: %d on %s" % (lost, " ".join(cmd)))
    return {"wall_s": wall, "truth": last_json(proc.stdout), "manifest": m}


def run_time(cmd):
    wall, proc = timed(["/usr/bin/time", "-v"] + cmd)
    maxrss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    user = re.search(r"User time \(seconds\): ([\d.]+)", proc.stderr)
    system = re.search(r"System time \(seconds\): ([\d.]+)", proc.stderr)
    return {"wall_s": wall, "truth": last_json(proc.stdout),
            "peak_rss_bytes": int(maxrss.group(1)) * 1024 if maxrss else None,
            "cpu_s": float(user.group(1)) + float(system.group(1)) if user and system else None}


def run_seed(cmd):
    wall, proc = timed([PYTHON, SEED] + cmd)
    seed = last_json(proc.stderr) or {}
    return {"wall_s": wall, "truth": last_json(proc.stdout),
            "peak_rss_bytes": seed.get("peak_rss_bytes"), "cpu_s": seed.get("cpu_s")}


def run_bpftrace(cmd, unit_binary=None, unit_symbol="fit_unit", bare=False):
    """The peer script, or (bare) do-nothing uprobe+uretprobe on the unit function."""
    with tempfile.NamedTemporaryFile("w", suffix=".bt", delete=False) as script:
        if bare:
            script.write("uprobe:%s:%s {} uretprobe:%s:%s {}\n" % (unit_binary, unit_symbol,
                                                                    unit_binary, unit_symbol))
        else:
            script.write(open(PEER_BT).read())
            if unit_binary:
                script.write("""
tracepoint:kmem:rss_stat /@inunit[pid] && @sum > @unitpeak[pid]/ { @unitpeak[pid] = @sum; }
uprobe:%(b)s:%(s)s /@tracked[pid]/ { @inunit[pid] = 1; @unitstart[pid] = nsecs; @unitbase[pid] = @sum; @unitpeak[pid] = @sum; }
uretprobe:%(b)s:%(s)s /@inunit[pid]/ {
	printf("UNIT {\\"pid\\": %%d, \\"wall_ns\\": %%lld, \\"peak_delta\\": %%lld}\\n", pid, nsecs - @unitstart[pid], @unitpeak[pid] - @unitbase[pid]);
	@inunit[pid] = 0;
}
""" % {"b": unit_binary, "s": unit_symbol})
    wall, proc = timed(["bpftrace", "-c", " ".join(cmd), script.name])
    os.unlink(script.name)
    peer = last_json(proc.stdout, "PEER") or {}
    units = [json.loads(l[5:]) for l in proc.stdout.splitlines() if l.startswith("UNIT ")]
    lost = re.search(r"Lost (\d+) events", proc.stdout + proc.stderr)
    if proc.returncode:
        failures.append("bpftrace on %s exited %d: %s" % (" ".join(cmd), proc.returncode,
                                                          proc.stderr.strip()[-200:]))
    own = "\n".join(l for l in proc.stdout.splitlines() if not l.startswith(("PEER", "UNIT", "@")))
    return {"wall_s": wall, "truth": last_json(own),
            "peak_rss_bytes": peer.get("peak_rss_bytes"),
            "cpu_s": peer.get("cpu_ns") / 1e9 if peer.get("cpu_ns") is not None else None,
            "units": units, "lost": int(lost.group(1)) if lost else 0}


def err_cell(value, truth, scale=MIB, unit="MiB"):
    if value is None or truth is None:
        return "n/a"
    diff = value - truth
    return "%+.2f %s (%+.2f%%)" % (diff / scale, unit, 100.0 * diff / truth if truth else 0.0)


# --- accuracy -----------------------------------------------------------------------------

def accuracy(report, quick):
    spike = w("spike", "--mib", 96, "--hold-ms", 2, "--repeat", 3)
    forker = w("forker", "--parent-mib", 64, "--children", 3, "--child-mib", 32, "--cpu-ms", 200)
    threads = w("threads", "--threads", 3, "--cpu-ms", 400)
    tools = [("unitmeter", run_unitmeter), ("time -v", run_time), ("seed poller (50 ms)", run_seed)]
    if not quick:
        tools.append(("bpftrace script", run_bpftrace))
    report.append("## Accuracy against each workload's own truth\n")
    report.append("| tool | spike 96 MiB held 2 ms: peak error | forker (3 children): group peak error | "
                  "threads: CPU error |")
    report.append("|---|---|---|---|")
    for name, fn in tools:
        cells = []
        for cmd, truth_key, kind in ((spike, "peak_rss_bytes", "peak"),
                                     (forker, "group_peak_truth_bytes", "peak"),
                                     (threads, "process_cpu_ns", "cpu")):
            r = fn(cmd)
            truth = (r.get("truth") or {}).get(truth_key)
            if name == "unitmeter" and r.get("manifest"):
                run = r["manifest"]["run"]
                value = run["peak_rss_bytes"] if kind == "peak" else run["cpu_s"]
            else:
                value = r.get("peak_rss_bytes") if kind == "peak" else r.get("cpu_s")
            if kind == "cpu":
                cells.append(err_cell(value, truth / 1e9 if truth else None, 1.0, "s"))
            else:
                cells.append(err_cell(value, truth))
        report.append("| %s | %s |" % (name, " | ".join(cells)))
    report.append("")
    report.append("time -v reports the largest single process's peak, not the group's; the poller "
                  "misses spikes that fall between two polls.\n")

    # per-unit peaks: unitmeter against the bpftrace script on the same units
    sizes = [16, 48, 32, 80, 8]
    if quick:
        report.append("")
        return
    units_cmd = w("units", "--mode", "spikes", "--sizes", ",".join(map(str, sizes)), "--hold-ms", 2)
    um = run_unitmeter(units_cmd, units=["fit_unit"])
    rows = ["| unit | touched | unitmeter peak delta | error |" + (" bpftrace peak delta | error |" if not quick else ""),
            "|---|---|---|---|" + ("---|---|" if not quick else "")]
    bt = run_bpftrace(units_cmd, unit_binary=os.path.join(WORK, "units")) if not quick else None
    for i, mib in enumerate(sizes):
        u = um["manifest"]["units"][i] if um.get("manifest") and i < len(um["manifest"]["units"]) else None
        cell = [str(i), "%d MiB" % mib]
        cell += ["%.2f MiB" % (u["peak_rss_delta_bytes"] / MIB), err_cell(u["peak_rss_delta_bytes"], mib * MIB)] if u else ["n/a", "n/a"]
        if bt is not None:
            b = bt["units"][i] if i < len(bt["units"]) else None
            cell += ["%.2f MiB" % (b["peak_delta"] / MIB), err_cell(b["peak_delta"], mib * MIB)] if b else ["n/a", "n/a"]
        rows.append("| " + " | ".join(cell) + " |")
    report.append("### Per-unit peaks (units held 2 ms each)\n")
    report += rows
    report.append("")


# --- overhead ------------------------------------------------------------------------------

def pairs(cmd, traced, n, command_wall=False):
    """Interleaved untraced/traced runs: the ratio of each pair. With command_wall, the traced
    side is the command's own wall time from the manifest (release to exit), without
    unitmeter's fixed start-up and tear-down."""
    ratios = []
    for _ in range(n):
        base = run_none(cmd)["wall_s"]
        t = traced(cmd)
        m = t.get("manifest")
        wall = m["run"]["wall_s"] if command_wall and m else t["wall_s"]
        ratios.append(wall / base)
    return ratios


def ratio_cell(ratios):
    return "%.3fx (%.3f-%.3f, n=%d)" % (statistics.median(ratios), min(ratios), max(ratios), len(ratios))


def overhead(report, quick):
    n = 3 if quick else 7
    n_py = 3 if quick else 10
    um = lambda units: (lambda cmd: run_unitmeter(cmd, units=units))
    rows = [
        ("spike (64 MiB x40, 2 ms holds)", w("spike", "--mib", 64, "--hold-ms", 2, "--repeat", 40), um(()), n, "1.06x"),
        ("allocation storm (2 GiB in 4 KiB pages)", w("spike", "--mib", 64, "--hold-ms", 0, "--repeat", 32), um(()), n, "1.15x"),
        ("C demo (8 GMM fits, units on fit_unit)", [DEMO, tempfile.mkdtemp()], um(("fit_unit",)), n, "1.02x"),
        ("context-switch storm (50k ping-pongs)", w("pingpong", "--rounds", 50000), um(()), n, "-"),
        ("call storm (300k calls of a ~1.6 us unit)", w("callstorm", "--calls", 300000, "--work", 300), um(("fit_unit",)), n, "-"),
    ]
    if quick:
        # the quick subset: one workload of each kind, under two minutes in all
        rows = [rows[0], rows[2], rows[4]]
    if os.access(PYTHON, os.X_OK) and not quick:
        rows.append(("Python GMM demo (units on fit_gfmm)", [PYTHON, PYDEMO], um(("python:fit_gfmm",)), n_py, "1.02x"))
        rows.append(("Python: 2M calls of other functions, fit_gfmm the unit", [PYTHON, PYUNITS, "--mode", "calls", "--n", "1000000"],
                     um(("python:fit_gfmm",)), n_py, "1.10x"))
    report.append("## Overhead: traced wall time over untraced (interleaved pairs; median, min-max)\n")
    report.append("The command's own wall time under unitmeter (release to exit, from the manifest), and the "
                  "whole `unitmeter run` invocation (start-up and tear-down included), each over an untraced "
                  "run of the same command timed from Python (which adds ~1 ms of spawn to the baseline).\n")
    report.append("| workload | the command under unitmeter | whole unitmeter invocation | target |")
    report.append("|---|---|---|---|")
    for name, cmd, traced, count, target in rows:
        whole = "-" if quick else ratio_cell(pairs(cmd, traced, max(3, count // 2)))
        report.append("| %s | %s | %s | %s |" % (name, ratio_cell(pairs(cmd, traced, count, True)),
                                               whole, target))
        sys.stderr.write("bench: overhead of %s done\n" % name)
    report.append("")
    if not quick:
        report.append("### The bpftrace script on the same workloads (start-up included, so fewer pairs)\n")
        report.append("| workload | bpftrace script | unitmeter |")
        report.append("|---|---|---|")
        for name, cmd, unit_bin in (("spike (64 MiB x40, 2 ms holds)", w("spike", "--mib", 64, "--hold-ms", 2, "--repeat", 40), None),
                                    ("C demo", [DEMO, tempfile.mkdtemp()], DEMO)):
            bt = pairs(cmd, lambda c: run_bpftrace(c, unit_binary=unit_bin), 3)
            mine = pairs(cmd, um(("fit_unit",) if unit_bin else ()), 3)
            report.append("| %s | %s | %s |" % (name, ratio_cell(bt), ratio_cell(mine)))
        report.append("")


# --- unitmeter's own cost and per-event costs -----------------------------------------------

def own_cost(report, quick):
    n = 3 if quick else 7
    true_none = statistics.median(run_none(["/bin/true"])["wall_s"] for _ in range(n))
    true_um = statistics.median(run_unitmeter(["/bin/true"])["wall_s"] for _ in range(n))
    with tempfile.TemporaryDirectory() as tmp:
        rss = subprocess.run(["/usr/bin/time", "-f", "%M", UNITMETER, "run", "-q", "-o",
                              os.path.join(tmp, "run.json"), "--", "/bin/true"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    own_rss_kib = int(rss.stderr.strip().splitlines()[-1]) if rss.stderr.strip() else None

    # BPF memory while a run is live
    with tempfile.TemporaryDirectory() as tmp:
        live = subprocess.Popen([UNITMETER, "run", "-q", "-o", os.path.join(tmp, "run.json"), "--",
                                 "sleep", "1.5"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.8)
        maps = json.loads(subprocess.run(["bpftool", "map", "show", "-j"], stdout=subprocess.PIPE,
                                         text=True).stdout or "[]")
        live.wait()
    ours = ("procs", "mms", "threads", "units", "pending_mm", "pending_write", "events", "unitmete")
    memlock = sum(m.get("bytes_memlock", 0) for m in maps if m.get("name", "").startswith(ours))

    # sustained rss_stat events: one unit around a large allocation storm
    sizes = "256,256" if quick else "512,512,512,512"
    storm = run_unitmeter(w("units", "--mode", "spikes", "--sizes", sizes, "--hold-ms", 0), units=("fit_unit",))
    events = sum(u["n_samples"] for u in storm["manifest"]["units"]) if storm.get("manifest") else 0
    busy = sum(u["wall_s"] for u in storm["manifest"]["units"]) if storm.get("manifest") else 0
    base_storm = statistics.median(run_none(w("units", "--mode", "spikes", "--sizes", sizes, "--hold-ms", 0))["wall_s"] for _ in range(n))
    traced_storm = statistics.median(run_unitmeter(w("units", "--mode", "spikes", "--sizes", sizes, "--hold-ms", 0),
                                                   units=("fit_unit",))["wall_s"] for _ in range(n))

    report.append("## unitmeter's own cost\n")
    report.append("| figure | measured | target |")
    report.append("|---|---|---|")
    report.append("| `unitmeter run -- /bin/true` wall, less `/bin/true` alone (start-up + tear-down) | %.0f ms | start-up under 250 ms |"
                  % (1000 * (true_um - true_none)))
    report.append("| unitmeter's own peak RSS (`/usr/bin/time -f %%M`) | %s | under 32 MiB |"
                  % ("%.1f MiB" % (own_rss_kib / 1024.0) if own_rss_kib else "n/a"))
    report.append("| BPF map memory while tracing (bytes_memlock of its maps) | %.1f MiB | - |" % (memlock / MIB))
    report.append("| lost events over the whole benchmark | %s | 0 |" % ("0" if not any("LOST" in f for f in failures) else "SEE FAILURES"))
    report.append("| rss_stat changes handled, sustained (2 GiB storm in one process) | %.2f M/s | - |"
                  % (events / busy / 1e6 if busy else 0))
    report.append("| wall cost per RSS change with unitmeter attached (storm, traced - untraced) | %.2f us | bpftrace script ~1.8 us |"
                  % (1e6 * (traced_storm - base_storm) / events if events else float("nan")))
    report.append("")

    # per call: unitmeter's unit pair against a bare bpftrace uprobe+uretprobe, same run
    calls = 50000 if quick else 300000
    storm_cmd = w("callstorm", "--calls", calls, "--work", 300)
    base = statistics.median(run_none(storm_cmd)["wall_s"] for _ in range(n))
    mine = statistics.median(run_unitmeter(storm_cmd, units=("fit_unit",))["wall_s"] for _ in range(n))
    mine_idle = statistics.median(run_unitmeter(["/bin/true"])["wall_s"] for _ in range(n))
    lines = ["| per call of a unit function | unitmeter (uprobe+uretprobe, unit open/close) | %.2f us |"
             % (1e6 * ((mine - mine_idle) - (base - true_none)) / calls)]
    if not quick:
        bare = statistics.median(run_bpftrace(storm_cmd, unit_binary=os.path.join(WORK, "callstorm"), bare=True)["wall_s"] for _ in range(3))
        bare_idle = statistics.median(run_bpftrace(["/bin/true"], unit_binary=os.path.join(WORK, "callstorm"), bare=True)["wall_s"] for _ in range(3))
        lines.append("| per call of a unit function | bare bpftrace uprobe+uretprobe, doing nothing | %.2f us |"
                     % (1e6 * ((bare - bare_idle) - (base - true_none)) / calls))
    report.append("## Per-event costs on this kernel\n")
    report.append("| event | probe | cost |")
    report.append("|---|---|---|")
    report += lines
    report.append("")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a subset in under two minutes")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: tracing needs root: run 'sudo make bench'")
    hw = json.loads(subprocess.run([UNITMETER, "hw"], stdout=subprocess.PIPE, text=True).stdout)
    report = ["# unitmeter benchmark%s" % (" (quick)" if args.quick else ""), "",
              "Command: `sudo make %s`; date: %s; machine: %s, %s logical / %s physical cores, %.1f GiB, "
              "kernel %s." % ("bench-quick" if args.quick else "bench", time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                              hw["cpu_model"], hw["logical_cores"], hw["physical_cores"],
                              hw["total_memory_bytes"] / 2**30, hw["kernel_release"]), ""]
    started = time.monotonic()
    accuracy(report, args.quick)
    sys.stderr.write("bench: accuracy done\n")
    overhead(report, args.quick)
    own_cost(report, args.quick)
    report.append("Benchmark time: %.0f s." % (time.monotonic() - started))
    if failures:
        report.append("\n## FAILURES\n")
        report += ["- " + f for f in failures]
    text = "\n".join(report) + "\n"
    os.makedirs(os.path.join(OUT, "bench"), exist_ok=True)
    with open(os.path.join(OUT, "bench", "report.md"), "w") as out:
        out.write(text)
    print(text)
    if failures:
        sys.stderr.write("bench: %d FAILURES (crashes or lost events): see the report\n" % len(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
