/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `unitmeter report`: one self-contained HTML page of run manifests and units streams (merged as
 * summary merges them): each run, how the units' costs spread, the processes and units over
 * time, memory over time, the per-unit table, and the projected SLURM request when asked. Inline
 * SVG, CSS and a few lines of script; nothing is fetched, so it can be copied off a node and
 * opened anywhere.
 */
#ifndef UM_HTML_H
#define UM_HTML_H

#include <stddef.h>
#include <sys/types.h>
#include "project/project.h"

/* Units listed one per row in the table at most; the figures and charts take every unit. */
#define HTML_TABLE_ROWS 2000

struct html_request {
	const char *const *files;
	size_t n_files;
	const char *output;
	/* the projection's options (units_total > 0), or NULL: the page has no request */
	const struct project_options *project;
	uid_t owner_uid; /* the page is handed to this user (run under sudo); 0: not */
	gid_t owner_gid;
};

/* Write the page (a temporary file renamed into place). Returns 0, or -1 with one line in err. */
int html_report_write(const struct html_request *req, char *err, size_t errlen);

#endif
