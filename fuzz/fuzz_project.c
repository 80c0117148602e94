// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `unitmeter project` on untrusted bytes: the first byte picks the options (split, margin,
 * statistic, time limit, workers), the rest is the calibration file; both outputs are written.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <jansson.h>
#include "fuzz_input.h"
#include "project/project.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct project_options opt = { .units_total = 1000, .margin = 1.25 };
	const char *files[1];
	struct project_input in;
	struct projection p;
	char path[64], err[1024];
	uint8_t knobs;
	int fd;

	if (size < 1)
		return 0;
	knobs = data[0];
	opt.units_total = 1 + (knobs & 7) * 997;
	if (knobs & 8)
		opt.tasks = 1 + (knobs >> 5);
	else if (knobs & 16)
		opt.units_per_task = 1 + (knobs >> 5);
	opt.time_max = knobs & 32;
	opt.max_time_s = (knobs & 64) ? 3600 : 0;
	opt.margin = (knobs & 128) ? 1.0 : 1.25;
	opt.partition = (knobs & 4) ? "short" : NULL;
	opt.workers = (knobs & 2) ? 16 : 0; /* above most calibrations: added workers' memory */
	fd = fuzz_file(data + 1, size - 1, path, sizeof(path));
	if (fd < 0)
		return 0;
	files[0] = path;
	if (um_project_load(files, 1, &in, err, sizeof(err)) == 0 &&
	    um_project(&in, &opt, &p, err, sizeof(err)) == 0) {
		FILE *sink = fopen("/dev/null", "w");
		json_t *j = um_projection_json(&p, &in, &opt, files, 1);

		if (sink) {
			um_print_sbatch(sink, &p, &opt, files, 1);
			json_dumpf(j, sink, 0);
			fclose(sink);
		}
		json_decref(j);
	}
	um_project_input_free(&in);
	close(fd);
	return 0;
}
