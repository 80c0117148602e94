#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The files a SLURM job array leaves, for measuring the readers at array scale.

make_array.py OUT_DIR --tasks 200 --units 5000 writes OUT_DIR/task-N.units.jsonl, one units
stream per task, its lines with the keys, order and number formats of record/unit_record.c (a
real stream of `unitmeter run --unit fit_unit -- fit_demo` was the model): 4 worker processes a
task, units back to back in each, about 1 in 500 cut short. --manifests also writes
task-N.json, a small run manifest whose "units" array holds the same units. --slurm JOB names
the files as the SPANK plugin does (JOB_N.batch.0.json and .units.jsonl) and gives each manifest
the limits it ran under (run.limits: the array's ids, a 1 hour --time, 4 GiB --mem, 4 CPUs) and
its end: every 50th task killed for time, every 70th by the OOM killer, the rest exit 0.
Seeded: the same arguments give the same bytes.
"""
import argparse
import json
import os
import random


def unit_line(index, pid, start_ns, rng):
    wall = rng.lognormvariate(-2.0, 0.8)
    cpu = wall * rng.uniform(0.85, 0.999)
    start_rss = rng.randrange(1_800_000, 3_000_000, 4096)
    delta = rng.randrange(0, 120_000_000, 4096)
    start_charge = rng.randrange(400_000, 1_100_000, 4096)
    incomplete = rng.random() < 0.002
    status = ('"incomplete", "incomplete_reason": "exit"' if incomplete else '"complete"')
    return (f'{{"index": {index}, "spec": "fit_unit", "pid": {pid}, "start_ns": {start_ns}, '
            f'"wall_s": {wall:.6f}, "cpu_s": {cpu:.6f}, "cpu_utilisation": {cpu / wall:.3f}, '
            f'"peak_rss_bytes": {start_rss + delta}, "peak_rss_delta_bytes": {delta}, '
            f'"start_rss_bytes": {start_rss}, "n_samples": {int(wall * 3500)}, '
            f'"output_bytes": {rng.randrange(150, 250)}, "page_alloc_bytes": {delta + 4096 * 5}, '
            f'"start_charge_bytes": {start_charge}, "peak_charge_bytes": {start_charge + delta}, '
            f'"processes": 1, "threads": 1, "status": {status}}}'), wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('out_dir')
    ap.add_argument('--tasks', type=int, default=200)
    ap.add_argument('--units', type=int, default=5000, help='units per task')
    ap.add_argument('--workers', type=int, default=4, help='processes per task')
    ap.add_argument('--manifests', action='store_true', help='also a run manifest per task')
    ap.add_argument('--slurm', type=int, metavar='JOB', help='a SLURM array job: its names, '
                    'limits and ends (implies --manifests)')
    ap.add_argument('--seed', type=int, default=23)
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    for task in range(a.tasks):
        rng = random.Random(a.seed * 100003 + task)
        clock = [50_000_000 + w * 1_000_000 for w in range(a.workers)]
        lines = []
        for index in range(a.units):
            w = index % a.workers
            line, wall = unit_line(index, 4000 + task * 16 + w, clock[w], rng)
            clock[w] += int(wall * 1e9) + rng.randrange(50_000, 400_000)
            lines.append(line)
        stem = f'{a.slurm}_{task}.batch.0' if a.slurm else f'task-{task}'
        with open(os.path.join(a.out_dir, f'{stem}.units.jsonl'), 'w') as f:
            f.write('\n'.join(lines) + '\n')
        if a.manifests or a.slurm:
            units = [json.loads(x) for x in lines]
            doc = {'schema': 'unitmeter.run/1',
                   'command': ['fit_demo', f'/tmp/task-{task}'],
                   'run': {'wall_s': round(max(clock) / 1e9 + 0.05, 6),
                           'cpu_s': round(sum(u['cpu_s'] for u in units), 6),
                           'peak_rss_bytes': max(u['peak_rss_bytes'] for u in units),
                           'peak_charge_bytes': max(u['peak_charge_bytes'] for u in units)},
                   'units': units}
            if a.slurm:
                timed_out, oom = task % 50 == 49, task % 70 == 69
                doc['run'].update({
                    'exit_status': None if timed_out else 137 if oom else 0,
                    'exit_signal': 15 if timed_out else None,
                    'oom_kills': 1 if oom else 0,
                    'limits': {'slurm_job_id': a.slurm + 1 + task, 'slurm_array_job_id': a.slurm,
                               'slurm_array_task_id': task, 'slurm_step_id': 'batch',
                               'time_limit_s': 3600, 'cpus': 4, 'node': 'node%02d' % (task % 16),
                               'memory_limit_bytes': 4 << 30,
                               'memory_limit_cgroup': '/slurm/job_%d' % (a.slurm + 1 + task)}})
                if timed_out:
                    doc['run']['wall_s'] = 3600.5
            with open(os.path.join(a.out_dir, f'{stem}.json'), 'w') as f:
                json.dump(doc, f, indent=2)
                f.write('\n')


if __name__ == '__main__':
    main()
