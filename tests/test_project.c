// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `unitmeter project`: every expected figure below was worked out by hand from the inputs (the
 * comments show the arithmetic), not taken from a run of the code.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "files/fastjson.h"
#include "files/summary.h"
#include "project/project.h"

#define MIB (1024.0 * 1024.0)

struct fixture_units {
	double wall[16], util[16], peak[16], out[16], cycle[16], charge[16];
};

/* Units without a timeline (each unit's time is its wall) and without a memory charge. */
static struct project_input input_of(struct fixture_units *f, size_t n, double fixed)
{
	struct project_input in = {
		.wall_s = f->wall, .cycle_s = f->cycle, .cpu_utilisation = f->util,
		.peak_rss_bytes = f->peak, .peak_charge_bytes = f->charge, .output_bytes = f->out,
		.n = n, .n_files = 1, .fixed_s = fixed, .group_peak_charge_bytes = -1,
	};

	for (size_t i = 0; i < n; i++) {
		f->cycle[i] = f->wall[i];
		f->charge[i] = -1;
	}
	snprintf(in.charge_unknown, sizeof(in.charge_unknown), "fixture: no charge");
	return in;
}

/* One core, a MiB and nothing written for each of n units: for tests of the time alone. */
static void plain_units(struct fixture_units *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		f->util[i] = 1;
		f->peak[i] = MIB;
		f->out[i] = 0;
	}
}

/* Eight plain units, all run by one process in turn. */
static struct project_input one_process_of_eight(struct fixture_units *f)
{
	static long long process[8] = { 0 }, rank[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct project_input in;

	plain_units(f, 8);
	in = input_of(f, 8, -1);
	in.process = process;
	in.rank = rank;
	return in;
}

static bool has_note(const struct projection *p, const char *text)
{
	for (size_t i = 0; i < p->n_notes; i++)
		if (strstr(p->notes[i], text))
			return true;
	return false;
}

Test(project, ten_units_by_hand)
{
	struct fixture_units f;
	struct project_options opt = { .units_total = 50, .units_per_task = 5, .margin = 1.5 };
	struct projection p;
	struct project_input in;
	char err[256];

	for (int i = 0; i < 10; i++) {
		f.wall[i] = 2.0 * (i + 1);       /* 2, 4, ..., 20: p90 = 18 + 0.1 x 2 = 18.2 */
		f.peak[i] = 100.0 * (i + 1) * MIB; /* max 1000 MiB */
		f.util[i] = 1.0;
		f.out[i] = 2 * MIB;
	}
	f.util[9] = 3.2; /* p90 of nine 1.0 and one 3.2: 1.0 + 0.1 x 2.2 = 1.22 */
	in = input_of(&f, 10, -1);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect(!p.used_max);
	cr_expect_float_eq(p.wall_unit_s, 18.2, 1e-9);
	cr_expect_float_eq(p.wall_median_s, 11.0, 1e-9);
	/* a sum of 5: mean 11, sample sd sqrt(330 / 9) = 6.0553007; expected 5 x 11 = 55 s, x 1.5
	 * margin = 82.5 s; all 10 tasks within the quantile 9 times in 10: z = the normal's
	 * 0.9^(1/10) = 0.98952 quantile, 2.3086775; 55 + 2.3086775 x 6.0553007 x sqrt(5) = 86.260 s,
	 * above the margin's, so it is the limit -> 2 whole minutes (5 x the p90 18.2 x 1.5 =
	 * 136.5 s was the first, too long, figure) */
	cr_expect_float_eq(p.model.unit_mean_s, 11.0, 1e-9);
	cr_expect_float_eq(p.model.unit_sd_s, 6.0553007081949835, 1e-9);
	cr_expect_float_eq(p.task.z, 2.30867750383942, 1e-9);
	cr_expect_float_eq(p.task.total_s, 55.0, 1e-9);
	cr_expect_float_eq(p.time_s, 86.25964117518421, 1e-6);
	cr_expect(strstr(p.derivation[0], "the sum's p90 for all 10 tasks (above x 1.50 margin, "
			 "82.5 s) = 86.3 s"), "%s", p.derivation[0]);
	cr_expect_eq(p.time_min, 2);
	cr_expect_eq(p.model.workers, 1, "no start times: one worker");
	/* 1000 MiB x 1.5 = exactly 1500 MiB: not rounded up to 1501 */
	cr_expect_eq(p.mem_mib, 1500);
	/* 1.22 cores -> 2 */
	cr_expect_eq(p.cpus, 2);
	/* the units carry no tmp_output_bytes (their 2 MiB each went anywhere): no --tmp */
	cr_expect_eq(p.tmp_mib, 0);
	cr_expect_str_eq(p.tmp_decision, "not_measured");
	cr_expect_eq(p.tasks, 10);
	cr_expect_eq(p.units_per_task, 5);
	cr_expect(has_note(&p, "unknown from units streams"));
	cr_expect(has_note(&p, "page cache"));
	cr_expect(has_note(&p, "fixture: no charge"));
	cr_expect(!has_note(&p, "too few"));
}

Test(project, manifest_with_run_outside_time_and_an_incomplete_unit)
{
	const char *files[] = { fixture("project/calib.json") };
	struct project_options opt = { .units_total = 40, .tasks = 4, .margin = 1.25 };
	struct project_input in;
	struct projection p;
	char err[256];

	cr_assert_eq(um_project_load(files, 1, &in, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(in.n, 5);
	cr_expect_eq(in.n_incomplete, 1);
	/* no start times: run 30 s - the six units' 25 s = 5 s fixed per task */
	cr_expect(in.fixed_from_totals);
	cr_expect_float_eq(in.fixed_s, 5.0, 1e-9);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	/* walls 2,2,4,6,8: p90 = 6 + 0.6 x 2 = 7.2; mean 4.4, sample sd sqrt(27.2 / 4); 10 units
	 * per task: expected 10 x 4.4 + 5 = 49 s, x 1.25 = 61.25 s; 4 tasks: z = the 0.9^(1/4)
	 * quantile, 1.9431958; 49 + 1.9431958 x 2.6076810 x sqrt(10) = 65.024 s, the larger -> 2 min */
	cr_expect_float_eq(p.wall_unit_s, 7.2, 1e-9);
	cr_expect_float_eq(p.fixed_s, 5.0, 1e-9);
	cr_expect_float_eq(p.time_s, 65.02400294786776, 1e-6);
	cr_expect_eq(p.time_min, 2);
	/* the run's 600 MiB whole-group peak is above every complete unit's (max 400 MiB; the
	 * incomplete one's 500 MiB is left out): 600 x 1.25 = 750 */
	cr_expect_eq(p.mem_mib, 750);
	cr_expect_eq(p.cpus, 1);
	/* 2 MiB a unit written, but the manifest predates tmp_output_bytes: no --tmp */
	cr_expect_eq(p.tmp_mib, 0);
	cr_expect_str_eq(p.tmp_decision, "not_measured");
	cr_expect_eq(p.tasks, 4);
	cr_expect(has_note(&p, "1 unit cut short"));
	um_project_input_free(&in);
}

Test(project, too_few_units_for_a_p90_use_the_max_and_say_so)
{
	struct fixture_units f = { .wall = { 1, 2, 10 }, .util = { 1, 1, 1 },
				   .peak = { MIB, MIB, MIB }, .out = { 0, 0, 0 } };
	struct project_options opt = { .units_total = 6, .margin = 1 };
	struct project_input in = input_of(&f, 3, -1);
	struct projection p;
	char err[256];

	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect(p.used_max);
	cr_expect_float_eq(p.wall_unit_s, 10.0, 1e-12);
	cr_expect(has_note(&p, "only 3 units measured: too few to trust a p90"));
	cr_expect_eq(p.tmp_mib, 0, "nothing written: no --tmp");
	cr_expect_eq(p.tasks, 1);
	cr_expect_eq(p.units_per_task, 6);
}

/* Whole minutes up, at least one; cores up with 0.05 of slack, at least one; MiB up. */
Test(project, rounding_edges)
{
	struct fixture_units f = { .wall = { 12, 12, 12, 12, 12 },
				   .util = { 1.04, 1.04, 1.04, 1.04, 1.04 },
				   .peak = { 1, 1, 1, 1, 1 }, .out = { -1, -1, -1, -1, -1 } };
	struct project_options opt = { .units_total = 5, .margin = 1 };
	struct project_input in = input_of(&f, 5, -1);
	struct projection p;
	char err[256];

	/* 5 x 12 s = exactly 60 s: one minute, not two */
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(p.time_min, 1);
	cr_expect_eq(p.cpus, 1, "1.04 cores is one core and kernel work");
	cr_expect_eq(p.mem_mib, 1, "a byte still needs a MiB");
	cr_expect_eq(p.tmp_mib, 0);
	cr_expect(strstr(p.derivation[3], "not measured"));

	/* 60.5 s: two minutes; 1.06 cores: two */
	for (int i = 0; i < 5; i++) {
		f.wall[i] = 12.1;
		f.util[i] = 1.06;
	}
	in = input_of(&f, 5, -1);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(p.time_min, 2);
	cr_expect_eq(p.cpus, 2);

	/* a millisecond of work is still a minute, and 0.2 cores one CPU */
	for (int i = 0; i < 5; i++) {
		f.wall[i] = 0.001;
		f.util[i] = 0.2;
		f.peak[i] = 64 * MIB + 1;
	}
	in = input_of(&f, 5, -1);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(p.time_min, 1);
	cr_expect_eq(p.cpus, 1);
	cr_expect_eq(p.mem_mib, 65, "one byte over 64 MiB is 65 MiB");
}

Test(project, max_time_splits_into_more_tasks)
{
	struct fixture_units f = { .wall = { 60, 60, 60, 60, 60 }, .util = { 1, 1, 1, 1, 1 },
				   .peak = { MIB, MIB, MIB, MIB, MIB }, .out = { 0, 0, 0, 0, 0 } };
	struct project_options opt = { .units_total = 100, .margin = 1, .max_time_s = 30 * 60 };
	struct project_input in = input_of(&f, 5, -1);
	struct projection p;
	char err[256];

	/* 100 one-minute units need 100 minutes; 30 fit in 30 minutes; ceil(100 / 30) = 4 */
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect(p.split);
	cr_expect_eq(p.units_per_task, 30);
	cr_expect_eq(p.tasks, 4);
	cr_expect_eq(p.time_min, 30);
	cr_expect(has_note(&p, "split: one task would need 01:40:00, past --max-time 00:30:00"));

	/* one unit of an hour cannot fit in 30 minutes at all */
	for (int i = 0; i < 5; i++)
		f.wall[i] = 3600;
	in = input_of(&f, 5, -1);
	cr_expect_eq(um_project(&in, &opt, &p, err, sizeof(err)), -1);
	cr_expect(strstr(err, "no split fits"), "%s", err);
}

Test(project, more_tasks_than_units_are_trimmed)
{
	struct fixture_units f = { .wall = { 1, 1, 1, 1, 1 }, .util = { 1, 1, 1, 1, 1 },
				   .peak = { MIB, MIB, MIB, MIB, MIB }, .out = { 0, 0, 0, 0, 0 } };
	struct project_options opt = { .units_total = 10, .tasks = 6, .margin = 1 };
	struct project_input in = input_of(&f, 5, -1);
	struct projection p;
	char err[256];

	/* ceil(10 / 6) = 2 units per task; ceil(10 / 2) = 5 tasks hold them all */
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(p.units_per_task, 2);
	cr_expect_eq(p.tasks, 5);
	cr_expect(has_note(&p, "6 tasks asked for 10 units"));
	opt.tasks = 50;
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(p.tasks, 10);
	cr_expect_eq(p.units_per_task, 1);
}

Test(project, fixed_time_is_paid_once_per_task_not_per_unit)
{
	struct fixture_units f = { .wall = { 1, 1, 1, 1, 1 }, .util = { 1, 1, 1, 1, 1 },
				   .peak = { MIB, MIB, MIB, MIB, MIB }, .out = { 0, 0, 0, 0, 0 } };
	struct project_options opt = { .units_total = 3, .margin = 1 };
	struct project_input in = input_of(&f, 5, 60);
	struct projection p;
	char err[256];

	/* a 60 s data load calibrated on 5 units: 3 units x 1 s + 60 s, not 3 x 12 s + ... */
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_float_eq(p.time_s, 63.0, 1e-12);
	opt.units_total = 1000;
	opt.tasks = 10;
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_float_eq(p.time_s, 160.0, 1e-12, "100 units x 1 s + 60 s");
}

Test(project, timeline_gives_fixed_part_gaps_and_the_charge)
{
	const char *files[] = { fixture("project/timeline.json") };
	struct project_options opt = { .units_total = 10, .tasks = 2, .margin = 1 };
	struct project_input in;
	struct projection p;
	char err[256];

	cr_assert_eq(um_project_load(files, 1, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(in.n, 3);
	cr_expect(!in.fixed_from_totals);
	/* units at 3.0+1.0, 4.5+1.0, 5.5+2.0, and an incomplete one at 7.5+0.5 in a 10 s run:
	 * 3 s before the first, 10 - 8 = 2 s after the last */
	cr_expect_float_eq(in.fixed_before_s, 3.0, 1e-9);
	cr_expect_float_eq(in.fixed_after_s, 2.0, 1e-9);
	cr_expect_float_eq(in.fixed_s, 5.0, 1e-9);
	/* wall + gap to the next start: 1 + 0.5, 1 + 0, 2 + 0 (the next is the incomplete one) */
	cr_expect_float_eq(in.cycle_s[0], 1.5, 1e-9);
	cr_expect_float_eq(in.cycle_s[1], 1.0, 1e-9);
	cr_expect_float_eq(in.cycle_s[2], 2.0, 1e-9);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	/* one process, its three units in turn: one worker; warm-up is looked for against the later
	 * half (the 2.0 s unit: over max(1.5 x 2.0, 2.0) = 3.0 s), and the first (1.5 s) is not;
	 * mean 1.5, sd 0.5, 2 tasks (z = the 0.9^(1/2) quantile, 1.6322188), margin 1:
	 * 5 x 1.5 + 5.0 fixed + 1.6322188 x 0.5 x sqrt(5) = 14.325 s */
	cr_expect_eq(p.model.workers, 1);
	cr_expect_eq(p.model.tested_processes, 1);
	cr_expect_eq(p.model.warmup_units, 0);
	cr_expect_float_eq(p.model.warmup_threshold_s, 3.0, 1e-9);
	cr_expect_float_eq(p.time_s, 14.324876083867869, 1e-6);
	cr_expect(strstr(p.time_parts[0], "3.00 s before the first unit + 2.00 s after the last"),
		  "%s", p.time_parts[0]);
	/* charge: units 100, 200, 150 MiB (the incomplete one's 900 left out), run 220 MiB */
	cr_expect(p.mem_from_charge);
	cr_expect_eq(p.mem_mib, 220);
	cr_expect(strstr(p.derivation[1], "memory (cgroup)"), "%s", p.derivation[1]);
	cr_expect(strstr(p.derivation[1], "peak RSS is 400.0 MiB"), "%s", p.derivation[1]);
	cr_expect(has_note(&p, "shared by forked processes"));
	um_project_input_free(&in);
}

/* A pool of two workers, each warming up on its first unit (fixture: pool.json). */
Test(project, pool_of_two_warms_up_once_and_shares_the_units)
{
	const char *files[] = { fixture("project/pool.json") };
	struct project_options opt = { .units_total = 40, .tasks = 1, .margin = 1.25 };
	struct project_input in;
	struct projection p;
	char err[256];

	cr_assert_eq(um_project_load(files, 1, &in, err, sizeof(err)), 0, "%s", err);
	/* both workers run units from 3.1 s to 6.5 s side by side: two at once all that time */
	cr_expect_eq(in.workers_calibrated, 2);
	cr_expect_float_eq(in.workers_share, 1.0, 1e-9);
	cr_expect_eq(in.n_processes, 2);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	/* later halves: four 0.4 s units: over max(1.5 x 0.4, 0.4) = 0.6 s is warm-up; each first
	 * unit (2.2 s) is, 1.8 s more than the steady mean 0.4 s; workers warm up side by side */
	cr_expect_float_eq(p.model.warmup_threshold_s, 0.6, 1e-9);
	cr_expect_eq(p.model.warmup_processes, 2);
	cr_expect_eq(p.model.warmup_units, 2);
	cr_expect_eq(p.model.steady_n, 6);
	cr_expect_float_eq(p.model.unit_mean_s, 0.4, 1e-9);
	cr_expect_float_eq(p.model.warmup_max_s, 1.8, 1e-9);
	cr_expect(!p.model.workers_replaced);
	/* fixed 3.1 + 0.5 s; warm-up 1.8 s; 40 x 0.4 s over 2 workers = 8 s; tail 1/2 x 0.4 s;
	 * 13.6 s x 1.25 = 17 s (the old model: 40 x p90 2.2 s... x 1.25 = 114.5 s) */
	cr_expect_float_eq(p.task.warmup_s, 1.8, 1e-9);
	cr_expect_float_eq(p.task.spread_s, 8.0, 1e-9);
	cr_expect_float_eq(p.task.tail_s, 0.2, 1e-9);
	cr_expect_float_eq(p.time_s, 17.0, 1e-9);
	/* 2 workers x 1.0 core */
	cr_expect_eq(p.cpus, 2);
	cr_expect(strstr(p.time_parts[1], "2 of 2 processes") &&
		  strstr(p.time_parts[1], "once per worker"), "%s", p.time_parts[1]);
	cr_expect(strstr(p.time_parts[3], "workers: 2, as calibrated"), "%s", p.time_parts[3]);
	cr_expect(strstr(p.derivation[2], "2 workers x p90"), "%s", p.derivation[2]);
	/* memory as measured: the 300 MiB charge x 1.25 */
	cr_expect_eq(p.mem_mib, 375);
	cr_expect_float_eq(p.mem_per_worker_bytes, 0.0, 1e-9);
	um_project_input_free(&in);
}

Test(project, workers_other_than_calibrated_respread_the_units_and_add_memory)
{
	const char *files[] = { fixture("project/pool.json") };
	struct project_options opt = { .units_total = 40, .tasks = 1, .margin = 1.25, .workers = 4 };
	struct project_input in;
	struct projection p;
	char err[256];

	cr_assert_eq(um_project_load(files, 1, &in, err, sizeof(err)), 0, "%s", err);
	/* the first worker began at 3.0 s, in the bucket whose lowest charge is 100 MiB */
	cr_expect_float_eq(in.worker_base_charge_bytes, 100 * MIB, 1);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	/* 3.6 + 1.8 + 16 / 4 + 3/4 x 0.4 = 9.7 s x 1.25 = 12.125 s */
	cr_expect_float_eq(p.time_s, 12.125, 1e-9);
	cr_expect_eq(p.cpus, 4);
	/* each of the 2 calibrated workers added (300 - 100) / 2 = 100 MiB; 2 more:
	 * (300 + 2 x 100) x 1.25 = 625 MiB */
	cr_expect_float_eq(p.mem_per_worker_bytes, 100 * MIB, 1);
	cr_expect_eq(p.mem_mib, 625);
	cr_expect(strstr(p.derivation[1], "2 added x 100.0 MiB a worker"), "%s", p.derivation[1]);
	cr_expect(has_note(&p, "--workers 4 where the calibration ran 2 units at once"));

	/* one worker: every unit in turn, and the calibration's memory kept */
	opt.workers = 1;
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	/* 3.6 + 1.8 + 16 + 0 = 21.4 s x 1.25 */
	cr_expect_float_eq(p.time_s, 26.75, 1e-9);
	cr_expect_eq(p.cpus, 1);
	cr_expect_eq(p.mem_mib, 375);
	cr_expect(has_note(&p, "with 2 workers; 1 need less"));
	um_project_input_free(&in);
}

/* Mixed unit sizes: a task of 250 is close to 250 x the mean, far from 250 x the p90. */
Test(project, sum_of_mixed_units_is_near_n_times_the_mean)
{
	struct fixture_units f = { .wall = { 1, 1, 1, 3, 1, 1, 1, 3 } };
	struct project_options opt = { .units_total = 250, .margin = 1 };
	struct project_input in;
	struct projection p;
	char err[256];

	plain_units(&f, 8);
	in = input_of(&f, 8, -1);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	/* mean 1.5, sample sd sqrt(6 / 7); expected 250 x 1.5 = 375 s, its p90 (one task) 375 +
	 * 1.2815516 x 0.9258201 x sqrt(250) = 393.76 s, where 250 x the p90 (3.0) would ask 750 s */
	cr_expect_float_eq(p.task.units_sum_s, 375.0, 1e-9);
	cr_expect_float_eq(p.task.z, 1.2815515655446004, 1e-9);
	cr_expect_float_eq(p.time_s, 393.7599939945342, 1e-6);
	/* a 1.25 margin over the expected (468.75 s) covers that p90: the margin is the limit */
	opt.margin = 1.25;
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_float_eq(p.time_s, 468.75, 1e-9);
	cr_expect(strstr(p.derivation[0], "x 1.25 margin (covers the sum's p90, 393.8 s) = 468.8 s"),
		  "%s", p.derivation[0]);
	opt.margin = 1;
	/* --time-stat max keeps the bound: 250 x 3 */
	opt.time_max = true;
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_float_eq(p.time_s, 750.0, 1e-9);
	cr_expect(strstr(p.time_parts[2], "the bound"), "%s", p.time_parts[2]);
}

/* A first unit as slow as a later one is no warm-up: mixed sizes are not taken for it. */
Test(project, a_first_unit_no_slower_than_later_ones_is_no_warm_up)
{
	struct fixture_units f = { .wall = { 3, 1, 1, 1, 3, 1, 1, 1 } };
	struct project_options opt = { .units_total = 80, .margin = 1 };
	struct project_input in = one_process_of_eight(&f);
	struct projection p;
	char err[256];

	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	/* later half 3,1,1,1: over 1.5 x 1 = 1.5 s and over the slowest later one, 3 s; the first
	 * is 3 s, not over */
	cr_expect_float_eq(p.model.warmup_threshold_s, 1.5, 1e-9);
	cr_expect_float_eq(p.model.warmup_later_max_s, 3.0, 1e-9);
	cr_expect_eq(p.model.warmup_units, 0);
	cr_expect_eq(p.model.steady_n, 8);
	cr_expect(strstr(p.time_parts[1], "none seen"), "%s", p.time_parts[1]);
	/* and a real warm-up of the same process is found: 9 s first */
	f.wall[0] = 9;
	in = one_process_of_eight(&f);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(p.model.warmup_units, 1);
	/* steady mean (1 x 6 + 3) / 7; excess 9 - 9/7 */
	cr_expect_float_eq(p.model.warmup_max_s, 9 - 9.0 / 7, 1e-9);
}

/* A first unit that loaded something once (it kept memory no later unit kept) is warm-up,
 * though a big later unit ran longer: each pool worker's import before a mix of fit sizes. */
Test(project, a_first_unit_that_kept_memory_is_warm_up_among_mixed_sizes)
{
	struct fixture_units f = { .wall = { 2.5, 1, 1, 1, 3, 1, 1, 1 } };
	/* the import kept 80 MiB; the big unit's memory went back; the later half (the units that
	 * tell what a steady unit does) kept at most 2 MiB */
	double kept[8] = { 80 * MIB, 0, -4 * MIB, 4 * MIB, 0, 2 * MIB, 0, NAN };
	struct project_options opt = { .units_total = 80, .margin = 1 };
	struct project_input in = one_process_of_eight(&f);
	struct projection p;
	char err[256];

	in.kept_bytes = kept;
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	/* 2.5 s: over 1.5 x 1, not over the 3 s later unit, but 80 MiB kept > 2 MiB + 1 MiB */
	cr_expect_float_eq(p.model.warmup_later_kept_bytes, 2 * MIB, 1e-9);
	cr_expect_eq(p.model.warmup_units, 1);
	cr_expect_eq(p.model.steady_n, 7);
	cr_expect(strstr(p.time_parts[1], "keeping 1 MiB more memory than any later one"), "%s",
		  p.time_parts[1]);
	/* what it kept no more than a later unit did: a big first unit, not warm-up */
	kept[0] = 2.5 * MIB;
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(p.model.warmup_units, 0);
}

/* Four processes ran units, at most two at once: workers are replaced, each warms up again. */
Test(project, replaced_workers_warm_up_again)
{
	struct fixture_units f = { .wall = { 2, 0.5, 2, 0.5, 2, 0.5, 2, 0.5 } };
	long long process[8] = { 0, 0, 1, 1, 2, 2, 3, 3 }, rank[8] = { 0, 1, 0, 1, 0, 1, 0, 1 };
	struct project_options opt = { .units_total = 20, .margin = 1 };
	struct project_input in;
	struct projection p;
	char err[256];

	plain_units(&f, 8);
	in = input_of(&f, 8, -1);
	in.process = process;
	in.rank = rank;
	in.n_processes = 4;
	in.workers_calibrated = 2;
	in.workers_share = 1;
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect(p.model.workers_replaced);
	cr_expect_eq(p.model.warmup_processes, 4);
	/* excess 1.5 s in each of 4 processes over 8 units: 0.75 s a unit; 20 units over 2
	 * workers: 7.5 s; + 20 x 0.5 / 2 + 1/2 x 0.5 = 12.75 s */
	cr_expect_float_eq(p.model.warmup_per_unit_s, 0.75, 1e-9);
	cr_expect_float_eq(p.task.warmup_s, 7.5, 1e-9);
	cr_expect_float_eq(p.time_s, 12.75, 1e-9);
	cr_expect(strstr(p.time_parts[1], "workers are replaced"), "%s", p.time_parts[1]);
}

/* How many ran at once, from a stream's start times: touching or briefly overlapping is one. */
Test(project, units_that_touch_or_barely_overlap_are_one_worker)
{
	const char *touch = "[{\"pid\": 1, \"start_ns\": 0, \"wall_s\": 1.0},"
			    " {\"pid\": 2, \"start_ns\": 1000000000, \"wall_s\": 1.0}]";
	const char *brief = "[{\"pid\": 1, \"start_ns\": 0, \"wall_s\": 1.0},"
			    " {\"pid\": 2, \"start_ns\": 500000000, \"wall_s\": 1.0},"
			    " {\"pid\": 2, \"start_ns\": 1500000000, \"wall_s\": 1.0}]";
	const char *pair = "[{\"pid\": 1, \"start_ns\": 0, \"wall_s\": 2.0},"
			   " {\"pid\": 2, \"start_ns\": 100000000, \"wall_s\": 2.0}]";
	const char *cases[] = { touch, brief, pair };
	long long want[] = { 1, 1, 2 };
	char err[256];

	for (size_t c = 0; c < 3; c++) {
		json_t *units = json_loads(cases[c], 0, NULL), *unit;
		struct um_read_unit read[3];
		struct um_unit_text text;
		struct project_input in;
		size_t i;

		cr_assert_not_null(units);
		json_array_foreach(units, i, unit)
			um_unit_from_json(unit, &read[i], &text);
		um_project_input_init(&in);
		cr_assert_eq(um_project_add(&in, "case", read, json_array_size(units), NULL, err,
					    sizeof(err)), 0, "%s", err);
		/* brief: 2 at once for 0.5 of 2.5 s busy; pair: for 1.9 of 2.1 s */
		cr_expect_eq(in.workers_calibrated, want[c], "case %zu: %lld", c,
			     in.workers_calibrated);
		cr_expect_eq(in.n_processes, 2);
		um_project_input_free(&in);
		json_decref(units);
	}
}

Test(project, few_or_spread_units_say_how_many_to_calibrate_on)
{
	struct fixture_units f = { .wall = { 1, 2, 3, 4, 5, 6 } };
	struct project_options opt = { .units_total = 60, .margin = 1.25 };
	struct project_input in;
	struct projection p;
	char err[256];

	plain_units(&f, 6);
	/* mean 3.5, sd 1.8708 (53%): +-1.645 x 0.5345 / sqrt(6) = +-36%; for +-10%:
	 * (1.645 x 0.5345 / 0.1)^2 = 77.3 -> 78 units */
	in = input_of(&f, 6, -1);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect(has_note(&p, "known to +-36% (90% interval) from 6 steady units"));
	cr_expect(has_note(&p, "calibrate on 78 or more"));
	/* one unit: its spread unknown */
	in = input_of(&f, 1, -1);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect(has_note(&p, "1 steady unit: how unit times spread is not known"));
}

Test(project, unknown_charge_falls_back_to_rss_and_says_why)
{
	const char *files[] = { fixture("project/nocharge.json") };
	struct project_options opt = { .units_total = 10, .tasks = 2, .margin = 1 };
	struct project_input in;
	struct projection p;
	char err[256];

	cr_assert_eq(um_project_load(files, 1, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(um_project(&in, &opt, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect(!p.mem_from_charge);
	/* RSS: the run's 500 MiB above the units' 400 */
	cr_expect_eq(p.mem_mib, 500);
	cr_expect(has_note(&p, "Read-only file system"));
	cr_expect(has_note(&p, "--mem from peak RSS"));
	um_project_input_free(&in);
}

Test(project, no_complete_unit_is_an_error)
{
	static struct fixture_units f; /* zeroed: no unit at all */
	struct project_options opt = { .units_total = 3, .margin = 1 };
	struct project_input in = input_of(&f, 0, -1);
	struct projection p;
	char err[256];

	in.n_incomplete = 2;
	cr_expect_eq(um_project(&in, &opt, &p, err, sizeof(err)), -1);
	cr_expect(strstr(err, "every unit was cut short"), "%s", err);
}

Test(project, slurm_time_forms)
{
	cr_expect_eq(um_parse_slurm_time("90"), 5400);
	cr_expect_eq(um_parse_slurm_time("1:30"), 90);
	cr_expect_eq(um_parse_slurm_time("2:00:00"), 7200);
	cr_expect_eq(um_parse_slurm_time("1-12"), 129600);
	cr_expect_eq(um_parse_slurm_time("1-0:30"), 88200);
	cr_expect_eq(um_parse_slurm_time("1-00:00:10"), 86410);
	cr_expect_lt(um_parse_slurm_time(""), 0);
	cr_expect_lt(um_parse_slurm_time("-1"), 0);
	cr_expect_lt(um_parse_slurm_time("1:2:3:4"), 0);
	cr_expect_lt(um_parse_slurm_time("ten"), 0);
	cr_expect_lt(um_parse_slurm_time("1-"), 0);
	cr_expect_lt(um_parse_slurm_time("1:"), 0);
	cr_expect_lt(um_parse_slurm_time("1:-5"), 0);
	cr_expect_lt(um_parse_slurm_time("99999999999999999999"), 0);
}

Test(project, slurm_time_written)
{
	char buf[32];

	um_format_slurm_minutes(59, buf, sizeof(buf));
	cr_expect_str_eq(buf, "00:59:00");
	um_format_slurm_minutes(60, buf, sizeof(buf));
	cr_expect_str_eq(buf, "01:00:00");
	um_format_slurm_minutes(1440, buf, sizeof(buf));
	cr_expect_str_eq(buf, "1-00:00:00");
	um_format_slurm_minutes(1501, buf, sizeof(buf));
	cr_expect_str_eq(buf, "1-01:01:00");
}

/* The command: a header sbatch reads, JSON with the same figures, and refusals with exit 2. */
Test(project, command_prints_header_and_json)
{
	const char *sb[] = { "project", NULL, "--units", "40", "--tasks", "4", "--partition", "short",
			     NULL };
	const char *js[] = { "project", "--format", "json", NULL, "--units", "40", "--tasks", "4",
			     NULL };
	struct um_result r;
	json_t *j;
	int sbatch_lines = 0;

	sb[1] = js[3] = fixture("project/calib.json");
	um_run(&r, false, sb);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(strncmp(r.out, "#!/bin/bash\n", 12), 0);
	cr_expect_not_null(strstr(r.out, "\n#SBATCH --time=00:02:00\n"), "%s", r.out);
	cr_expect_not_null(strstr(r.out, "\n#SBATCH --mem=750M\n"), "%s", r.out);
	cr_expect_not_null(strstr(r.out, "\n#SBATCH --cpus-per-task=1\n"), "%s", r.out);
	cr_expect_null(strstr(r.out, "\n#SBATCH --tmp"), "%s", r.out);
	cr_expect_not_null(strstr(r.out, "\n#SBATCH --array=0-3\n"), "%s", r.out);
	cr_expect_not_null(strstr(r.out, "\n#SBATCH --partition=short\n"), "%s", r.out);
	cr_expect_not_null(strstr(r.out, "# --mem: the whole run's peak RSS 600.0 MiB"), "%s", r.out);
	/* each option line alone on its line, each preceded by the comment that derives it */
	for (char *line = strstr(r.out, "\n#SBATCH "); line; line = strstr(line + 1, "\n#SBATCH ")) {
		cr_expect_null(strchr(line + 9, ' ') < strchr(line + 1, '\n') ? strchr(line + 9, ' ')
									       : NULL,
			       "a space after the option: %.40s", line + 1);
		sbatch_lines++;
	}
	cr_expect_eq(sbatch_lines, 5); /* no --tmp: the manifest predates tmp_output_bytes */
	um_result_free(&r);

	um_run(&r, false, js);
	cr_assert_eq(r.status, 0, "%s", r.err);
	j = json_loads(r.out, 0, NULL);
	cr_assert_not_null(j, "%s", r.out);
	cr_expect_eq(jnum(jget(j, "request"), "mem_mib"), 750);
	cr_expect_str_eq(json_string_value(jget(jget(j, "request"), "time")), "00:02:00");
	cr_expect_eq(jnum(jget(j, "inputs"), "units_incomplete"), 1);
	cr_expect(json_is_string(jget(jget(j, "derivation"), "mem")));
	cr_expect_gt(json_array_size(jget(j, "notes")), 0);
	json_decref(j);
	um_result_free(&r);
}

/* The header's comment lines joined where they were wrapped at 100 columns ("\n#   "). */
static void unwrap_comments(char *s)
{
	char *w = s;

	for (const char *r = s; *r;) {
		if (!strncmp(r, "\n#   ", 5) && strncmp(r, "\n#   fixed", 10) &&
		    strncmp(r, "\n#   warm-up", 12) && strncmp(r, "\n#   units:", 11) &&
		    strncmp(r, "\n#   workers", 12)) {
			*w++ = ' ';
			r += 5;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

/*
 * The header's first line names a few files, and an array's many by their count, the directory
 * they share and the first and last: a job array of 200 tasks is one line a person reads.
 */
Test(project, the_header_names_a_few_files_and_counts_many)
{
	char *dir = strdup(fixture("array")), *calib = strdup(fixture("project/calib.json"));
	const char *few[] = { "project", calib, "--units", "40", NULL };
	const char *many[] = { "project", dir, "--units", "40", NULL };
	char want[1024];
	struct um_result r;
	char *first_line_end;

	um_run(&r, false, few);
	cr_assert_eq(r.status, 0, "%s", r.err);
	unwrap_comments(r.out);
	snprintf(want, sizeof(want), "of 40 units, from %s\n", calib);
	cr_expect_not_null(strstr(r.out, want), "%s", r.out);
	um_result_free(&r);

	um_run(&r, false, many);
	cr_assert_eq(r.status, 0, "%s", r.err);
	unwrap_comments(r.out);
	snprintf(want, sizeof(want),
		 "from 5 files in %s/ (4242_1.batch.0.json ... 4242_5.batch.0.units.jsonl)\n", dir);
	cr_expect_not_null(strstr(r.out, want), "%s", r.out);
	first_line_end = strchr(strchr(r.out, '\n') + 1, '\n');
	cr_expect_null(memmem(r.out, (size_t)(first_line_end - r.out), "4242_2", 6), "%s", r.out);
	um_result_free(&r);
	free(dir);
	free(calib);
}

static void expect_refused(const char *const *args, const char *needle)
{
	struct um_result r;
	char *nl;

	um_run(&r, false, args);
	cr_expect_eq(r.status, 2, "status %d for %s: %s", r.status, needle, r.err);
	cr_expect_not_null(strstr(r.err, needle), "wanted '%s' in: %s", needle, r.err);
	cr_expect_str_eq(r.out, "", "nothing on stdout when refused");
	nl = strchr(r.err, '\n');
	cr_expect(nl && !nl[1], "not exactly one line: %s", r.err);
	um_result_free(&r);
}

Test(project, bad_input_and_absurd_numbers_are_refused)
{
	char calib[512];
	const char *f;

	snprintf(calib, sizeof(calib), "%s", fixture("project/calib.json"));
	f = calib;
	expect_refused((const char *[]){ "project", f, NULL }, "--units N is required");
	expect_refused((const char *[]){ "project", f, "--units", "-3", NULL }, "positive whole number");
	expect_refused((const char *[]){ "project", f, "--units", "2.5", NULL }, "positive whole number");
	expect_refused((const char *[]){ "project", f, "--units", "9", "--tasks", "0", NULL },
		       "--tasks needs a positive");
	expect_refused((const char *[]){ "project", f, "--units", "9", "--units-per-task", "0", NULL },
		       "--units-per-task needs a positive");
	expect_refused((const char *[]){ "project", f, "--units", "9", "--margin", "0.9", NULL },
		       "--margin needs a factor");
	expect_refused((const char *[]){ "project", f, "--units", "9", "--margin", "nan", NULL },
		       "--margin needs a factor");
	expect_refused((const char *[]){ "project", f, "--units", "9", "--tasks", "2",
					 "--units-per-task", "3", NULL }, "give one");
	expect_refused((const char *[]){ "project", f, "--units", "9", "--max-time", "0:30", NULL },
		       "at least a minute");
	expect_refused((const char *[]){ "project", f, "--units", "9", "--time-stat", "p50", NULL },
		       "p90 or max");
	expect_refused((const char *[]){ "project", f, "--units", "9", "--format", "xml", NULL },
		       "sbatch or json");
	expect_refused((const char *[]){ "project", f, "--units", "9", "--workers", "0", NULL },
		       "--workers needs a positive");
	expect_refused((const char *[]){ "project", f, "--units", "9", "--workers", "100001", NULL },
		       "at most 100000");
	expect_refused((const char *[]){ "report", f, "--workers", "4", NULL }, "give --units too");
	expect_refused((const char *[]){ "project", "--units", "9", NULL }, "at least one");
	expect_refused((const char *[]){ "project", fixture("project/empty.units.jsonl"), "--units",
					 "9", NULL }, "no complete units");
	expect_refused((const char *[]){ "project", fixture("project/allincomplete.units.jsonl"),
					 "--units", "9", NULL }, "every unit was cut short");
	expect_refused((const char *[]){ "project", fixture("project/truncated.units.jsonl"),
					 "--units", "9", NULL }, "truncated.units.jsonl:2:");
	expect_refused((const char *[]){ "project", "/nonexistent/calib.json", "--units", "9", NULL },
		       "cannot read /nonexistent/calib.json");
}

/*
 * A job array at scale: 100,000 units in 20 streams, read a file at a time, kept as a few
 * figures a unit. The calibration is the files' own (their text, read by strtod), and the command
 * stays under a bound set from its measurement (BENCHMARKS.md: 15 MiB).
 */
Test(project, an_array_of_100000_units_in_20_files_under_a_memory_bound)
{
	struct um_array arr;
	struct um_result r;
	const struct array_truth *t = &arr.t;

	array_make(&arr);
	json_t *j;

	array_run(&r, &arr, (const char *[]){ "project", "--units", "200000", "--tasks", "40",
				       "--format", "json", NULL });
	j = json_loads(r.out, 0, NULL);
	cr_assert_not_null(j, "%s", r.out);
	cr_expect_eq(jnum(jget(j, "inputs"), "units_calibrated"), (double)t->n_complete);
	cr_expect_eq(jnum(jget(j, "inputs"), "units_incomplete"), (double)(t->n - t->n_complete));
	cr_expect_eq(jnum(jget(j, "per_unit"), "wall_s_max"), t->wall_max_complete);
	json_decref(j);
	um_result_free(&r);
	array_remove(&arr);
}

/*
 * `unitmeter project FILE --units N --tasks K [--workers W] [--format json]`, which must exit 0:
 * its stdout (malloc'd).
 */
static char *project_of(const char *file, const char *units, const char *tasks,
			const char *workers, bool json)
{
	const char *args[12] = { "project", file, "--units", units, "--tasks", tasks };
	size_t n = 6;
	struct um_result r;
	char *out;

	if (workers) {
		args[n++] = "--workers";
		args[n++] = workers;
	}
	if (json) {
		args[n++] = "--format";
		args[n++] = "json";
	}
	args[n] = NULL;
	um_run(&r, false, args);
	cr_assert_eq(r.status, 0, "%s: %s", file, r.err);
	unwrap_comments(r.out);
	out = strdup(r.out);
	cr_assert_not_null(out);
	um_result_free(&r);
	return out;
}

/* The same, as JSON: the document. */
static json_t *project_json_of(const char *file, const char *units, const char *tasks)
{
	char *out = project_of(file, units, tasks, NULL, true);
	json_t *j = json_loads(out, 0, NULL);

	cr_assert_not_null(j, "%s", out);
	free(out);
	return j;
}

/*
 * GPUs, from tests/fixtures/project/gpu.json: units on device 0 (1 GiB), on devices 0 and 1
 * (1.5 GiB and 0.5 GiB), none, and device 0 (0.75 GiB); the run held 2 GiB on device 0.
 * --gres=gpu:2, the most devices of one unit; per GPU 1.5 GiB x 1.25 = 1.875 GiB = 2013265920.
 */
Test(project, gpu_units_give_gres_and_the_memory_per_gpu)
{
	char *out = project_of(fixture("project/gpu.json"), "40", "4", "2", false);
	json_t *j, *req, *unit;

	cr_expect_not_null(strstr(out, "# --gres: the most devices one unit held device memory on: "
				       "2 (3 of 4 units used a GPU)\n#SBATCH --gres=gpu:2\n"), "%s", out);
	cr_expect_not_null(strstr(out, "\n# GPU memory: 1.88 GiB per GPU for one unit (its peak on "
				       "one device 1.50 GiB x 1.25 margin)"), "%s", out);
	cr_expect_not_null(strstr(out, "the CUDA context and pools are not in it"), "%s", out);
	/* 2 workers on 2 GPUs: 2 x 1.875 = 3.75 GiB each when shared, or 4 GPUs */
	cr_expect_not_null(strstr(out, "\n# GPUs with 2 workers: 2 units at once on 2 GPUs; the "
				       "per-GPU figure is per unit: 2 units sharing them need up to "
				       "3.75 GiB on each, or ask --gres=gpu:4"), "%s", out);
	cr_expect_not_null(strstr(out, "one device held 2.00 GiB at once, above any unit's 1.50 "
				       "GiB"), "%s", out);
	cr_expect_null(strstr(out, "XLA_PYTHON_CLIENT_PREALLOCATE"), "%s", out);
	free(out);

	j = project_json_of(fixture("project/gpu.json"), "40", "4");
	req = jget(j, "request");
	unit = jget(j, "per_unit");
	cr_expect_str_eq(json_string_value(jget(req, "gres")), "gpu:2");
	cr_expect_eq(jnum(req, "gpus"), 2);
	cr_expect_eq(jnum(req, "gpu_mem_per_gpu_bytes"), 2013265920);
	cr_expect(json_is_true(jget(req, "gpu_mem_traced_only")));
	cr_expect_eq(jnum(unit, "gpu_units"), 3);
	cr_expect_eq(jnum(unit, "gpu_devices_max"), 2);
	cr_expect_eq(jnum(unit, "peak_gpu_device_bytes_max"), 1610612736);
	cr_expect_eq(jnum(unit, "run_peak_gpu_device_bytes"), 2147483648.0);
	cr_expect(json_is_false(jget(unit, "gpu_preallocated")));
	cr_expect(json_is_string(jget(jget(j, "derivation"), "gres")));
	/* one worker calibrated, none asked: no line on sharing */
	cr_expect(json_is_null(jget(jget(j, "derivation"), "gpu_workers")));
	json_decref(j);

	/* the same units as a stream (the fast reader): the same request, no run figure */
	out = project_of(fixture("project/gpu.units.jsonl"), "40", "4", "2", false);
	cr_expect_not_null(strstr(out, "\n#SBATCH --gres=gpu:2\n# GPU memory: 1.88 GiB per GPU"),
			   "%s", out);
	cr_expect_null(strstr(out, "one device held"), "%s", out);
	free(out);
}

/*
 * With NVML read (gpu_nvml.json: gpu.json with each GPU unit's gpu_context_bytes, 300, 500 and
 * 300 MiB), the per-GPU figure adds the largest context: (1.5 GiB + 500 MiB) x 1.25 =
 * 2668625920 bytes, 2.49 GiB; the line says which part was traced and which read.
 */
Test(project, gpu_memory_per_gpu_adds_the_context_nvml_read)
{
	char *out = project_of(fixture("project/gpu_nvml.json"), "40", "4", "1", false);
	json_t *j, *req;

	cr_expect_not_null(strstr(out, "\n# GPU memory: 2.49 GiB per GPU for one unit (its peak on "
				       "one device 1.50 GiB, traced, + the CUDA context and pools "
				       "500.0 MiB, the most NVML read at a unit's end, summed over its "
				       "devices, x 1.25 margin)"), "%s", out);
	cr_expect_null(strstr(out, "are not in it"), "%s", out);
	free(out);
	j = project_json_of(fixture("project/gpu_nvml.json"), "40", "4");
	req = jget(j, "request");
	cr_expect_eq(jnum(req, "gpu_mem_per_gpu_bytes"), 2668625920.0);
	cr_expect(json_is_false(jget(req, "gpu_mem_traced_only")));
	cr_expect_eq(jnum(jget(j, "per_unit"), "gpu_context_bytes_max"), 524288000);
	json_decref(j);
}

/* No unit touched a GPU: no --gres line, no GPU comment, and null in the JSON. */
Test(project, no_gpu_no_gres_line)
{
	char *out = project_of(fixture("project/calib.json"), "40", "4", "2", false);
	json_t *j;

	cr_expect_null(strstr(out, "--gres"), "%s", out);
	cr_expect_null(strstr(out, "GPU"), "%s", out);
	free(out);

	j = project_json_of(fixture("project/calib.json"), "40", "4");
	cr_expect(json_is_null(jget(jget(j, "request"), "gres")));
	cr_expect(json_is_null(jget(jget(j, "request"), "gpus")));
	cr_expect(json_is_null(jget(jget(j, "request"), "gpu_mem_per_gpu_bytes")));
	cr_expect(json_is_null(jget(jget(j, "per_unit"), "peak_gpu_device_bytes_max")));
	cr_expect_eq(jnum(jget(j, "per_unit"), "gpu_units"), 0);
	json_decref(j);
}

/*
 * JAX's preallocation: every unit's device peak is the same 12 GiB block, the run's own. The
 * note says how to calibrate without it; units of different peaks (gpu.json) have none.
 */
Test(project, one_preallocated_block_says_how_to_calibrate_without_it)
{
	char *out = project_of(fixture("project/gpu_prealloc.json"), "30", "3", NULL, false);
	json_t *j;

	cr_expect_not_null(strstr(out, "\n#SBATCH --gres=gpu:1\n"), "%s", out);
	cr_expect_not_null(strstr(out, "# note: every unit's device peak is the same 12.00 GiB, the "
				       "run's own"), "%s", out);
	cr_expect_not_null(strstr(out, "XLA_PYTHON_CLIENT_PREALLOCATE=false"), "%s", out);
	cr_expect_not_null(strstr(out, "XLA_PYTHON_CLIENT_ALLOCATOR=platform"), "%s", out);
	free(out);

	j = project_json_of(fixture("project/gpu_prealloc.json"), "30", "3");
	cr_expect(json_is_true(jget(jget(j, "per_unit"), "gpu_preallocated")));
	/* 12 GiB x 1.25 = 15 GiB */
	cr_expect_eq(jnum(jget(j, "request"), "gpu_mem_per_gpu_bytes"), 16106127360.0);
	json_decref(j);
}

/*
 * The GPU figures of a line, as the fast reader (simdjson) and jansson read them: the same kind
 * and value, or the fast reader hands the line to jansson. The last figure is not a key: the
 * largest peak_bytes of peak_gpu_bytes_by_device.
 */
Test(project, gpu_figures_read_alike_by_both_readers)
{
	static const struct {
		const char *line;
		unsigned char kind;
		double max;
	} cases[] = {
		{ "{\"peak_gpu_bytes\": 3, \"gpu_devices\": 2, \"peak_gpu_bytes_by_device\": "
		  "[{\"device\": 0, \"peak_bytes\": 1}, {\"device\": 1, \"peak_bytes\": 2}]}", UM_V_INT, 2 },
		{ "{\"peak_gpu_bytes_by_device\": [{\"device\": null, \"peak_bytes\": 7.5}]}",
		  UM_V_REAL, 7.5 },
		{ "{\"peak_gpu_bytes_by_device\": []}", UM_V_INT, 0 },
		{ "{\"peak_gpu_bytes_by_device\": null}", UM_V_NULL, 0 },
		{ "{\"wall_s\": 1}", UM_V_ABSENT, 0 },
		{ "{\"peak_gpu_bytes_by_device\": [{\"device\": 0}]}", UM_V_OTHER, 0 },
		{ "{\"peak_gpu_bytes_by_device\": [5]}", UM_V_OTHER, 0 },
		{ "{\"peak_gpu_bytes_by_device\": {\"peak_bytes\": 5}}", UM_V_OTHER, 0 },
		{ "{\"peak_gpu_bytes_by_device\": [{\"peak_bytes\": \"5\"}]}", UM_V_OTHER, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const int f = UM_F_PEAK_GPU_DEVICE_MAX_BYTES;
		char buf[512] = "";
		size_t len = strlen(cases[i].line);
		struct um_read_unit fast, slow;
		struct um_unit_text t;
		json_t *doc = json_loads(cases[i].line, 0, NULL);

		cr_assert_not_null(doc);
		memcpy(buf, cases[i].line, len);
		cr_assert_lt(len + UM_FASTJSON_PADDING, sizeof(buf));
		um_unit_from_json(doc, &slow, &t);
		cr_expect_eq(slow.kind[f], cases[i].kind, "case %zu: jansson's kind %d", i,
			     slow.kind[f]);
		cr_expect_eq(um_unit_number(&slow, f, 0), cases[i].max, "case %zu", i);
		if (!um_fastjson_unit(buf, len, &fast, &t)) {
			for (int k = UM_F_PEAK_GPU_BYTES; k < UM_F_N; k++) {
				cr_expect_eq(fast.kind[k], slow.kind[k], "case %zu field %d", i, k);
				cr_expect_eq(um_unit_number(&fast, k, 0), um_unit_number(&slow, k, 0),
					     "case %zu field %d", i, k);
			}
		}
		json_decref(doc);
	}
	/* a plain line is the fast reader's own: it must not hand it back */
	{
		char buf[512] = "{\"gpu_devices\": 2, \"peak_gpu_bytes_by_device\": [{\"peak_bytes\": 9}]}";
		struct um_read_unit fast;
		struct um_unit_text t;

		cr_assert_eq(um_fastjson_unit(buf, strlen(buf), &fast, &t), 0);
		cr_expect_eq(fast.kind[UM_F_PEAK_GPU_DEVICE_MAX_BYTES], UM_V_INT);
		cr_expect_eq(fast.v[UM_F_PEAK_GPU_DEVICE_MAX_BYTES].i, 9);
		cr_expect_eq(fast.v[UM_F_GPU_DEVICES].i, 2);
	}
}

/*
 * The projection's percentiles select (project_time.c) where the summary's sort: the same
 * figure, bit for bit, on inputs of many repeats, sorted, reversed and spread, at every
 * percentile the projection asks and the ends; the input keeps its order.
 */
Test(project, percentile_by_selection_is_the_sorted_one)
{
	const double qs[] = { 0, 10, 50, 90, 99.9, 100 };
	const size_t n = 20011;
	double *v = malloc(n * sizeof(*v)), *sorted = malloc(n * sizeof(*sorted));
	uint64_t state = 11;

	cr_assert(v && sorted);
	for (int shape = 0; shape < 4; shape++) {
		for (size_t i = 0; i < n; i++) {
			state ^= state << 13, state ^= state >> 7, state ^= state << 17;
			v[i] = shape == 0   ? (double)(state % 5)		/* many repeats */
			       : shape == 1 ? (double)i * 0.25		/* sorted */
			       : shape == 2 ? (double)(n - i) * 1e6	/* reversed */
					    : (double)(state >> 11) / 9.0; /* spread */
		}
		for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
			double want, got;

			memcpy(sorted, v, n * sizeof(*v));
			want = um_percentile(sorted, n, qs[k]);
			got = um_percentile_of(v, n, qs[k]);
			cr_expect_eq(got, want, "shape %d, q %g: %.17g, sorted %.17g", shape, qs[k],
				     got, want);
		}
		if (shape == 1)
			for (size_t i = 1; i < n; i++)
				cr_assert(v[i - 1] < v[i], "the input was moved at %zu", i);
	}
	free(v);
	free(sorted);
}

/* `unitmeter project ARGS...` (NULL-terminated), which must exit 0: its stdout (malloc'd). */
static char *project_out(const char *const *args)
{
	struct um_result r;
	char *out;

	um_run(&r, false, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	out = strdup(r.out);
	cr_assert_not_null(out);
	um_result_free(&r);
	return out;
}

/*
 * tests/fixtures/project/tmp.json: 4 units each wrote 8 MiB to files, of which 1 MiB (one unit
 * 0.5 MiB) under the node-local tmp dir /scratch/job42. 100 units a task: 100 x 1 MiB x 1.25 =
 * 125 MiB, past 64 MiB: --tmp=125M. 10 a task: 12.5 MiB, under it: no --tmp line.
 */
Test(project, tmp_from_node_local_writes_only_from_64_mib_a_task)
{
	const char *f = fixture("project/tmp.json");
	char *big = project_out((const char *[]){ "project", f, "--units", "400", "--tasks", "4",
						  NULL });
	char *small = project_out((const char *[]){ "project", f, "--units", "400", "--tasks", "40",
						    NULL });
	json_t *j = project_json_of(f, "400", "4"), *req = jget(j, "request");

	cr_expect_not_null(strstr(big, "\n#SBATCH --tmp=125M\n"), "%s", big);
	cr_expect_not_null(strstr(big, "a unit wrote at most 1.0 MiB under /scratch/job42"), "%s", big);
	cr_expect_null(strstr(small, "#SBATCH --tmp"), "%s", small);
	cr_expect_not_null(strstr(small, "# no --tmp: a unit wrote at most 1.0 MiB under /scratch/job42"),
			   "%s", small);
	cr_expect_not_null(strstr(small, "= 12.5 MiB a task, under 64.0 MiB"), "%s", small);
	cr_expect_eq(jnum(req, "tmp_mib"), 125);
	cr_expect_str_eq(json_string_value(jget(req, "tmp_decision")), "requested");
	cr_expect_eq(jnum(jget(j, "per_unit"), "tmp_output_bytes_max"), 1048576);
	cr_expect_str_eq(json_string_value(jget(jget(j, "inputs"), "tmp_dir")), "/scratch/job42");
	json_decref(j);
	j = project_json_of(f, "400", "40");
	cr_expect(json_is_null(jget(jget(j, "request"), "tmp_mib")));
	cr_expect_str_eq(json_string_value(jget(jget(j, "request"), "tmp_decision")),
			 "below_threshold");
	json_decref(j);
	free(big);
	free(small);
}

/* A manifest from before the figure (calib.json's units wrote 1 MiB each, anywhere): no --tmp
 * line, and a note that says why. */
Test(project, no_tmp_from_files_that_predate_the_figure)
{
	char *out = project_out((const char *[]){ "project", fixture("project/calib.json"),
						  "--units", "4000", "--tasks", "4", NULL });
	json_t *j = project_json_of(fixture("project/calib.json"), "4000", "4");

	unwrap_comments(out);
	cr_expect_null(strstr(out, "#SBATCH --tmp"), "%s", out);
	cr_expect_not_null(strstr(out, "# note: no --tmp line: what the units wrote to node-local "
				       "scratch was not"), "%s", out);
	cr_expect_not_null(strstr(out, "predates unitmeter's count of node-local writes"), "%s", out);
	cr_expect(json_is_null(jget(jget(j, "per_unit"), "tmp_output_bytes_max")));
	cr_expect_str_eq(json_string_value(jget(jget(j, "request"), "tmp_decision")), "not_measured");
	json_decref(j);
	free(out);
}

/* Every line of the default header of every fixture fits 100 columns, says no "charge", and
 * ends with the pointer to --explain. */
Test(project, default_header_lines_fit_100_columns)
{
	static const char *const files[] = { "project/calib.json", "project/nocharge.json",
		"project/pool.json", "project/timeline.json", "project/gpu.json",
		"project/gpu_nvml.json", "project/gpu_prealloc.json", "project/tmp.json",
		"project/gpu.units.jsonl", "array" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *out = project_out((const char *[]){ "project", fixture(files[i]), "--units",
							  "5000", "--tasks", "7", "--workers", "3",
							  NULL });
		int lineno = 0;

		for (char *line = out, *end; *line; line = end + 1) {
			end = strchrnul(line, '\n');
			lineno++;
			cr_expect_leq(end - line, 100, "%s line %d: %.*s", files[i], lineno,
				      (int)(end - line), line);
			if (!*end)
				break;
		}
		/* the word, not the fixture named nocharge.json */
		cr_expect_null(strstr(out, " charge"), "%s: %s", files[i], out);
		cr_expect_null(strstr(out, "charge "), "%s: %s", files[i], out);
		cr_expect_not_null(strstr(out, "\n# (unitmeter project --explain: "), "%s", out);
		/* the time model's parts are --explain's */
		cr_expect_null(strstr(out, "#   fixed: "), "%s", out);
		free(out);
	}
}

/* --explain: the whole derivation, still within 100 columns a line. */
Test(project, explain_prints_the_derivation)
{
	const char *f = fixture("project/timeline.json");
	char *out = project_out((const char *[]){ "project", f, "--units", "40", "--explain", NULL });
	json_t *j = project_json_of(f, "40", "1");
	const char *parts = json_string_value(json_array_get(jget(jget(j, "derivation"),
								   "time_parts"), 0));

	for (char *line = out, *end; *line; line = end + 1) {
		end = strchrnul(line, '\n');
		cr_expect_leq(end - line, 100, "%.*s", (int)(end - line), line);
		if (!*end)
			break;
	}
	cr_expect_not_null(parts);
	unwrap_comments(out);
	cr_expect_not_null(strstr(out, "#   fixed: 3.00 s before the first unit + 2.00 s after the"),
			   "%s", out);
	cr_expect_not_null(strstr(out, "#   warm-up: "), "%s", out);
	cr_expect_not_null(strstr(out, "#   units: "), "%s", out);
	cr_expect_not_null(strstr(out, "#   workers: "), "%s", out);
	cr_expect_not_null(strstr(out, "# --cpus-per-task: 1 worker x max CPU utilisation"), "%s",
			   out);
	cr_expect_null(strstr(out, "--explain: how"), "%s", out);

	json_decref(j);
	free(out);
}

/* --json is --format json. */
Test(project, json_switch_is_format_json)
{
	const char *f = fixture("project/pool.json");
	char *a = project_out((const char *[]){ "project", f, "--units", "300", "--json", NULL });
	char *b = project_out((const char *[]){ "project", "--format", "json", f, "--units", "300",
						NULL });

	json_t *j = json_loads(a, 0, NULL);

	cr_expect_str_eq(a, b);
	cr_expect_not_null(j, "%s", a);
	json_decref(j);
	free(a);
	free(b);
}

/* ---- the outputs, byte for byte ----------------------------------------------------------- */

/*
 * What project and summary print on the fixtures, against the files kept in
 * tests/fixtures/golden/ (issue #35: moving or splitting the code that makes them changes none
 * of it). An argument "@F" is the fixture F; the fixtures' directory is written
 * "tests/fixtures" in the files. A change meant to change an output writes its file anew:
 * UM_GOLDEN_WRITE=1 with this test's filter (CONTRIBUTING.md).
 */
static const struct golden_case {
	const char *file;
	const char *args[12];
} golden_cases[] = {
	{ "project-calib.sbatch", { "project", "@project/calib.json", "--units", "4000" } },
	{ "project-calib-explain.sbatch",
	  { "project", "@project/calib.json", "--units", "4000", "--tasks", "4", "--explain" } },
	{ "project-calib.json", { "project", "@project/calib.json", "--units", "4000", "--json" } },
	{ "project-calib-max-time.json",
	  { "project", "@project/calib.json", "--units", "4000", "--max-time", "1:00:00",
	    "--json" } },
	{ "project-gpu.sbatch", { "project", "@project/gpu.json", "--units", "100" } },
	{ "project-gpu-nvml-explain.sbatch",
	  { "project", "@project/gpu_nvml.json", "--units", "100", "--explain" } },
	{ "project-gpu-prealloc.json",
	  { "project", "@project/gpu_prealloc.json", "--units", "100", "--json" } },
	{ "project-nocharge.sbatch", { "project", "@project/nocharge.json", "--units", "50" } },
	{ "project-pool-explain.sbatch",
	  { "project", "@project/pool.json", "--units", "500", "--explain" } },
	{ "project-pool.json", { "project", "@project/pool.json", "--units", "500", "--json" } },
	{ "project-timeline.json",
	  { "project", "@project/timeline.json", "--units", "10", "--json" } },
	{ "project-array-explain.sbatch", { "project", "@array", "--units", "1000", "--explain" } },
	{ "project-array.json", { "project", "@array", "--units", "1000", "--json" } },
	{ "summary-calib.txt", { "summary", "@project/calib.json" } },
	{ "summary-array-by-task.txt", { "summary", "--by-task", "@array" } },
};

/* The tree the fixtures are in (FIXTURES is its tests/fixtures), where the commands run: their
 * outputs name the files as "tests/fixtures/...", and wrap their comments where they would for
 * a user who typed that. */
static char golden_top[1024];

static void enter_golden_top(void)
{
	if (chdir(golden_top))
		_exit(126);
}

Test(project, outputs_are_those_of_the_golden_files)
{
	const char *fixtures = fixture("");
	bool write = getenv("UM_GOLDEN_WRITE") != NULL;
	size_t top_len = strlen(fixtures) - strlen("tests/fixtures/");

	cr_assert(strlen(fixtures) > strlen("tests/fixtures/") &&
		  !strcmp(fixtures + top_len, "tests/fixtures/"), "FIXTURES %s", fixtures);
	snprintf(golden_top, sizeof(golden_top), "%.*s", (int)top_len, fixtures);
	for (size_t c = 0; c < sizeof(golden_cases) / sizeof(golden_cases[0]); c++) {
		const struct golden_case *g = &golden_cases[c];
		char path[1200], *args_copy[12] = { 0 }, *out, *want;
		const char *args[12] = { 0 };
		struct um_result r;

		for (int i = 0; g->args[i]; i++) {
			if (g->args[i][0] == '@') {
				size_t len = strlen("tests/fixtures/") + strlen(g->args[i]);

				args_copy[i] = malloc(len);
				cr_assert_not_null(args_copy[i]);
				snprintf(args_copy[i], len, "tests/fixtures/%s", g->args[i] + 1);
				args[i] = args_copy[i];
			} else {
				args[i] = g->args[i];
			}
		}
		um_run_with(&r, false, args, enter_golden_top);
		cr_assert_eq(r.status, 0, "%s: %s", g->file, r.err);
		out = strdup(r.out);
		cr_assert_not_null(out);
		snprintf(path, sizeof(path), "%stests/fixtures/golden/%s", golden_top, g->file);
		if (write) {
			FILE *f = fopen(path, "w");

			cr_assert_not_null(f, "%s: %s", path, strerror(errno));
			fputs(out, f);
			cr_assert_eq(fclose(f), 0);
		} else {
			want = slurp_file(path);
			cr_assert_not_null(want, "no golden file %s", path);
			cr_expect_str_eq(out, want, "%s differs from tests/fixtures/golden/%s",
					 g->args[0], g->file);
			free(want);
		}
		free(out);
		for (int i = 0; i < 12; i++)
			free(args_copy[i]);
		um_result_free(&r);
	}
}
