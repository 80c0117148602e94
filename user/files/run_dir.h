/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A directory of run files, as the SPANK plugin leaves one per job (unitmeter-out/): each task's
 * manifest JOB.STEP.TASK.json, and its units stream JOB.STEP.TASK.units.jsonl. Named on the
 * command line, a directory stands for its manifests, and for the streams that have none beside
 * them (a task whose tracer was killed): a manifest holds every unit of its stream, which read
 * twice would count twice.
 */
#ifndef UM_RUN_DIR_H
#define UM_RUN_DIR_H

#include <stddef.h>

/*
 * The inputs with each directory among them replaced by its run files, in version order
 * (task 2 before task 10); files named alone are kept as given. Each task is read once: a file
 * named twice is kept where it first appears, and a stream named with its manifest is dropped
 * (*n_dropped: how many names were). *out (strings and list) is freed by um_inputs_free.
 * Returns 0, or -1 with one line in err (a directory that cannot be read, or holds no run file).
 */
int um_expand_inputs(char *const *in, int n_in, char ***out, int *n_out, int *n_dropped,
		     char *err, size_t errlen);
void um_inputs_free(char **inputs, int n);

#endif
