// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trace/spec.h"

#define NEAR_MATCHES 5

struct near {
	char *names[NEAR_MATCHES];
	unsigned dist[NEAR_MATCHES];
};

/* Edit distance, capped: names longer than 128 bytes only compare their start. */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned row[129], la = strnlen(a, 128), lb = strnlen(b, 128);

	for (unsigned j = 0; j <= lb; j++)
		row[j] = j;
	for (unsigned i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = i;
		for (unsigned j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static void near_offer(struct near *near, const char *name, const char *wanted)
{
	/* a name that contains the wanted one (or the reverse) is nearer than its distance says */
	unsigned d = edit_distance(name, wanted);
	int slot = -1;

	if (strstr(name, wanted) || strstr(wanted, name))
		d = d / 4;
	for (int i = 0; i < NEAR_MATCHES; i++) {
		if (near->names[i] && strcmp(near->names[i], name) == 0)
			return;
		if (!near->names[i] || d < near->dist[i]) {
			slot = i;
			break;
		}
	}
	if (slot < 0)
		return;
	free(near->names[NEAR_MATCHES - 1]);
	memmove(&near->names[slot + 1], &near->names[slot],
		(NEAR_MATCHES - 1 - slot) * sizeof(near->names[0]));
	memmove(&near->dist[slot + 1], &near->dist[slot],
		(NEAR_MATCHES - 1 - slot) * sizeof(near->dist[0]));
	near->names[slot] = strdup(name);
	near->dist[slot] = d;
}

int elf_check_function(const char *path, const char *name, char *why, size_t whylen)
{
	struct near near = { 0 };
	int fd, err = -ENOENT, nsyms = 0;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(why, whylen, "libelf is unusable: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
		return err;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(why, whylen, "%s is not an ELF executable or shared library", path);
		err = -ENOEXEC;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn)) && err == -ENOENT) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && shdr.sh_entsize && i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Sym sym;
			const char *sname;
			int type;

			if (!gelf_getsym(data, i, &sym))
				break;
			type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF)
				continue;
			sname = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (!sname || !*sname)
				continue;
			nsyms++;
			if (strcmp(sname, name) == 0) {
				err = 0;
				break;
			}
			near_offer(&near, sname, name);
		}
	}
	if (err == -ENOENT && nsyms == 0) {
		snprintf(why, whylen, "%s has no symbol table (stripped?): unit functions are found by "
			 "name; rebuild it without -s, or name a library that exports the function",
			 path);
		err = -ENODATA;
	} else if (err == -ENOENT) {
		int n = snprintf(why, whylen, "%s has no function '%s'; closest:", path, name);

		for (int i = 0; i < NEAR_MATCHES && near.names[i] && n > 0 && (size_t)n < whylen; i++)
			n += snprintf(why + n, whylen - n, "%s %s", i ? "," : "", near.names[i]);
	}
out:
	for (int i = 0; i < NEAR_MATCHES; i++)
		free(near.names[i]);
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int unit_spec_resolve(struct unit_spec *spec, const char *text, const char *default_exe,
		      char *why, size_t whylen)
{
	const char *colon = strrchr(text, ':');
	char resolved[PATH_MAX];
	const char *file;
	int err;

	memset(spec, 0, sizeof(*spec));
	spec->text = text;
	if (strncmp(text, "python:", 7) == 0)
		return python_spec_parse(spec, text + 7, why, whylen);
	if (colon) {
		spec->symbol = strdup(colon + 1);
		file = spec->path = strndup(text, colon - text);
	} else {
		spec->symbol = strdup(text);
		file = default_exe;
	}
	if (!spec->symbol || !*spec->symbol || !file || !*file) {
		snprintf(why, whylen, "--unit '%s' is malformed: write SYMBOL or PATH:SYMBOL", text);
		unit_spec_free(spec);
		return -EINVAL;
	}
	if (!realpath(file, resolved)) {
		err = -errno;
		snprintf(why, whylen, "--unit %s: cannot find %s: %s", text, file, strerror(errno));
		unit_spec_free(spec);
		return err;
	}
	free(spec->path);
	spec->path = strdup(resolved);
	err = elf_check_function(spec->path, spec->symbol, why, whylen);
	if (err)
		unit_spec_free(spec);
	return err;
}

/* A dotted name of Python identifiers: "fit", "Model.fit", "pkg.mod". */
static bool dotted_name(const char *s, size_t len)
{
	bool start = true;

	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '.') {
			if (start)
				return false;
			start = true;
			continue;
		}
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (!start && c >= '0' && c <= '9') || (unsigned char)c >= 0x80))
			return false;
		start = false;
	}
	return !start;
}

int python_spec_parse(struct unit_spec *spec, const char *rest, char *why, size_t whylen)
{
	const char *colon = strchr(rest, ':');
	const char *qualname = colon ? colon + 1 : rest;

	spec->python = true;
	if ((colon && !dotted_name(rest, colon - rest)) || !dotted_name(qualname, strlen(qualname))) {
		snprintf(why, whylen, "--unit %s is malformed: write python:QUALNAME (fit_gfmm, "
			 "Model.fit) or python:MODULE:QUALNAME (pkg.models:Model.fit)", spec->text);
		return -EINVAL;
	}
	spec->module = colon ? strndup(rest, colon - rest) : NULL;
	spec->qualname = strdup(qualname);
	return 0;
}

void unit_spec_free(struct unit_spec *spec)
{
	free(spec->path);
	free(spec->symbol);
	free(spec->module);
	free(spec->qualname);
	spec->path = spec->symbol = spec->module = spec->qualname = NULL;
}

const char *unit_spec_label(const char *text)
{
	const char *slash = text ? strrchr(text, '/') : NULL;

	return !text ? "?" : slash ? slash + 1 : text;
}
