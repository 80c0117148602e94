/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unit specs: `SYMBOL` (in the command's executable), `PATH:SYMBOL` (an executable or shared
 * library), resolved to a file and a symbol it defines before anything is started; and
 * `python:QUALNAME` or `python:MODULE:QUALNAME`, a CPython function (python.c).
 */
#ifndef UM_SPEC_H
#define UM_SPEC_H

#include <stdbool.h>
#include <stddef.h>

struct unit_spec {
	const char *text; /* as the user wrote it */
	char *path;       /* absolute path of the ELF file to probe (native) */
	char *symbol;
	bool python;      /* python:[MODULE:]QUALNAME */
	char *module;     /* NULL: any module */
	char *qualname;
};

/*
 * Resolve spec text against default_exe (the command's executable, for a bare SYMBOL). On error
 * returns a negative errno and writes one line for the user into why.
 */
int unit_spec_resolve(struct unit_spec *spec, const char *text, const char *default_exe,
		      char *why, size_t whylen);
void unit_spec_free(struct unit_spec *spec);
/*
 * A spec as short as a table column wants it: "/usr/lib/libfit.so:fit" -> "libfit.so:fit";
 * "?" for NULL (a unit whose spec index is not one of the run's).
 */
const char *unit_spec_label(const char *text);
/* The part after "python:": [MODULE:]QUALNAME, each a dotted name of identifiers. */
int python_spec_parse(struct unit_spec *spec, const char *rest, char *why, size_t whylen);

/*
 * Whether path is an ELF file defining function `name`. -ENOENT: it does not (why lists the
 * closest names it has); -ENOEXEC: not an ELF file; -ENODATA: no symbols (stripped).
 */
int elf_check_function(const char *path, const char *name, char *why, size_t whylen);

#endif
