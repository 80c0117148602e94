// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Units delimited by uprobes on fit_unit(): each unit's figures against what the unit measured
 * of itself (bytes touched, thread CPU clocks, pids), and the stream's survival.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/btf.h>
#include "helpers.h"
#include "common/unit_keys.h"

TestSuite(units, .init = require_tracing, .timeout = UM_SUITE_TIMEOUT_S);

static json_t *run_units(struct um_result *r, const char *const *mode_args)
{
	const char *args[32] = { "run", "--unit", "fit_unit", workload("units") };
	int n = 4;

	for (int i = 0; mode_args[i] && n < 31; i++)
		args[n++] = mode_args[i];
	args[n] = NULL;
	um_run(r, true, args);
	cr_assert_not_null(r->manifest, "no manifest (status %d): %s", r->status, r->err);
	return jget(r->manifest, "units");
}

/*
 * A command that exits the moment its only unit returns: the unit's record (submitted without
 * waking the reader) and the exit record race to the ring, and the programs are released in
 * the background after the manifest is written. The unit is in the manifest every time.
 */
Test(units, last_unit_of_a_command_that_exits_at_once_is_kept)
{
	const char *mode[] = { "--mode", "spikes", "--sizes", "4", "--hold-ms", "0", "--exit-at-once",
			       NULL };

	for (int round = 0; round < 5; round++) {
		struct um_result r;
		json_t *units = run_units(&r, mode);

		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_expect_eq(json_array_size(units), 1, "round %d: %zu units in the manifest", round,
			     json_array_size(units));
		cr_expect_eq(json_array_size(r.units), 1, "round %d: %zu units in the stream", round,
			     json_array_size(r.units));
		if (json_array_size(units) == 1)
			cr_expect_str_eq(json_string_value(jget(json_array_get(units, 0), "status")),
					 "complete");
		um_result_free(&r);
	}
}

Test(units, spike_sizes_each_within_a_mebibyte)
{
	static const double sizes_mib[] = { 16, 48, 32, 80, 8 };
	const char *mode[] = { "--mode", "spikes", "--sizes", "16,48,32,80,8", "--hold-ms", "1", NULL };
	struct um_result r;
	json_t *units = run_units(&r, mode), *u;
	size_t i;

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(json_array_size(units), 5, "units: %zu\n%s", json_array_size(units), r.err);
	json_array_foreach(units, i, u) {
		double delta = jnum(u, "peak_rss_delta_bytes"), truth = sizes_mib[i] * MIB_F;

		cr_expect(within(delta, truth, 0.01, MIB_F), "unit %zu: peak delta %.0f, touched %.0f",
			  i, delta, truth);
		cr_expect_str_eq(json_string_value(jget(u, "status")), "complete");
		cr_expect_str_eq(json_string_value(jget(u, "spec")), "fit_unit");
		cr_expect_eq(jnum(u, "index"), i);
	}
	/* the seed's keys and ours, every one present */
	{
		static const char *keys[] = { "wall_s", "cpu_s", "cpu_utilisation", "peak_rss_bytes",
			"peak_rss_delta_bytes", "start_rss_bytes", "n_samples", "output_bytes", "index",
			"spec", "pid", "start_ns", "page_alloc_bytes", "processes", "threads", "status" };

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			jget(json_array_get(units, 0), keys[k]);
	}
	um_result_free(&r);
}

/*
 * Units of a few pages, each fewer faults than a thread's RSS cache takes before the kernel
 * folds it into the mm (64, before 6.2), and kept mapped until after the unit returns (an unmap
 * inside the unit would fold the cache first): there the pages reach the mm only through the
 * cache, and a tracer that does not read it sees none of them (6.1: checked, every unit 0).
 * Exact to the page (4 pages for the unit's own /proc reading and stack), on every kernel.
 */
Test(units, small_units_exact_to_the_page)
{
	static const double sizes_kib[] = { 160, 40, 200, 8, 240 };
	const char *mode[] = { "--mode", "spikes", "--kib", "--keep", "--sizes", "160,40,200,8,240",
			       "--hold-ms", "1", NULL };
	struct um_result r;
	json_t *units = run_units(&r, mode), *u;
	size_t i;

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(json_array_size(units), 5, "units: %zu\n%s", json_array_size(units), r.err);
	json_array_foreach(units, i, u) {
		double delta = jnum(u, "peak_rss_delta_bytes"), truth = sizes_kib[i] * 1024;

		cr_expect(delta >= truth && delta <= truth + pages_f(4),
			  "unit %zu: peak delta %.0f, touched %.0f", i, delta, truth);
	}
	um_result_free(&r);
}

/* page_alloc_bytes of each unit within [low, low * 1.02 + slack MiB] (page tables, stacks). */
static void expect_page_allocs(const char *const *mode, const double *low_mib, size_t n,
			       double slack_mib)
{
	struct um_result r;
	json_t *units = run_units(&r, mode), *u;
	size_t i;

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(json_array_size(units), n, "units: %zu\n%s", json_array_size(units), r.err);
	json_array_foreach(units, i, u) {
		double bytes = jnum(u, "page_alloc_bytes"), low = low_mib[i] * MIB_F;

		cr_expect(bytes >= low && bytes <= low * 1.02 + slack_mib * MIB_F,
			  "%s unit %zu: page_alloc_bytes %.0f, pages touched %.0f", mode[1], i, bytes, low);
	}
	um_result_free(&r);
}

/*
 * Pages are counted per CPU and charged at switch-out and at the unit's edges: every page a
 * unit touches is in it (its own, its threads', its child's), and none of the unit before it.
 */
Test(units, page_allocs_of_the_unit_its_threads_and_child)
{
	const char *spikes[] = { "--mode", "spikes", "--sizes", "16,48,8", "--hold-ms", "0", NULL };
	const char *threads[] = { "--mode", "cpu", "--units", "3", "--cpu-ms", "20", "--threads", "3",
				  "--thread-mib", "24", NULL };
	const char *child[] = { "--mode", "fork", "--child-mib", "48", "--cpu-ms", "50", NULL };
	static const double spikes_mib[] = { 16, 48, 8 }, threads_mib[] = { 48, 48, 48 },
			    child_mib[] = { 48 };

	expect_page_allocs(spikes, spikes_mib, 3, 1);
	expect_page_allocs(threads, threads_mib, 3, 2);
	expect_page_allocs(child, child_mib, 1, 4);
}

/*
 * CPU-bound units, `threads` threads each. A unit runs from its entry probe to its return probe,
 * so its CPU lies between two clocks of the workload: the thread clocks across the function's
 * body (cpu_ns), and the process clock across the call (call_cpu_ns: the probes' own work on the
 * thread and the helper threads' start and exit too). Each unit's cpu_s must fall within 2% of
 * that interval. On real hardware the two differ by microseconds; in an emulated guest the
 * probes take milliseconds (2% of a 250 ms unit, measured: the first unit of a run the most).
 */
static void expect_unit_cpu(const char *units, const char *cpu_ms, const char *threads,
			    const char *uprobe_links)
{
	const char *mode[] = { "--mode", "cpu", "--units", units, "--cpu-ms", cpu_ms, "--threads", threads, NULL };
	struct um_result r;
	json_t *list = run_units(&r, mode), *u, *truth;
	size_t i;

	cr_assert_eq(json_array_size(list), (size_t)atoi(units), "%s", r.err);
	if (uprobe_links)
		cr_expect_str_eq(json_string_value(jget(jget(jget(r.manifest, "run"), "tracing"),
							"uprobe_links")), uprobe_links);
	truth = jget(r.truth, "units");
	json_array_foreach(list, i, u) {
		double cpu = jnum(u, "cpu_s"), body = jnum(json_array_get(truth, i), "cpu_ns") / 1e9,
		       call = jnum(json_array_get(truth, i), "call_cpu_ns") / 1e9;

		cr_expect(body <= call, "unit %zu: the body's clocks %.4f s above the call's %.4f s",
			  i, body, call);
		cr_expect(cpu >= body * 0.98 && cpu <= call * 1.02,
			  "unit %zu: cpu %.4f s, thread clocks of the body %.4f s, process clock of the "
			  "call %.4f s (wall %.4f s, start_ns %.0f, switch-in misses %.0f)", i, cpu, body,
			  call, jnum(u, "wall_s"), jnum(u, "start_ns"),
			  jnum(jget(r.manifest, "run"), "switch_in_misses"));
		cr_expect_eq(jnum(u, "threads"), atoi(threads));
	}
	um_result_free(&r);
}

Test(units, cpu_within_2_percent_of_thread_clocks)
{
	expect_unit_cpu("3", "250", "1", NULL);
}

Test(units, multithreaded_unit_counts_every_thread)
{
	expect_unit_cpu("2", "300", "3", NULL);
}

/* Whether the kernel's BTF names the multi-uprobe link's attach type (6.6 on). */
static bool kernel_has_uprobe_multi(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int id = btf ? btf__find_by_name_kind(btf, "bpf_attach_type", BTF_KIND_ENUM) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	bool found = false;

	for (int i = 0; t && i < btf_vlen(t); i++)
		found = found || !strcmp(btf__name_by_offset(btf, btf_enum(t)[i].name_off),
					 "BPF_TRACE_UPROBE_MULTI");
	btf__free(btf);
	return found;
}

/*
 * The unit probes are multi-uprobe links where the kernel makes them, perf events elsewhere
 * (user/trace/uprobe_link.c): the manifest says which, and either way a unit counts its threads'
 * CPU. UNITMETER_UPROBE_LINK=perf takes perf events where multi-uprobe links exist too.
 */
Test(units, multi_uprobe_links_and_perf_events_count_alike)
{
	expect_unit_cpu("2", "100", "2", kernel_has_uprobe_multi() ? "multi" : "perf");
	setenv("UNITMETER_UPROBE_LINK", "perf", 1);
	expect_unit_cpu("2", "100", "2", "perf");
}

/*
 * The handover (docs/how-it-measures.md): units close at a high rate while more threads than
 * CPUs spin and yield, so a unit's close meets its threads' switch-ins and switch-outs on the
 * other CPU, over 10,000 units (1,000 in an emulated guest, UM_GUEST: 10-30x slower). Each
 * thread brackets its own CLOCK_THREAD_CPUTIME_ID at the unit's edges (tools/workloads/
 * handover.c): the least it can have run inside the unit's body, the most across the call. A
 * slice lost at a crossing puts cpu_s below the first, a slice counted twice above the second;
 * 0.1 ms either way is allowed (the bracket's own reading, microseconds here). A busy
 * neighbour (an untracked process spinning on every CPU) preempts the tracked threads too.
 */
static void expect_handover_exact(bool neighbour)
{
	const char *units = getenv("UM_GUEST") ? "1000" : "10000";
	const char *mode[] = { "run", "--unit", "fit_unit", workload("handover"), "--units", units,
			       "--threads", "4", "--body-us", "50", "--yield-us", "2", NULL };
	pid_t busy[2] = { 0, 0 };
	struct um_result r;
	json_t *list, *truth, *u, *bpf, *tracing;
	size_t i, outside = 0, allowed;
	const char *build;
	double worst = 0;
	char *unseen, seen[1024] = "";
	size_t seen_len = 0;

	for (int k = 0; neighbour && k < 2; k++) {
		busy[k] = fork();
		cr_assert(busy[k] >= 0);
		if (busy[k] == 0)
			for (volatile unsigned long spin = 0;; spin++)
				;
	}
	um_run(&r, true, mode);
	for (int k = 0; k < 2; k++)
		if (busy[k] > 0) {
			kill(busy[k], SIGKILL);
			waitpid(busy[k], NULL, 0);
		}
	cr_assert_not_null(r.manifest, "no manifest (status %d): %s", r.status, r.err);
	list = jget(r.manifest, "units");
	truth = jget(r.truth, "units");
	cr_assert_eq(json_array_size(list), (size_t)atoi(units), "%s", r.err);
	cr_assert_eq(json_array_size(truth), (size_t)atoi(units));
	/* a storm: a context switch for one unit in five at least (alone here, about 7 a unit;
	 * with the neighbour taking the CPUs, about one in two) */
	cr_expect_gt(jnum(r.truth, "context_switches"), atoi(units) / 5, "%.0f context switches",
		     jnum(r.truth, "context_switches"));
	json_array_foreach(list, i, u) {
		json_t *t = json_array_get(truth, i);
		double cpu = jnum(u, "cpu_s") * 1e9, lo = jnum(t, "cpu_ns"), hi = jnum(t, "cpu_hi_ns");
		double off = cpu < lo ? cpu - lo : cpu > hi ? cpu - hi : 0;

		if (fabs(off) > 1e5 && outside++ < 5 && seen_len < sizeof(seen))
			seen_len += snprintf(seen + seen_len, sizeof(seen) - seen_len,
					     "\n  unit %zu: cpu %.1f us, its threads' clocks %.1f to "
					     "%.1f us (wall %.1f us, %.0f threads)", i, cpu / 1e3,
					     lo / 1e3, hi / 1e3, jnum(u, "wall_s") * 1e6,
					     jnum(u, "threads"));
		if (fabs(off) > fabs(worst))
			worst = off;
	}
	bpf = jget(jget(r.manifest, "run"), "bpf");
	tracing = jget(jget(r.manifest, "run"), "tracing");
	build = json_string_value(jget(tracing, "build"));
	cr_assert_not_null(build, "run.tracing.build is not a string");
	/* units that may be spoilt, one for each event the manifest counts: a switch-in the
	 * kernel did not report (this machine's own kernel, docs/limitations.md: none on Debian's),
	 * made late at the thread's next system call with its slice's start reconstructed (seen
	 * here: 1 unit in 10,000 +107 us, with 5). Every build's handover is one atomic step (an
	 * exchange, or in the baseline an insert: model.bpf.h), and needs no lock. */
	allowed = jnum(jget(bpf, "switch_ins_unseen"), "made_late");
	unseen = json_dumps(jget(bpf, "switch_ins_unseen"), JSON_COMPACT);
	cr_expect_leq(outside, allowed, "%zu of %s units outside their threads' clocks by more than "
		      "0.1 ms (worst %+.1f us); switch_ins_unseen %s, handover_timeouts %.0f, "
		      "lock_timeouts %.0f (%s build)%s", outside, units, worst / 1e3, unseen,
		      jnum(bpf, "handover_timeouts"), jnum(tracing, "lock_timeouts"), build, seen);
	/* the units the allowance took, for the log: info, since Criterion's exit status counts
	 * a logged error or warning as a failure (CI's 6.1 cell: 58 of 58 passed, exit 1) */
	if (outside && outside <= allowed)
		cr_log_info("%zu units outside, within the allowance:%s", outside, seen);
	free(unseen);
	/* a close waits out any switch under way (bpf_loop: a million looks; the baseline ~30,000
	 * in rounds), and the baseline's keys never fill their map (the loader sweeps it) */
	cr_expect_eq(jnum(bpf, "handover_timeouts"), 0, "%s build", build);
	/* a closer found running unseen is taken to the ns, never left at the last tick */
	cr_expect_eq(jnum(jget(bpf, "switch_ins_unseen"), "at_close"),
		     jnum(jget(bpf, "switch_ins_unseen"), "at_close_exact"));
	um_result_free(&r);
}

Test(units, handover_exact_under_a_switch_storm)
{
	expect_handover_exact(false);
}

/*
 * In the matrix's guests only: this machine is itself a KVM guest, and with its two vCPUs kept
 * busy the host steals from them at random; a steal at a unit's edge is known to the kernel only
 * at the runqueue's next clock update (KVM's up-to-date count is a per-CPU variable whose
 * address this kernel does not publish), so one unit in ~60,000 here read up to 0.15 ms high.
 */
Test(units, handover_exact_with_a_busy_neighbour)
{
	if (!getenv("UM_GUEST"))
		cr_skip_test("the host's own vCPUs are stolen from at random (UM_GUEST unset)");
	expect_handover_exact(true);
}

/*
 * A helper thread joined in one unit is not a thread of the next. The joiner runs SCHED_FIFO on
 * the helpers' one CPU (--rt-joiner), so the helper's exit, waking it, is preempted before the
 * helper's last switch-out, and the next unit opens while the kernel still runs the joined
 * thread. Where the kernel preempts at that point (the matrix's guests: voluntary preemption)
 * unitmeter counted it (2, 3, 3, 3 of 2 each) until a thread left the count at its exit call.
 */
Test(units, a_joined_thread_is_not_counted_in_the_next_unit)
{
	const char *mode[] = { "--mode", "cpu", "--units", "4", "--cpu-ms", "20", "--threads", "2",
			       "--rt-joiner", NULL };
	struct um_result r;
	json_t *list = run_units(&r, mode), *u;
	size_t i;

	cr_assert_eq(json_array_size(list), 4, "%s", r.err);
	json_array_foreach(list, i, u)
		cr_expect_eq(jnum(u, "threads"), 2, "unit %zu: %.0f threads, 2 ran", i,
			     jnum(u, "threads"));
	um_result_free(&r);
}

/*
 * A recursive unit function: one unit per outermost call, from its entry to its own return.
 * Each of the 6 levels burns 15 ms after its inner call returns, so a unit that an inner
 * return closed (or an inner entry opened) would miss up to 90 ms of the outermost body's CPU.
 */
Test(units, recursion_counts_once)
{
	const char *mode[] = { "--mode", "recursion", "--units", "4", "--depth", "6", "--cpu-ms",
			       "20", "--level-ms", "15", NULL };
	struct um_result r;
	json_t *units = run_units(&r, mode), *u, *t;
	size_t i;

	cr_assert_eq(json_array_size(units), 4, "4 outermost calls, each 7 deep: %zu units",
		     json_array_size(units));
	json_array_foreach(units, i, u) {
		double cpu = jnum(u, "cpu_s");
		double body, call;

		t = json_array_get(jget(r.truth, "units"), i);
		body = jnum(t, "recursion_cpu_ns") / 1e9;
		call = jnum(t, "call_cpu_ns") / 1e9;
		cr_expect_eq(jnum(u, "pid"), jnum(t, "pid"));
		cr_expect_eq(jnum(u, "index"), (double)i);
		cr_expect_str_eq(json_string_value(jget(u, "status")), "complete");
		cr_expect_geq(body, 0.100, "the outermost body burns 20 + 6 x 15 ms: %.4f s", body);
		cr_expect(cpu >= body * 0.98 && cpu <= call * 1.02,
			  "unit %zu: cpu %.4f s; the outermost body's thread clock %.4f s, the call's "
			  "process clock %.4f s", i, cpu, body, call);
	}
	um_result_free(&r);
}

/* The child forked inside the unit belongs to it: its memory and its CPU. */
Test(units, forked_child_joins_the_unit)
{
	const char *mode[] = { "--mode", "fork", "--child-mib", "48", "--cpu-ms", "300", NULL };
	struct um_result r;
	json_t *units = run_units(&r, mode), *u, *t;
	double cpu_low, cpu_high;

	cr_assert_eq(json_array_size(units), 1, "%s", r.err);
	u = json_array_get(units, 0);
	t = json_array_get(jget(r.truth, "units"), 0);
	cr_expect_eq(jnum(u, "processes"), 2);
	/* the parent holds still; the scope grows by the child's whole RSS */
	cr_expect(within(jnum(u, "peak_rss_delta_bytes"), jnum(t, "child_rss_hold"), 0.01, MIB_F),
		  "peak delta %.0f, child's own RSS %.0f", jnum(u, "peak_rss_delta_bytes"),
		  jnum(t, "child_rss_hold"));
	/* between the parent's body clock and its process clock across the call (the probes'
	 * work included, as expect_unit_cpu explains), plus the child's rusage */
	cpu_low = (jnum(t, "cpu_ns") + jnum(t, "child_cpu_ns")) / 1e9;
	cpu_high = (jnum(t, "call_cpu_ns") + jnum(t, "child_cpu_ns")) / 1e9;
	cr_expect(jnum(u, "cpu_s") >= cpu_low * 0.98 && jnum(u, "cpu_s") <= cpu_high * 1.02,
		  "cpu %.4f, parent's body clock + child %.4f, parent's call + child %.4f",
		  jnum(u, "cpu_s"), cpu_low, cpu_high);
	um_result_free(&r);
}

static void expect_last_incomplete(const char *how, int expected_status, int nunits)
{
	const char *mode[] = { "--mode", how, NULL };
	struct um_result r;
	json_t *units = run_units(&r, mode);

	cr_expect_eq(r.status, expected_status, "status %d: %s", r.status, r.err);
	cr_assert_eq(json_array_size(units), (size_t)nunits, "%s", r.err);
	for (int i = 0; i < nunits; i++)
		cr_expect_str_eq(json_string_value(jget(json_array_get(units, i), "status")),
				 i == nunits - 1 ? "incomplete" : "complete", "unit %d", i);
	/* the stream has the same units, the incomplete one included */
	cr_expect_eq(json_array_size(r.units), (size_t)nunits);
	/* an exit or a SIGKILL it sent itself: no OOM kill, though SIGKILL is the OOM killer's */
	cr_expect_eq(jnum(jget(r.manifest, "run"), "oom_kills"), 0, "%s", how);
	cr_expect(json_is_false(jget(proc_record(r.manifest, (long)jnum(json_array_get(units, 0),
									 "pid")), "oom_killed")), "%s", how);
	um_result_free(&r);
}

Test(units, exit_inside_a_unit_is_incomplete)
{
	expect_last_incomplete("exit", 3, 3);
}

Test(units, sigkill_inside_a_unit_is_incomplete)
{
	expect_last_incomplete("kill", 128 + SIGKILL, 2);
}

/* Two workers at the same time: each unit's memory and CPU are its own process's only. */
Test(units, concurrent_workers_measured_apart)
{
	const char *mode[] = { "--mode", "workers", "--workers", "2", "--units", "3", NULL };
	struct um_result r;
	json_t *units = run_units(&r, mode), *truth, *u, *t;
	size_t i, j;

	cr_assert_eq(json_array_size(units), 6, "%s", r.err);
	truth = jget(r.truth, "units");
	cr_assert_eq(json_array_size(truth), 6);
	/* match the k-th unit of each pid in both lists */
	json_array_foreach(truth, i, t) {
		long pid = (long)jnum(t, "pid");
		size_t k = 0, seen = 0;

		for (j = 0; j < i; j++)
			k += (long)jnum(json_array_get(truth, j), "pid") == pid;
		json_array_foreach(units, j, u) {
			if ((long)jnum(u, "pid") != pid || seen++ != k)
				continue;
			cr_expect(within(jnum(u, "peak_rss_delta_bytes"), jnum(t, "bytes"), 0.01, MIB_F),
				  "pid %ld unit %zu: peak delta %.0f, touched %.0f", pid, k,
				  jnum(u, "peak_rss_delta_bytes"), jnum(t, "bytes"));
			/* between the body's clock and the process clock across the call, as in
			 * expect_unit_cpu: a process's first unit carries the probes' first work (31 ms
			 * of a 195 ms body in the 16K arm64 guest) */
			cr_expect(jnum(u, "cpu_s") >= jnum(t, "cpu_ns") / 1e9 * 0.95 &&
					  jnum(u, "cpu_s") <= jnum(t, "call_cpu_ns") / 1e9 * 1.05,
				  "pid %ld unit %zu: cpu %.4f, body clock %.4f, call clock %.4f (wall "
				  "%.4f, start_ns %.0f, lost %.0f) %s", pid, k, jnum(u, "cpu_s"),
				  jnum(t, "cpu_ns") / 1e9, jnum(t, "call_cpu_ns") / 1e9,
				  jnum(u, "wall_s"), jnum(u, "start_ns"),
				  jnum(jget(r.manifest, "run"), "lost_events"), json_dumps(u, 0));
			break;
		}
		cr_expect_eq(seen > k, true, "no unit %zu for pid %ld", k, pid);
	}
	um_result_free(&r);
}

static size_t count_lines(const char *path, bool require_json)
{
	char line[65536];
	size_t n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (require_json) {
			json_t *v = json_loads(line, 0, NULL);

			cr_assert_not_null(v, "a line of the stream is not complete JSON: %s", line);
			json_decref(v);
			cr_assert_eq(line[strlen(line) - 1], '\n', "a partial last line");
		}
		n++;
	}
	fclose(f);
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* kill -9 of unitmeter mid-run: every finished unit is in the stream, every line complete. */
Test(units, stream_survives_sigkill_of_unitmeter)
{
	char dir[] = "/tmp/um-kill-XXXXXX", manifest[96], stream[96];
	pid_t pid;
	size_t lines = 0;
	json_t *first;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(manifest, sizeof(manifest), "%s/run.json", dir);
	snprintf(stream, sizeof(stream), "%s/run.units.jsonl", dir);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(unitmeter_bin(), "unitmeter", "run", "-q", "--unit", "fit_unit", "-o", manifest,
		      workload("units"), "--mode", "slow", "--units", "100", "--sleep-ms", "20", (char *)NULL);
		_exit(99);
	}
	for (int i = 0; i < 200 && lines < 3; i++) {
		sleep_ms(50);
		lines = count_lines(stream, false);
	}
	cr_assert_geq(lines, 3, "no units streamed within 10 s");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	lines = count_lines(stream, true);
	cr_expect_geq(lines, 3);
	/* the workload lives on untraced: end it */
	{
		FILE *f = fopen(stream, "r");
		char line[4096];

		if (f && fgets(line, sizeof(line), f)) {
			first = json_loads(line, 0, NULL);
			kill((pid_t)jnum(first, "pid"), SIGKILL);
			json_decref(first);
		}
		if (f)
			fclose(f);
	}
	{
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		cr_expect_eq(system(cmd), 0);
	}
}

/*
 * attach to a workload already running: the units that start after attach are found. Stopped
 * with SIGINT once five units are in the stream (not after a fixed time: an emulated guest
 * under load may take seconds to attach), as a user ends an attach with Ctrl-C.
 */
Test(units, attach_finds_units_after_attach)
{
	int out;
	pid_t target, um;
	char pidtext[16], dir[] = "/tmp/um-attach-XXXXXX", manifest[64], stream[80];
	char errpath[80], *err;
	json_t *m, *units, *u;
	size_t i, lines = 0;
	int status;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(manifest, sizeof(manifest), "%s/run.json", dir);
	snprintf(stream, sizeof(stream), "%s/run.units.jsonl", dir);
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	target = slow_units_started("1000", "50", &out);
	snprintf(pidtext, sizeof(pidtext), "%d", target);
	um = fork();
	if (um == 0) {
		int errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(errfd, 2);
		execl(unitmeter_bin(), "unitmeter", "attach", "-q", "-p", pidtext, "--unit", "fit_unit",
		      "-o", manifest, (char *)NULL);
		_exit(99);
	}
	for (int t = 0; t < 1200 && lines < 5; t++) { /* 120 s at most */
		sleep_ms(100);
		lines = count_lines(stream, false);
	}
	kill(um, SIGINT);
	cr_assert_eq(waitpid(um, &status, 0), um);
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	close(out);
	err = slurp_file(errpath);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "unitmeter status 0x%x: %s", status,
		  err ? err : "");
	cr_assert_geq(lines, 5, "units streamed within 120 s of attaching: %zu\n%s", lines,
		      err ? err : "");
	free(err);
	m = json_load_file(manifest, 0, NULL);
	cr_assert_not_null(m, "no manifest after SIGINT");
	units = jget(m, "units");
	cr_expect_geq(json_array_size(units), 5);
	json_array_foreach(units, i, u) {
		cr_expect_eq(jnum(u, "pid"), target);
		cr_expect_str_eq(json_string_value(jget(u, "status")), "complete");
		cr_expect(within(jnum(u, "peak_rss_delta_bytes"), 8 * MIB_F, 0.01, MIB_F),
			  "unit %zu: delta %.0f", i, jnum(u, "peak_rss_delta_bytes"));
	}
	cr_expect_str_eq(json_string_value(jget(proc_record(m, target), "status")), "running");
	json_decref(m);
	{
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		cr_expect_eq(system(cmd), 0);
	}
}

/* A library the program loads with dlopen() after tracing began. */
Test(units, function_in_a_library_loaded_later)
{
	char spec[600], lib[512], driver[512];
	struct um_result r;
	const char *args[] = { "run", "--unit", spec, driver, lib, "4", "24", NULL };
	json_t *units, *u;
	size_t i;

	/* workload() returns one buffer: copy each path before asking for the next */
	snprintf(driver, sizeof(driver), "%s", workload("dlopen_driver"));
	snprintf(lib, sizeof(lib), "%s", workload("libunitfit.so"));
	snprintf(spec, sizeof(spec), "%s:lib_fit_unit", lib);
	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	units = jget(r.manifest, "units");
	cr_expect_eq(json_array_size(units), (size_t)jnum(r.truth, "calls"));
	json_array_foreach(units, i, u)
		cr_expect(within(jnum(u, "peak_rss_delta_bytes"), jnum(r.truth, "bytes"), 0.01, MIB_F),
			  "unit %zu: delta %.0f", i, jnum(u, "peak_rss_delta_bytes"));
	um_result_free(&r);
}

static void expect_refused(const char *spec, const char *cmd, const char *message)
{
	struct um_result r;
	const char *args[] = { "run", "--unit", spec, cmd, NULL };

	um_run(&r, true, args);
	cr_expect_eq(r.status, RUN_FAILED, "status %d for --unit %s", r.status, spec);
	cr_expect_not_null(strstr(r.err, message), "stderr: %s", r.err);
	cr_expect_eq(strchr(r.err, '\n') - r.err + 1, (long)strlen(r.err), "not one line: %s", r.err);
	cr_expect_null(r.manifest, "nothing may start");
	cr_expect_str_eq(r.out, "", "the command must not run");
	um_result_free(&r);
}

Test(units, unknown_symbol_lists_the_closest_names)
{
	expect_refused("fit_unti", workload("units"), "has no function 'fit_unti'; closest: fit_unit");
}

Test(units, stripped_binary_is_named)
{
	expect_refused("fit_unit", workload("units-stripped"), "has no symbol table (stripped?)");
}

Test(units, non_elf_file_is_named)
{
	expect_refused("/etc/passwd:main", workload("units"), "/etc/passwd is not an ELF executable");
}


/*
 * --lookup-at-exec: a shell runs the program with the unit function twice. Each process is held
 * at the exec of a program not seen before, so even the first call of the first process is a
 * unit; the programs without the symbol (sh, true) run on untouched.
 */
Test(units, lookup_at_exec_finds_units_in_programs_a_script_runs)
{
	char script[512];
	const char *args[] = { "run", "--lookup-at-exec", "--unit", "fit_unit", "--", "sh", "-c",
			       script, NULL };
	static const double sizes_mib[] = { 8, 24, 16 };
	struct um_result r;
	json_t *units, *u, *spec;
	size_t i;

	snprintf(script, sizeof(script),
		 "%s --mode spikes --sizes 8 >/dev/null; true; %s --mode spikes --sizes 24,16 >/dev/null",
		 workload("units"), workload("units"));
	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	units = jget(r.manifest, "units");
	cr_assert_eq(json_array_size(units), 3, "units: %zu\n%s", json_array_size(units), r.err);
	json_array_foreach(units, i, u) {
		cr_expect(within(jnum(u, "peak_rss_delta_bytes"), sizes_mib[i] * MIB_F, 0.01, MIB_F),
			  "unit %zu: delta %.0f", i, jnum(u, "peak_rss_delta_bytes"));
		cr_expect_str_eq(json_string_value(jget(u, "status")), "complete");
	}
	cr_expect_neq(jnum(json_array_get(units, 0), "pid"), jnum(json_array_get(units, 1), "pid"));
	spec = json_array_get(jget(r.manifest, "unit_specs"), 0);
	cr_expect_str_eq(json_string_value(jget(spec, "path")), realpath(workload("units"), script));
	um_result_free(&r);
}

Test(units, lookup_at_exec_says_when_the_symbol_never_came)
{
	const char *args[] = { "run", "--lookup-at-exec", "--unit", "fit_unit", "--", "sh", "-c",
			       "true; ls / >/dev/null", NULL };
	struct um_result r;

	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(json_array_size(jget(r.manifest, "units")), 0);
	cr_expect_not_null(strstr(r.err, "fit_unit was not found in any program"), "%s", r.err);
	cr_expect(json_is_null(jget(json_array_get(jget(r.manifest, "unit_specs"), 0), "path")));
	um_result_free(&r);
}

/* A directory of the test's own outside /tmp (the default tmp dir), and its name. */
static void make_dir(char *dir, size_t len, const char *what)
{
	snprintf(dir, len, "/var/tmp/um-%s-%d", what, getpid());
	cr_assert(!mkdir(dir, 0755) || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
}

/*
 * --tmp-dir D: a unit that writes N bytes to D/a, one to D/sub/deeper/b (nested), one to a
 * file elsewhere. tmp_output_bytes is each file's size under D and 0 elsewhere; output_bytes
 * counts all three. Truth: the files' sizes after each unit.
 */
Test(units, tmp_output_bytes_count_writes_under_the_tmp_dir_only)
{
	char tmp[128], elsewhere[128], sub[160], deeper[192], paths[640];
	json_t *units, *files, *run;
	struct um_result r;
	double sum = 0;

	make_dir(tmp, sizeof(tmp), "tmpdir");
	make_dir(elsewhere, sizeof(elsewhere), "elsewhere");
	snprintf(sub, sizeof(sub), "%s/sub", tmp);
	snprintf(deeper, sizeof(deeper), "%s/deeper", sub);
	cr_assert(!mkdir(sub, 0755) || errno == EEXIST);
	cr_assert(!mkdir(deeper, 0755) || errno == EEXIST);
	snprintf(paths, sizeof(paths), "%s/a,%s/b,%s/c", tmp, deeper, elsewhere);
	um_run(&r, true, (const char *[]){ "run", "--tmp-dir", tmp, "--unit", "fit_unit",
					   workload("units"), "--mode", "write", "--paths", paths,
					   "--bytes", "300007", NULL });
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_not_null(r.truth, "%s", r.out);
	units = jget(r.manifest, "units");
	files = jget(r.truth, "files");
	cr_assert_eq(json_array_size(units), 3, "%s", r.err);
	cr_assert_eq(json_array_size(files), 3, "%s", r.out);
	for (size_t i = 0; i < 3; i++) {
		json_t *u = json_array_get(units, i);
		double size = jnum(json_array_get(files, i), "file_size");

		cr_expect_eq(size, 300007);
		cr_expect_eq(jnum(u, "output_bytes"), size, "unit %zu", i);
		cr_expect_eq(jnum(u, "tmp_output_bytes"), i < 2 ? size : 0, "unit %zu: %.0f", i,
			     jnum(u, "tmp_output_bytes"));
		if (i < 2)
			sum += size;
	}
	/* the stream says the same; the run and the process that wrote them add them up */
	cr_expect_eq(jnum(json_array_get(r.units, 1), "tmp_output_bytes"),
		     jnum(json_array_get(files, 1), "file_size"));
	run = jget(r.manifest, "run");
	cr_expect_eq(jnum(run, "tmp_output_bytes"), sum);
	cr_expect_eq(jnum(proc_record(r.manifest, (long)jnum(json_array_get(units, 0), "pid")),
			  "tmp_output_bytes"), sum);
	cr_expect_str_eq(json_string_value(jget(jget(run, "tmp_dir"), "path")), tmp);
	cr_expect_str_eq(json_string_value(jget(jget(run, "tmp_dir"), "source")), "--tmp-dir");
	snprintf(paths, sizeof(paths), "rm -rf '%s' '%s'", tmp, elsewhere);
	cr_expect_eq(system(paths), 0);
	um_result_free(&r);
}

/* What `unitmeter check` says writes, forks and exits are seen at: "functions" or "tracepoints". */
static const char *syscall_hooks_offered(void)
{
	struct um_result r;
	const char *hooks;

	um_run(&r, false, (const char *[]){ "check", NULL });
	cr_assert_not_null(strstr(r.out, "writes, forks and exits seen at"), "%s", r.out);
	hooks = strstr(r.out, "fexit/fentry of vfs_write") ? "functions" : "tracepoints";
	um_result_free(&r);
	return hooks;
}

/*
 * Writes, forks and exits are seen at the kernel functions the calls go through where fexit
 * attaches, else at the syscall tracepoints, which every syscall of the node pays for
 * (bpf/syscalls.bpf.c). Each way that attaches here counts alike: the writer's four calls
 * (write, pwrite, writev, pwritev; stdout and /dev/null not counted) under --tmp-dir and
 * outside it, and a forked child's RSS from its fork on (its copy of the parent's pages, seen
 * while the parent is inside the fork). A run takes the functions wherever check says so.
 */
Test(units, writes_and_forks_alike_at_the_functions_and_the_tracepoints)
{
	static const char *const hooks[] = { "functions", "tracepoints" };
	const char *offered = syscall_hooks_offered();
	char tmp[128], file[192], outside[160];
	struct um_result r;

	make_dir(tmp, sizeof(tmp), "hooks");
	snprintf(file, sizeof(file), "%s/written", tmp);
	snprintf(outside, sizeof(outside), "/var/tmp/um-hooks-outside-%d", getpid());
	for (size_t h = 0; h < 2; h++) {
		json_t *run, *child;
		size_t i;

		if (!strcmp(hooks[h], "functions") && strcmp(offered, "functions")) {
			cr_log_info("fexit does not attach here: the functions are tried in the kernel "
				    "matrix (make vmtest)");
			continue;
		}
		setenv("UNITMETER_SYSCALL_HOOKS", hooks[h], 1);
		for (int under = 1; under >= 0; under--) {
			um_run(&r, true, (const char *[]){ "run", "-q", "--tmp-dir", tmp,
							   workload("writer"), "--bytes", "1000003",
							   "--file", under ? file : outside, NULL });
			cr_assert_eq(r.status, 0, "%s: %s", hooks[h], r.err);
			cr_assert_not_null(r.truth, "%s: %s", hooks[h], r.out);
			run = jget(r.manifest, "run");
			cr_expect_str_eq(json_string_value(jget(jget(run, "tracing"), "syscall_hooks")),
					 hooks[h]);
			cr_expect_eq(jnum(run, "output_bytes"), jnum(r.truth, "file_size"),
				     "%s: %.0f written, the file has %.0f", hooks[h],
				     jnum(run, "output_bytes"), jnum(r.truth, "file_size"));
			cr_expect_eq(jnum(run, "tmp_output_bytes"), under ? jnum(r.truth, "file_size") : 0,
				     "%s, %s the tmp dir: %.0f", hooks[h], under ? "under" : "outside",
				     jnum(run, "tmp_output_bytes"));
			um_result_free(&r);
		}
		um_run(&r, true, (const char *[]){ "run", "-q", workload("forker"), "--parent-mib",
						   "64", "--children", "2", "--child-mib", "0",
						   "--cpu-ms", "10", NULL });
		cr_assert_eq(r.status, 0, "%s: %s", hooks[h], r.err);
		cr_assert_not_null(r.truth, "%s: %s", hooks[h], r.out);
		json_array_foreach(jget(r.truth, "children"), i, child) {
			double peak = jnum(proc_record(r.manifest, (long)jnum(child, "pid")),
					   "peak_rss_bytes");
			double at_fork = jnum(child, "rss_at_fork_bytes");

			cr_expect(within(peak, at_fork, 0.01, MIB_F),
				  "%s: child peak %.0f, its RSS read after the fork %.0f", hooks[h], peak,
				  at_fork);
		}
		um_result_free(&r);
	}
	unsetenv("UNITMETER_SYSCALL_HOOKS");
	um_run(&r, true, (const char *[]){ "run", "-q", "/bin/true", NULL });
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_str_eq(json_string_value(jget(jget(jget(r.manifest, "run"), "tracing"),
						"syscall_hooks")), offered);
	um_result_free(&r);
	cr_expect_eq(unlink(file), 0);
	cr_expect_eq(unlink(outside), 0);
	cr_expect_eq(rmdir(tmp), 0);
}

/* A tmp dir that does not exist: the figure is null, not 0, and the manifest says why. */
Test(units, tmp_output_bytes_null_without_a_tmp_dir)
{
	struct um_result r;
	json_t *u;

	um_run(&r, true, (const char *[]){ "run", "--tmp-dir", "/nonexistent/um-tmp", "--unit",
					   "fit_unit", workload("units"), "--mode", "spikes",
					   "--sizes", "1", NULL });
	cr_assert_eq(r.status, 0, "%s", r.err);
	u = json_array_get(jget(r.manifest, "units"), 0);
	cr_assert_not_null(u, "%s", r.err);
	cr_expect(json_is_null(jget(u, "tmp_output_bytes")));
	cr_expect(json_is_null(jget(jget(r.manifest, "run"), "tmp_output_bytes")));
	cr_expect_not_null(strstr(json_string_value(jget(jget(jget(r.manifest, "run"), "tmp_dir"),
							 "note")), "cannot be read"));
	cr_expect_not_null(strstr(r.err, "tmp_output_bytes will be null"), "%s", r.err);
	um_result_free(&r);
}

/* The keys of the man page's "Unit keys" section: the .B name after each .TP. */
static json_t *man_unit_keys(void)
{
	char path[1024], line[512], prev[512] = "";
	json_t *keys = json_object();
	bool in_section = false;
	FILE *f;

	/* the man page beside the fixtures: FIXTURES is the tree's tests/fixtures */
	snprintf(path, sizeof(path), "%s../../man/unitmeter.1", fixture(""));
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, ".SS ", 4))
			in_section = !strcmp(line, ".SS Unit keys");
		else if (in_section && !strcmp(prev, ".TP") && !strncmp(line, ".B ", 3))
			json_object_set_new(keys, line + 3, json_true());
		snprintf(prev, sizeof(prev), "%s", line);
	}
	fclose(f);
	return keys;
}

/*
 * The file format said once (issue #35): common/unit_keys.h's table is every key a unit
 * carries, in the stream and in the manifest (incomplete_reason only when incomplete), and
 * the man page's Unit keys are the table's keys, no more and no fewer; the readers' key tables
 * are made from it. A key the writer, a reader or the man page spells otherwise fails here or does not
 * compile, instead of reading as a figure silently null.
 */
Test(units, the_keys_written_read_and_documented_are_the_same)
{
	static const struct {
		const char *key, *form;
	} table[] = {
#define UM_TABLE_KEY(field, key, form, value, known, max, read) { key, #form },
		UM_UNIT_KEYS(UM_TABLE_KEY)
#undef UM_TABLE_KEY
	};
	const char *mode[] = { "--mode", "spikes", "--sizes", "2", "--hold-ms", "1", NULL };
	json_t *documented = man_unit_keys(), *in_table = json_object(), *units, *value;
	struct um_result r;
	const char *key;

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		json_object_set_new(in_table, table[i].key, json_true());
		cr_expect_not_null(json_object_get(documented, table[i].key),
				   "the table's unit key \"%s\" is not in the man page's Unit keys",
				   table[i].key);
	}
	json_object_foreach(documented, key, value)
		cr_expect_not_null(json_object_get(in_table, key),
				   "the man page's unit key \"%s\" is not in the table", key);
	units = run_units(&r, mode);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(json_array_size(units), 1);
	cr_assert_eq(json_array_size(r.units), 1);
	for (int from = 0; from < 2; from++) {
		json_t *unit = json_array_get(from ? r.units : units, 0);

		json_object_foreach(unit, key, value)
			cr_expect_not_null(json_object_get(in_table, key),
					   "the %s's unit key \"%s\" is not in the table",
					   from ? "stream" : "manifest", key);
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
			cr_expect(json_object_get(unit, table[i].key) ||
					  !strcmp(table[i].form, "TEXT_OR_ABSENT"),
				  "the table's unit key \"%s\" is not in the %s's unit", table[i].key,
				  from ? "stream" : "manifest");
	}
	json_decref(in_table);
	json_decref(documented);
	um_result_free(&r);
}
