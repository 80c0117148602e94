// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `unitmeter summary` on untrusted bytes: a manifest or a units stream, loaded and summarised. */
#include <stdint.h>
#include <stdio.h>
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
	if (um_load_units(path, units, err, sizeof(err)) == 0) {
		FILE *sink = fopen("/dev/null", "w");

		summary = um_summarise(units);
		if (sink) {
			um_print_summary_table(sink, summary);
			fclose(sink);
		}
		json_decref(summary);
	}
	close(fd);
	json_decref(units);
	return 0;
}
