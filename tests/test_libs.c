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
