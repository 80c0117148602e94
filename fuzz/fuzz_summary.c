// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `unitmeter summary` on untrusted bytes: a manifest or a units stream, loaded and summarised,
 * and read again by the streaming reader (um_summarise_files: simdjson's fast path, jansson
 * where it cannot say), which must take or refuse the same input, with the same words, to the
 * same summary.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "fuzz_input.h"
#include "files/summary.h"
#include "files/units_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *units = json_array(), *summary;
	char path[64], err[1024];
	int fd = fuzz_file(data, size, path, sizeof(path));

	if (fd < 0) {
		json_decref(units);
		return 0;
	}
	const char *files[1] = { path };
	char err2[1024];
	int rc = um_load_units(path, units, err, sizeof(err));
	json_t *streamed = um_summarise_files(files, 1, NULL, err2, sizeof(err2));

	if (rc == 0) {
		FILE *sink = fopen("/dev/null", "w");

		summary = um_summarise(units);
		if (sink) {
			um_print_summary_table(sink, summary);
			fclose(sink);
		}
		if (!json_equal(summary, streamed)) {
			fprintf(stderr, "the streaming reader's summary differs\n");
			abort();
		}
		json_decref(summary);
	} else if (streamed || strcmp(err, err2)) {
		fprintf(stderr, "refused as \"%s\", streamed as \"%s\"\n", err,
			streamed ? "taken" : err2);
		abort();
	}
	json_decref(streamed);
	close(fd);
	json_decref(units);
	return 0;
}
