// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/*
 * The loader's cache, /etc/ld.so.cache, read as ld.so reads it rather than through `ldconfig
 * -p` (a process spawned at every run's start): glibc's format since 2.32, which earlier
 * releases write after the old format's table ("compat"). A header, then entries whose key (a
 * soname) and value (its path) are offsets of strings from the header's start.
 */
#define CACHE_FILE "/etc/ld.so.cache"
#define CACHE_MAGIC_OLD "ld.so-1.7.0"
#define CACHE_MAGIC_NEW "glibc-ld.so.cache1.1"

struct cache_header {
	char magic[sizeof(CACHE_MAGIC_NEW) - 1];
	uint32_t nlibs;
	uint32_t len_strings;
	uint8_t flags;
	uint8_t padding[3];
	uint32_t extension_offset;
	uint32_t unused[3];
};

struct cache_entry {
	int32_t flags;
	uint32_t key, value;
	uint32_t osversion;
	uint64_t hwcap;
};

/* An ELF library of glibc's (type 3) for this architecture (ldconfig's FLAG_X8664_LIB64 and
 * FLAG_AARCH64_LIB64); other architectures' entries are skipped. */
#if defined(__x86_64__)
#define CACHE_FLAGS 0x0303
#elif defined(__aarch64__)
#define CACHE_FLAGS 0x0a03
#else
#define CACHE_FLAGS 0x0003
#endif

/* The new format's header in a cache of size bytes; NULL when there is none. */
static const struct cache_header *cache_header_of(const char *cache, size_t size)
{
	size_t at = 0;

	if (size >= 16 && memcmp(cache, CACHE_MAGIC_OLD, sizeof(CACHE_MAGIC_OLD) - 1) == 0) {
		uint32_t old_nlibs;

		memcpy(&old_nlibs, cache + 12, sizeof(old_nlibs));
		/* the old table: a 16-byte header and 12-byte entries, then the new header aligned */
		at = (16 + (size_t)old_nlibs * 12 + 7) & ~(size_t)7;
	}
	if (at > size || size - at < sizeof(struct cache_header) ||
	    memcmp(cache + at, CACHE_MAGIC_NEW, sizeof(CACHE_MAGIC_NEW) - 1) != 0)
		return NULL;
	return (const struct cache_header *)(cache + at);
}

bool loader_cache_find(const char *cache_file, const char *name, bool (*accept)(const char *),
		       char *path, size_t len)
{
	int fd = open(cache_file, O_RDONLY | O_CLOEXEC);
	const struct cache_header *header = NULL;
	bool found = false;
	struct stat st;
	void *cache = MAP_FAILED;
	size_t room = 0;

	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && st.st_size > 0)
		cache = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (cache == MAP_FAILED)
		return false;
	header = cache_header_of(cache, (size_t)st.st_size);
	if (header)
		room = (size_t)st.st_size - (size_t)((const char *)header - (const char *)cache);
	for (uint32_t i = 0; header && !found && i < header->nlibs; i++) {
		const struct cache_entry *e = (const struct cache_entry *)(header + 1) + i;
		const char *key, *value;

		if ((const char *)(e + 1) > (const char *)header + room)
			break;
		if (e->flags != CACHE_FLAGS || e->key >= room || e->value >= room)
			continue;
		key = (const char *)header + e->key;
		value = (const char *)header + e->value;
		if (!memchr(key, '\0', room - e->key) || !memchr(value, '\0', room - e->value) ||
		    strcmp(key, name) != 0)
			continue;
		found = snprintf(path, len, "%s", value) < (int)len && acceptable(accept, path);
	}
	munmap(cache, (size_t)st.st_size);
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
	if (loader_cache_find(CACHE_FILE, name, accept, path, len))
		return true;
	for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]); i++)
		if (found_in_dir(default_dirs[i], name, accept, path, len))
			return true;
	path[0] = '\0';
	if (tried && tried_len) {
		n = snprintf(tried, tried_len, "%sLD_LIBRARY_PATH%s%s%s, the loader's cache (" CACHE_FILE ")",
			     mapped_by > 0 ? "the process's mappings, " : "", env ? " (" : "",
			     env ? env : "", env ? ")" : "");
		for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]) && n > 0 &&
				   (size_t)n < tried_len;
		     i++)
			n += snprintf(tried + n, tried_len - n, ", %s", default_dirs[i]);
	}
	return false;
}
