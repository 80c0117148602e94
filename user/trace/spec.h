/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unit specs: `SYMBOL` (in the command's executable), `LIB:SYMBOL` (LIB a path to an executable
 * or shared library, or a soname found as the dynamic loader finds it), `LIB:SYMBOL@VERSION`
 * (one version of a versioned symbol), resolved to a file and the function's offset in it before
 * anything is started; and `python:QUALNAME` or `python:MODULE:QUALNAME`, a CPython function
 * (python.c).
 */
#ifndef UM_SPEC_H
#define UM_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "common/closest.h"

struct unit_spec {
	const char *text; /* as the user wrote it */
	char *path;       /* absolute path of the ELF file to probe (native) */
	char *symbol;
	char *version;    /* SYMBOL@VERSION's; NULL: any version at one address */
	uint64_t offset;  /* the function's offset in the file, where its probe goes (native) */
	bool python;      /* python:[MODULE:]QUALNAME */
	char *module;     /* NULL: any module */
	char *qualname;
};

/*
 * Resolve spec text against default_exe (the command's executable, for a bare SYMBOL); a soname
 * is first looked for among the libraries mapped_by (attach's target; 0: none) has mapped. On
 * error returns a negative errno and writes one line for the user into why.
 */
int unit_spec_resolve(struct unit_spec *spec, const char *text, const char *default_exe,
		      pid_t mapped_by, char *why, size_t whylen);
void unit_spec_free(struct unit_spec *spec);
/*
 * A spec as short as a table column wants it: "/usr/lib/libfit.so:fit" -> "libfit.so:fit";
 * "?" for NULL (a unit whose spec index is not one of the run's).
 */
const char *unit_spec_label(const char *text);
/* The part after "python:": [MODULE:]QUALNAME, each a dotted name of identifiers. */
int python_spec_parse(struct unit_spec *spec, const char *rest, char *why, size_t whylen);


/*
 * The file offset of function `name` (of `version`; NULL: any) that path defines, into *offset.
 * One function exported under several versions at one address (liblzma) is that address; with
 * versions at different addresses (glibc's realpath), the default one (name@@V, what a program
 * built now calls). -ENOENT: it has no such function (why lists the closest names it has, or its
 * versions of it); -ENOTUNIQ: versions at different addresses, no default, none named;
 * -ENOEXEC: not an ELF file; -ENODATA: no symbols (stripped).
 */
int elf_function_offset(const char *path, const char *name, const char *version, uint64_t *offset,
			char *why, size_t whylen);

#endif
