/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Long options are exact. getopt takes any unique prefix, so `run --units fit_unit` was read
 * as --units-jsonl: a file named fit_unit, no unit measured, exit 0. Checked before argp sees
 * the line; a name that is not an option is refused with the closest real one.
 */
#ifndef UM_EXACT_OPTIONS_H
#define UM_EXACT_OPTIONS_H

#include <argp.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Check the options of argv[0..argc) against argp's (its children's too). The scan ends at "--",
 * and at the first argument that is not an option when commands_follow (run: the command's own
 * options are its own). Returns 0, or -1 with one line in why ("unknown option '--units'; did
 * you mean --unit?"). renamed: pairs of an old name and the option that replaced it
 * ({ "tasks", "by-task", NULL }), or NULL.
 */
int exact_options_check(const struct argp *argp, const char *const *renamed, int argc,
			char **argv, bool commands_follow, char *why, size_t whylen);

#endif
