/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The run manifest (schema unitmeter.run/1): the command, its unit specs, the hardware, the
 * units' summary, the run's own figures with the per-process table, and every unit.
 */
#ifndef UM_MANIFEST_H
#define UM_MANIFEST_H

#include <jansson.h>
#include "record/run_record.h"

/*
 * The manifest as a JSON object, all but its "units" array (a new reference): what
 * run_record__write_manifest writes ahead of the units, and what a writer of another form starts
 * from. Computes the units' summary once and keeps it in the run record.
 */
json_t *run_record__manifest(struct run_record *r);
/* Build the manifest and write it to path, atomically (temp file + rename). */
int run_record__write_manifest(struct run_record *r, const char *path);

#endif
