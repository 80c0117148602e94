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
#include "common/closest.h"
#include "trace/libfind.h"
#include "trace/spec.h"

static void near_offer(struct near_names *near, const char *name, const char *wanted)
{
	near_names__add(near, name, name_distance(name, wanted));
}

/* The names of a shared library's symbol versions, by their index (.gnu.version_d). */
#define MAX_VERSIONS 256
struct elf_versions {
	const char *name[MAX_VERSIONS];
};

static void versions_read(Elf *elf, struct elf_versions *v)
{
	Elf_Scn *scn = NULL;

	memset(v, 0, sizeof(*v));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t off = 0;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_GNU_verdef)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < shdr.sh_info; i++) {
			GElf_Verdef def;
			GElf_Verdaux aux;

			if (!gelf_getverdef(data, (int)off, &def) ||
			    !gelf_getverdaux(data, (int)(off + def.vd_aux), &aux))
				break;
			if (def.vd_ndx < MAX_VERSIONS)
				v->name[def.vd_ndx] = elf_strptr(elf, shdr.sh_link, aux.vda_name);
			if (!def.vd_next)
				break;
			off += def.vd_next;
		}
	}
}

/* A function found under the wanted name: where it is, and which versions name it. */
struct function_match {
	uint64_t offset;     /* in the file: what a uprobe is placed at */
	bool found, several; /* several: another match lies at another offset */
	uint64_t default_offset; /* the default version's (name@@V): what dlsym(name) gives */
	bool has_default;
	char versions[512]; /* "XZ_5.1.2alpha, XZ_5.2.2, XZ_5.2" */
};

/* Add version to a ", "-separated list unless it is there already. */
static void version_list_add(char *list, size_t cap, const char *version)
{
	size_t used = strlen(list), len = strlen(version);

	for (const char *at = list; (at = strstr(at, version)); at += len)
		if ((at == list || at[-1] == ' ') && (at[len] == ',' || at[len] == '\0'))
			return;
	snprintf(list + used, cap - used, "%s%s", used ? ", " : "", version);
}

static void match_offer(struct function_match *m, uint64_t offset, const char *version,
			bool is_default)
{
	if (is_default) {
		m->default_offset = offset;
		m->has_default = true;
	}
	if (m->found && offset != m->offset)
		m->several = true;
	if (!m->found)
		m->offset = offset;
	m->found = true;
	if (version)
		version_list_add(m->versions, sizeof(m->versions), version);
}

/* A function name's search through an ELF file's symbol tables (elf_function_offset). */
struct symbol_search {
	const char *name, *version; /* version NULL: any, the default first */
	size_t name_len;
	struct elf_versions versions;
	struct function_match match;
	struct near_names near; /* the closest names, while none matches */
	int nsyms;              /* functions seen: none means a stripped file */
};

/* The symbols of one table (.symtab or .dynsym; versym: .gnu.version, beside .dynsym). */
static void scan_symbols(Elf *elf, const GElf_Shdr *shdr, Elf_Data *data, Elf_Data *versym,
			 struct symbol_search *s)
{
	for (size_t i = 0; data && shdr->sh_entsize && i < shdr->sh_size / shdr->sh_entsize; i++) {
		const char *sname, *sversion = NULL;
		bool is_default = false;
		GElf_Shdr home;
		GElf_Versym vs;
		GElf_Sym sym;
		size_t base;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE)
			continue;
		sname = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!sname || !*sname)
			continue;
		s->nsyms++;
		/* .symtab writes a version into the name (name@V, name@@V); .dynsym beside it */
		base = strcspn(sname, "@");
		if (sname[base]) {
			is_default = sname[base + 1] == '@';
			sversion = sname + base + strspn(sname + base, "@");
		} else if (versym && gelf_getversym(versym, (int)i, &vs) &&
			   (vs & 0x7fff) > 1 && (vs & 0x7fff) < MAX_VERSIONS) {
			/* the hidden bit marks the versions only an old binary binds to */
			is_default = !(vs & 0x8000);
			sversion = s->versions.name[vs & 0x7fff];
		}
		if (base != s->name_len || strncmp(sname, s->name, s->name_len) != 0) {
			/* the closest names matter only while none matches (an edit distance a
			 * symbol: most of the scan's cost) */
			if (!s->match.found)
				near_offer(&s->near, sname, s->name);
			continue;
		}
		if (s->version && (!sversion || strcmp(sversion, s->version) != 0)) {
			/* another version of the name: listed, should none be the one asked */
			if (sversion)
				version_list_add(s->match.versions, sizeof(s->match.versions),
						 sversion);
			continue;
		}
		/* the file offset of the address: its section's place in the file */
		if (!gelf_getshdr(elf_getscn(elf, sym.st_shndx), &home))
			continue;
		match_offer(&s->match, sym.st_value - home.sh_addr + home.sh_offset, sversion,
			    is_default);
	}
}

/* The .gnu.version section's data (a version index per .dynsym entry), or NULL. */
static Elf_Data *versym_data(Elf *elf)
{
	Elf_Scn *vs = NULL;
	GElf_Shdr vshdr;
	Elf_Data *versym = NULL;

	while ((vs = elf_nextscn(elf, vs)))
		if (gelf_getshdr(vs, &vshdr) && vshdr.sh_type == SHT_GNU_versym)
			versym = elf_getdata(vs, NULL);
	return versym;
}

/* What the search found: the offset (0), or why not in why (a negative errno). */
static int search_verdict(struct symbol_search *s, const char *path, uint64_t *offset,
			  char *why, size_t whylen)
{
	int err = -ENOENT;

	if (s->match.found && s->match.several && s->match.has_default) {
		/* what a program built now calls, as the loader binds an unversioned name */
		*offset = s->match.default_offset;
		err = 0;
	} else if (s->match.found && s->match.several) {
		snprintf(why, whylen, "%s exports '%s' under several versions at different addresses "
			 "(%s), none the default: name one, as %s:%s@VERSION", path, s->name,
			 s->match.versions, path, s->name);
		err = -ENOTUNIQ;
	} else if (s->match.found) {
		*offset = s->match.offset;
		err = 0;
	} else if (s->version && s->match.versions[0]) {
		snprintf(why, whylen, "%s has no version '%s' of '%s'; it has: %s", path, s->version,
			 s->name, s->match.versions);
	} else if (s->nsyms == 0) {
		snprintf(why, whylen, "%s has no symbol table (stripped?): unit functions are found by "
			 "name; rebuild it without -s, or name a library that exports the function",
			 path);
		err = -ENODATA;
	} else {
		int n = snprintf(why, whylen, "%s has no function '%s'; closest: ", path, s->name);

		if (n > 0 && (size_t)n < whylen)
			near_names__format(&s->near, why + n, whylen - n);
	}
	return err;
}

int elf_function_offset(const char *path, const char *name, const char *version, uint64_t *offset,
			char *why, size_t whylen)
{
	struct symbol_search search = { .name = name, .version = version, .name_len = strlen(name) };
	int fd, err = -ENOENT;
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
	versions_read(elf, &search.versions);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM))
			continue;
		scan_symbols(elf, &shdr, elf_getdata(scn, NULL),
			     shdr.sh_type == SHT_DYNSYM ? versym_data(elf) : NULL, &search);
	}
	err = search_verdict(&search, path, offset, why, whylen);
out:
	near_names__free(&search.near);
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/*
 * The file of a spec's LIB: a path as it is; a bare name (liblzma.so.5) where the dynamic loader
 * would find it (libfind.h), else a file of that name in the current directory.
 */
static int spec_file(const char *text, const char *file, pid_t mapped_by,
		     char resolved[PATH_MAX], char *why, size_t whylen)
{
	char found[PATH_MAX], tried[1024];

	if (!strchr(file, '/') && library_find(file, mapped_by, NULL, found, sizeof(found), tried,
					       sizeof(tried)))
		file = found;
	else if (!strchr(file, '/') && access(file, F_OK)) {
		snprintf(why, whylen, "--unit %s: no library %s where the loader looks (%s), nor a file "
			 "of that name here: give its path, or the soname ldd prints", text, file, tried);
		return -ENOENT;
	}
	if (!realpath(file, resolved)) {
		int err = -errno;

		snprintf(why, whylen, "--unit %s: cannot find %s: %s", text, file, strerror(errno));
		return err;
	}
	return 0;
}

int unit_spec_resolve(struct unit_spec *spec, const char *text, const char *default_exe,
		      pid_t mapped_by, char *why, size_t whylen)
{
	const char *colon = strrchr(text, ':');
	char resolved[PATH_MAX], *at;
	int err;

	memset(spec, 0, sizeof(*spec));
	spec->text = text;
	if (strncmp(text, "python:", 7) == 0)
		return python_spec_parse(spec, text + 7, why, whylen);
	spec->symbol = strdup(colon ? colon + 1 : text);
	spec->path = colon ? strndup(text, colon - text) : (default_exe ? strdup(default_exe) : NULL);
	/* SYMBOL@VERSION: one of a symbol's versions (name@@V, the default, is name@V too) */
	at = spec->symbol ? strchr(spec->symbol, '@') : NULL;
	if (at) {
		*at = '\0';
		spec->version = strdup(at + 1 + (at[1] == '@'));
	}
	if (!spec->symbol || !*spec->symbol || !spec->path || !*spec->path ||
	    (at && (!spec->version || !*spec->version))) {
		snprintf(why, whylen, "--unit '%s' is malformed: write SYMBOL, LIB:SYMBOL or "
			 "LIB:SYMBOL@VERSION (LIB a path, or a soname such as libm.so.6)", text);
		unit_spec_free(spec);
		return -EINVAL;
	}
	err = spec_file(text, spec->path, colon ? mapped_by : 0, resolved, why, whylen);
	if (err) {
		unit_spec_free(spec);
		return err;
	}
	free(spec->path);
	spec->path = strdup(resolved);
	err = spec->path ? elf_function_offset(spec->path, spec->symbol, spec->version,
					       &spec->offset, why, whylen) :
			   -ENOMEM;
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

		/* Python's own qualname of a nested function: outer.<locals>.inner */
		if (start && i > 0 && !strncmp(s + i, "<locals>", 8) && i + 8 < len &&
		    s[i + 8] == '.') {
			i += 8;
			continue;
		}
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
			 "Model.fit), python:MODULE:QUALNAME (pkg.models:Model.fit) or a dotted "
			 "path (pkg.models.Model.fit)", spec->text);
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
	free(spec->version);
	spec->path = spec->symbol = spec->module = spec->qualname = spec->version = NULL;
}

const char *unit_spec_label(const char *text)
{
	const char *slash = text ? strrchr(text, '/') : NULL;

	return !text ? "?" : slash ? slash + 1 : text;
}
