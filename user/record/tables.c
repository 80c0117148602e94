// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <sys/wait.h>
#include "record/run_record_internal.h"
#include "trace/spec.h"
#include "common/summary.h"
#include "record/tables.h"
#include "record/unit_record.h"

/* Units listed in the closing table; the manifest has them all. */
#define UM_TABLE_ROWS 40

/* Units grouped by the process that ran them, so a pool's workers read apart. */
static void print_units_by_process(const struct run_record *r, FILE *out)
{
	size_t shown = 0, n = r->n_units;

	if (!n)
		return;
	fprintf(out, "\n%-6s %-8s %-20s %10s %7s %11s %11s %11s %s\n", "unit", "pid", "spec",
		"wall s", "cores", "peak MiB", "delta MiB", "cgroup MiB", "status");
	for (size_t p = 0; p < r->n_procs; p++) {
		for (size_t i = 0; i < n; i++) {
			const struct um_unit_record *u = &r->units[i];
			double wall = unit_wall_s(u);

			if ((pid_t)u->pid != r->procs[p].pid)
				continue;
			if (shown++ == UM_TABLE_ROWS) {
				fprintf(out, "... %zu more units in the manifest\n", n - UM_TABLE_ROWS);
				return;
			}
			char charge[32] = "-";

			if (u->peak_charge_bytes != UM_CHARGE_UNKNOWN)
				snprintf(charge, sizeof(charge), "%.1f", u->peak_charge_bytes / 1048576.0);
			fprintf(out, "%-6zu %-8d %-20s %10.4f %7.2f %11.1f %11.1f %11s %s\n", i,
				r->procs[p].pid,
				unit_spec_label(run_record__unit_spec(r, u)),
				wall, wall > 0 ? um_seconds(u->cpu_ns) / wall : 0.0,
				u->peak_rss_bytes / 1048576.0,
				(u->peak_rss_bytes > u->start_rss_bytes ?
				 u->peak_rss_bytes - u->start_rss_bytes : 0) / 1048576.0, charge,
				u->status == UM_UNIT_COMPLETE ? "complete" : "incomplete");
		}
	}
}

void run_record__print_tables(const struct run_record *r, FILE *out)
{
	json_t *summary;

	fprintf(out, "\n%-8s %-8s %-16s %10s %12s %12s %s\n", "pid", "ppid", "comm", "cpu s",
		"peak MiB", "written B", "status");
	for (size_t i = 0; i < r->n_procs; i++) {
		const struct proc_row *p = &r->procs[i];
		char status[32];

		if (!p->finished)
			snprintf(status, sizeof(status), "%s", p->alive_at_end ? "running" : "?");
		else if (WIFSIGNALED(p->exit_code))
			snprintf(status, sizeof(status), "signal %d", WTERMSIG(p->exit_code));
		else
			snprintf(status, sizeof(status), "exit %d", WEXITSTATUS(p->exit_code));
		fprintf(out, "%-8d %-8d %-16s %10.3f %12.1f %12llu %s\n", p->pid, p->ppid, p->comm,
			um_seconds(p->cpu_ns), p->peak_rss_bytes / 1048576.0,
			(unsigned long long)p->output_bytes, status);
	}
	fprintf(out, "group: peak RSS %.1f MiB (sum over live processes), %zu processes\n",
		r->trace.counters.group_peak_rss_bytes / 1048576.0, r->n_procs);
	{
		uint64_t charge;

		/* the kernel's word is "charge"; the user's is the memory their cgroup holds */
		if (run_record__peak_charge(r, &charge))
			fprintf(out, "memory (cgroup): peak %.1f MiB, what SLURM's --mem is enforced on "
				"(a page shared by processes once, page cache included)\n",
				charge / 1048576.0);
		else
			fprintf(out, "memory (cgroup): not measured (%s)\n",
				r->memcg.id ? "no traced process was seen in the memory cgroup"
					    : r->memcg.reason);
	}
	if (!r->cfg->n_specs)
		return;
	print_units_by_process(r, out);
	fprintf(out, "\n");
	summary = r->summary ? json_incref(r->summary) : um_summarise_records(r->units, r->n_units);
	um_print_summary_table(out, summary);
	json_decref(summary);
}

