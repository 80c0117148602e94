/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python: units. The traced interpreter imports unitmeter's bootstrap (python/unitmeter_boot,
 * through PYTHONPATH), which calls two native markers at each unit function's entry and return;
 * unitmeter probes the markers. Each Python process writes the facts of its interpreter, BLAS
 * pools and thread variables into a private directory (UNITMETER_PY_REPORT), merged here into
 * the hardware record.
 */
#ifndef UM_PYTHON_H
#define UM_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>
#include "trace/spec.h"

struct python_units {
	char marker_lib[4096];
	char boot_dir[4096];
	char facts_dir[64];
	char shared_dir[64]; /* a copy of the two above for a user who cannot read them; "" when none */
	char *specs_env; /* "0=fit;2=pkg:Model.fit" */
	char interpreter_version[32];
};

/*
 * Check the command can serve python: units and prepare them: the marker library and bootstrap,
 * the interpreter (CPython 3.6+), the facts directory (owned by uid/gid). On error returns a
 * negative errno and writes one line for the user into why.
 */
int python_units__prepare(struct python_units *pu, const struct unit_spec *specs, size_t n,
			  const char *command_path, char *const argv[], uid_t uid, gid_t gid,
			  char *why, size_t whylen);
/* Put the bootstrap into the environment the command will inherit. */
int python_units__export_env(const struct python_units *pu);
/*
 * What the processes reported of themselves, for the hardware record: python_version (the
 * first process's, else the interpreter's), blas (every pool, once), thread_env (the first
 * process's, when it said). A new object; NULL when out of memory.
 */
json_t *python_units__facts(const struct python_units *pu);
/*
 * What became of each python: spec, judged once for the run from the units seen (units[i], of
 * spec i) and what every process reported: run.python of the manifest, one object per python:
 * spec with its status (matched, never_called: defined but not called, unresolvable: a name
 * that cannot be seen on this Python, not_found: with the closest names the processes defined)
 * and its message. A new array; never NULL but when out of memory.
 */
json_t *python_units__verdicts(const struct python_units *pu, const struct unit_spec *specs,
			       size_t n, const size_t *units);
/* Say each verdict's message once (never_called a warning, the rest errors); the errors' count. */
size_t python_units__say(const json_t *verdicts);
void python_units__cleanup(struct python_units *pu);

#endif
