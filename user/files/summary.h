/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The seed's summarise() over what the files hold: a JSON array of units, or the units of
 * manifests and units streams read through units_file.h. The statistics: common/summary.h.
 */
#ifndef UM_SUMMARY_H
#define UM_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "common/summary.h"

/* The summary over a JSON array of unit objects. */
json_t *um_summarise(const json_t *units);

/*
 * The summary of the units of n_files manifests or units streams, read one unit at a time
 * (um_read_units): only the four figures a unit are kept. unitless (n_files entries, or NULL)
 * says which files held no unit. NULL with one line in err on failure.
 */
json_t *um_summarise_files(const char *const *files, size_t n_files, bool *unitless, char *err,
			   size_t errlen);

#endif
