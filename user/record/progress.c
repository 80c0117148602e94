// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include "record/progress.h"
#include "trace/spec.h"
#include "record/unit_record.h"

/* Progress lines per second at most. */
#define UM_PROGRESS_LINES 20

static bool progress_line_due(struct progress *p, uint64_t now_ns)
{
	if (now_ns - p->second_ns >= 1000000000ULL) {
		if (p->skipped)
			fprintf(stderr, "... and %zu more units in that second\n", p->skipped);
		p->second_ns = now_ns;
		p->lines = 0;
		p->skipped = 0;
	}
	if (p->lines < UM_PROGRESS_LINES) {
		p->lines++;
		return true;
	}
	p->skipped++;
	return false;
}

void progress__unit(struct progress *p, size_t index, const struct um_unit_record *u,
		    const char *spec)
{
	double wall = unit_wall_s(u);

	if (p->quiet || !progress_line_due(p, u->end_ns))
		return;
	fprintf(stderr, "unit %-5zu pid %-7u %-20s wall %9.4f s  cpu %5.2f cores  peak %9.1f MiB%s\n",
		index, u->pid, unit_spec_label(spec), wall,
		wall > 0 ? um_seconds(u->cpu_ns) / wall : 0.0, u->peak_rss_bytes / 1048576.0,
		u->status == UM_UNIT_COMPLETE ? "" : "  (incomplete)");
}

void progress__flush(struct progress *p)
{
	if (p->skipped && !p->quiet) {
		fprintf(stderr, "... and %zu more units\n", p->skipped);
		p->skipped = 0;
	}
}
