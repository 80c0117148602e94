// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trace/libfind.h"

/* Where the loader looks after LD_LIBRARY_PATH and its cache (ld.so(8), this architecture). */
static const char *const default_dirs[] = {
#if defined(__x86_64__)
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
	"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#endif
	"/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

/* ldconfig -p's tag of this architecture's libraries ("(libc6,x86-64)"); others are skipped. */
#if defined(__x86_64__)
#define CACHE_ARCH_TAG ",x86-64)"
#elif defined(__aarch64__)
#define CACHE_ARCH_TAG ",AArch64)"
#else
#define CACHE_ARCH_TAG ")"
#endif

static bool acceptable(bool (*accept)(const char *), const char *path)
{
	return access(path, R_OK) == 0 && (!accept || accept(path));
}

static bool found_in_dir(const char *dir, const char *name, bool (*accept)(const char *),
			 char *path, size_t len)
{
	if (!*dir)
		dir = "."; /* an empty LD_LIBRARY_PATH entry is the current directory (ld.so(8)) */
	return snprintf(path, len, "%s/%s", dir, name) < (int)len && acceptable(accept, path);
}

static bool found_in_cache(const char *name, bool (*accept)(const char *), char *path, size_t len)
{
	FILE *p = popen("/sbin/ldconfig -p 2>/dev/null", "r");
	size_t name_len = strlen(name);
	char line[4096];
	bool found = false;

	if (!p)
		return false;
	/* "\tliblzma.so.5 (libc6,x86-64) => /lib/x86_64-linux-gnu/liblzma.so.5" */
	while (!found && fgets(line, sizeof(line), p)) {
		const char *entry = line + strspn(line, " \t");
		char *arrow = strstr(line, " => "), *tag;

		if (!arrow || strncmp(entry, name, name_len) != 0 || entry[name_len] != ' ')
			continue;
		*arrow = '\0';
		tag = strrchr(line, '(');
		if (!tag || !strstr(tag, CACHE_ARCH_TAG))
			continue;
		arrow[4 + strcspn(arrow + 4, "\n")] = '\0';
		found = snprintf(path, len, "%s", arrow + 4) < (int)len && acceptable(accept, path);
	}
	pclose(p);
	return found;
}

/* The DT_SONAME of an ELF shared library into soname; false when it has none. */
static bool elf_soname(const char *file, char *soname, size_t len)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *elf;

	if (fd < 0)
		return false;
	elf = elf_version(EV_CURRENT) != EV_NONE ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	while (elf && !found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		GElf_Dyn dyn;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			const char *s;

			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_SONAME)
				continue;
			s = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val);
			found = s && snprintf(soname, len, "%s", s) < (int)len;
			break;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

/*
 * The file a running process mapped for name, from /proc/PID/maps: the mapping names the file
 * itself (liblzma.so.5.4.1), so a soname is matched by the file's DT_SONAME; each file once.
 */
static bool found_mapped(const char *name, pid_t pid, bool (*accept)(const char *), char *path,
			 size_t len)
{
	char maps[64], line[4096], last[4096] = "", soname[256];
	bool found = false;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');

		if (!file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		if (strcmp(file, last) == 0)
			continue;
		snprintf(last, sizeof(last), "%s", file);
		/* through the process's root: the same file in a container or chroot */
		if (snprintf(path, len, "/proc/%d/root%s", (int)pid, file) >= (int)len)
			continue;
		if (strcmp(strrchr(file, '/') + 1, name) != 0 &&
		    !(elf_soname(path, soname, sizeof(soname)) && strcmp(soname, name) == 0))
			continue;
		found = acceptable(accept, path);
	}
	fclose(f);
	return found;
}

bool library_find(const char *name, pid_t mapped_by, bool (*accept)(const char *path), char *path,
		  size_t len, char *tried, size_t tried_len)
{
	const char *env = getenv("LD_LIBRARY_PATH");
	int n = 0;

	if (mapped_by > 0 && found_mapped(name, mapped_by, accept, path, len))
		return true;
	if (env) {
		char *dirs = strdup(env), *save = NULL;
		bool found = false;

		for (char *dir = dirs ? strtok_r(dirs, ":;", &save) : NULL; dir && !found;
		     dir = strtok_r(NULL, ":;", &save))
			found = found_in_dir(dir, name, accept, path, len);
		free(dirs);
		if (found)
			return true;
	}
	if (found_in_cache(name, accept, path, len))
		return true;
	for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]); i++)
		if (found_in_dir(default_dirs[i], name, accept, path, len))
			return true;
	path[0] = '\0';
	if (tried && tried_len) {
		n = snprintf(tried, tried_len, "%sLD_LIBRARY_PATH%s%s%s, the loader's cache (ldconfig -p)",
			     mapped_by > 0 ? "the process's mappings, " : "", env ? " (" : "",
			     env ? env : "", env ? ")" : "");
		for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]) && n > 0 &&
				   (size_t)n < tried_len;
		     i++)
			n += snprintf(tried + n, tried_len - n, ", %s", default_dirs[i]);
	}
	return false;
}
