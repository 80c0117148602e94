// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Native units in libraries nobody here wrote, named as their users name them: liblzma by its
 * soname (as ldd prints it), liblzma's lzma_stream_encoder_mt (three versions at one address),
 * glibc's realpath (two versions at two addresses: the default, or one named), and the refusals
 * of a name that is not there, each in words. The truths: the same xz run traced through the
 * library's path, xz's one call of its encoder per file, the workload's count of calls.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "trace/libfind.h"

TestSuite(libs, .init = require_tracing, .timeout = UM_SUITE_TIMEOUT_S);

#define LZMA "liblzma.so.5"

/* A file of 4 MiB of random bytes for xz to compress, in a directory of its own. */
static const char *xz_input(char dir[64])
{
	static __thread char path[96];
	char cmd[256];

	snprintf(dir, 64, "/tmp/um-libs-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/input", dir);
	snprintf(cmd, sizeof(cmd), "head -c 4194304 /dev/urandom > %s", path);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	return path;
}

static void remove_dir(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

/* The loader's liblzma.so.5, resolved: what a soname spec must record. */
static void lzma_path(char path[PATH_MAX])
{
	FILE *p = popen("/sbin/ldconfig -p | awk '$1 == \"" LZMA "\" && /x86-64|AArch64/ { print $NF; exit }'", "r");
	char found[PATH_MAX] = "";

	cr_assert_not_null(p);
	if (!fgets(found, sizeof(found), p))
		found[0] = '\0';
	pclose(p);
	found[strcspn(found, "\n")] = '\0';
	cr_assert(found[0], "the loader's cache has no " LZMA);
	cr_assert_not_null(realpath(found, path), "%s", found);
}

/* `unitmeter run --unit SPEC -- xz THREADS -1 -k -f INPUT`: must exit 0. */
static void run_xz(struct um_result *r, const char *spec, const char *threads, const char *input)
{
	const char *args[] = { "run", "-q", "--unit", spec, "--", "xz", threads, "-1", "-k", "-f",
			       input, NULL };

	if (access("/usr/bin/xz", X_OK))
		cr_skip_test("xz is not installed (make deps installs xz-utils)");
	um_run(r, true, args);
	cr_assert_eq(r->status, 0, "--unit %s: status %d: %s", spec, r->status, r->err);
	cr_expect_null(strstr(r->err, "Unknown error"), "%s", r->err);
}

static size_t complete_units(const struct um_result *r)
{
	json_t *units = jget(r->manifest, "units"), *u;
	size_t i, n = 0;

	json_array_foreach(units, i, u)
		n += strcmp(json_string_value(jget(u, "status")), "complete") == 0;
	return n;
}

Test(libs, a_library_by_its_soname)
{
	char dir[64], path[PATH_MAX], spec[PATH_MAX + 32];
	const char *input = xz_input(dir);
	struct um_result by_name, by_path;
	json_t *spec_record;

	lzma_path(path);
	run_xz(&by_name, LZMA ":lzma_code", "-T1", input);
	snprintf(spec, sizeof(spec), "%s:lzma_code", path);
	run_xz(&by_path, spec, "-T1", input);
	/* one xz, one input: the same calls, whichever way the library was named */
	cr_expect_gt(json_array_size(jget(by_name.manifest, "units")), 10);
	cr_expect_eq(json_array_size(jget(by_name.manifest, "units")),
		     json_array_size(jget(by_path.manifest, "units")));
	cr_expect_eq(complete_units(&by_name), json_array_size(jget(by_name.manifest, "units")));
	spec_record = json_array_get(jget(by_name.manifest, "unit_specs"), 0);
	cr_expect_str_eq(json_string_value(jget(spec_record, "path")), path,
			 "the manifest records the file the soname resolved to");
	um_result_free(&by_name);
	um_result_free(&by_path);
	remove_dir(dir);
}

/*
 * Every library `ldconfig -p -C cache` lists for this architecture, looked up in that cache by
 * unitmeter's reader: the same first path, for each name. Returns how many were compared.
 */
static size_t expect_cache_as_ldconfig_lists_it(const char *cache)
{
	char name[256], listed[PATH_MAX], found[PATH_MAX], *list;
	int status;
	size_t n = 0;
	FILE *f;

	list = sh_out(&status, "/sbin/ldconfig -p -C %s | awk '/x86-64|AArch64/ && !seen[$1]++ "
			       "{ print $1, $NF }'", cache);
	cr_assert_eq(status, 0);
	f = fmemopen(list, strlen(list), "r");
	cr_assert_not_null(f);
	while (fscanf(f, "%255s %4095s", name, listed) == 2) {
		if (access(listed, R_OK))
			continue; /* a stale entry: the search goes on past it, as ld.so's does */
		found[0] = '\0';
		cr_expect(loader_cache_find(cache, name, NULL, found, sizeof(found)), "%s", name);
		cr_expect_str_eq(found, listed, "%s in %s", name, cache);
		n++;
	}
	fclose(f);
	free(list);
	return n;
}

/*
 * The loader's cache is read as ld.so reads it (no ldconfig spawned at each run's start), in
 * glibc's format since 2.32 and in the compat one earlier releases write (the old table first):
 * built here from the system's directories and one of the test's own, where a library is found
 * only through the cache.
 */
Test(libs, the_loaders_cache_read_as_ldconfig_lists_it)
{
	char dir[] = "/tmp/um-ldcache-XXXXXX", cache[96], found[PATH_MAX], marker[PATH_MAX], *base;
	const char *formats[] = { "new", "compat" };
	int status;
	char *out;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(marker, sizeof(marker), "%s", getenv("UNITMETER") ? getenv("UNITMETER") : "");
	cr_assert(strrchr(marker, '/'), "UNITMETER names no path");
	/* beside the binary as the build tree has it, else where an install puts it */
	base = strrchr(marker, '/') + 1;
	snprintf(base, sizeof(marker) - (size_t)(base - marker), "libunitmeter_marker.so");
	if (access(marker, R_OK))
		snprintf(base, sizeof(marker) - (size_t)(base - marker),
			 "../lib/unitmeter/libunitmeter_marker.so");
	for (size_t i = 0; i < 2; i++) {
		snprintf(cache, sizeof(cache), "%s/ld.so.cache.%s", dir, formats[i]);
		/* the marker library has no soname: ldconfig lists it by its file name */
		out = sh_out(&status, "cp %s %s/ && /sbin/ldconfig -X -c %s -C %s %s 2>&1", marker,
			     dir, formats[i], cache, dir);
		cr_assert_eq(status, 0, "%s", out);
		free(out);
		cr_expect_gt(expect_cache_as_ldconfig_lists_it(cache), 20, "%s", cache);
		cr_expect(loader_cache_find(cache, "libunitmeter_marker.so", NULL, found,
					    sizeof(found)));
		cr_expect(strstr(found, dir) == found, "%s: found %s", formats[i], found);
	}
	/* the loader's own, as library_find reads it after LD_LIBRARY_PATH */
	cr_expect_gt(expect_cache_as_ldconfig_lists_it("/etc/ld.so.cache"), 20);
	out = sh_out(&status, "rm -rf %s", dir);
	free(out);
}

/* Three versions at one address are one function: xz -T2 calls its encoder once per file. */
Test(libs, a_symbol_with_several_versions_at_one_address)
{
	static const char *const specs[] = { LZMA ":lzma_stream_encoder_mt",
					     LZMA ":lzma_stream_encoder_mt@XZ_5.2",
					     LZMA ":lzma_stream_encoder_mt@XZ_5.1.2alpha" };
	char dir[64];
	const char *input = xz_input(dir);

	for (size_t i = 0; i < 3; i++) {
		struct um_result r;

		run_xz(&r, specs[i], "-T2", input);
		cr_expect_eq(json_array_size(jget(r.manifest, "units")), 1, "--unit %s: %zu units",
			     specs[i], json_array_size(jget(r.manifest, "units")));
		cr_expect_eq(complete_units(&r), 1, "--unit %s", specs[i]);
		um_result_free(&r);
	}
	remove_dir(dir);
}

/*
 * glibc's realpath: @@GLIBC_2.3 and @GLIBC_2.2.5 at two addresses. The bare name is the default,
 * which a program built now calls (every call a unit); the old version, named, is a probe on the
 * other function, which this program never calls.
 */
Test(libs, versions_at_different_addresses_default_or_named)
{
	const char *bare[] = { "run", "-q", "--unit", "libc.so.6:realpath", workload("libcalls"), "7",
			       NULL };
	const char *old[] = { "run", "-q", "--unit", "libc.so.6:realpath@GLIBC_2.2.5",
			      workload("libcalls"), "7", NULL };
	struct um_result r;

	um_run(&r, true, bare);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(json_array_size(jget(r.manifest, "units")), (size_t)jnum(r.truth, "calls"));
	um_result_free(&r);
	um_run(&r, true, old);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(json_array_size(jget(r.manifest, "units")), 0);
	cr_expect_str_eq(json_string_value(jget(json_array_get(jget(r.manifest, "unit_specs"), 0),
						"version")),
			 "GLIBC_2.2.5");
	um_result_free(&r);
}

/* Refused before anything starts, in one line of words: never libbpf's "Unknown error". */
static void expect_refused(const char *spec, const char *message)
{
	const char *args[] = { "run", "--unit", spec, "--", "/bin/true", NULL };
	struct um_result r;

	um_run(&r, true, args);
	cr_expect_eq(r.status, RUN_FAILED, "status %d for --unit %s", r.status, spec);
	cr_expect_not_null(strstr(r.err, message), "--unit %s: %s", spec, r.err);
	cr_expect_null(strstr(r.err, "Unknown error"), "%s", r.err);
	cr_expect_null(r.manifest, "nothing may start");
	um_result_free(&r);
}

Test(libs, refusals_say_what_was_tried)
{
	expect_refused(LZMA ":lzma_codee", "has no function 'lzma_codee'; closest: lzma_code");
	expect_refused(LZMA ":lzma_stream_encoder_mt@XZ_9",
		       "has no version 'XZ_9' of 'lzma_stream_encoder_mt'; it has: ");
	expect_refused("libunitmeter-none.so.7:fit",
		       "no library libunitmeter-none.so.7 where the loader looks (LD_LIBRARY_PATH");
	expect_refused(LZMA ":lzma_code@", "is malformed");
}
