// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * python: units on real interpreters: Debian's /usr/bin/python3 (numpy, scikit-learn, joblib)
 * and the pyenv builds 3.12 and 3.13 when present. Truths come from the scripts themselves: the
 * sizes they allocate, the calls they count, their worker pids and time.thread_time().
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"
#include "trace/spec.h"

#define DEBIAN_PYTHON "/usr/bin/python3"

TestSuite(python, .init = require_tracing, .timeout = UM_SUITE_TIMEOUT_S);

static const char *script(void)
{
	static __thread char path[512];

	snprintf(path, sizeof(path), "%s/../../tools/workloads/python/py_units.py",
		 getenv("WORKLOADS") ? getenv("WORKLOADS") : ".output/workloads");
	return path;
}

static const char *pyenv(const char *version)
{
	static __thread char path[256];

	snprintf(path, sizeof(path), "/root/.pyenv/versions/%s/bin/python", version);
	return access(path, X_OK) == 0 ? path : NULL;
}

/* Run the script under unitmeter with the given interpreter and mode arguments. */
static json_t *run_py(struct um_result *r, const char *python, const char *const *mode)
{
	const char *args[40] = { "run", "-q", "--unit", "python:fit_gfmm", python, script() };
	int n = 6;

	for (int i = 0; mode[i] && n < 38; i++)
		args[n++] = mode[i];
	args[n] = NULL;
	um_run(r, true, args);
	cr_assert_eq(r->status, 0, "status %d: %s", r->status, r->err);
	cr_assert_not_null(r->truth, "the script printed no truth: %s\n%s", r->out, r->err);
	return jget(r->manifest, "units");
}

static void expect_sizes(const char *python, bool numpy)
{
	const char *mode[] = { "--mode", "alloc", "--sizes", "32,64,16,48", numpy ? "--numpy" : NULL, NULL };
	struct um_result r;
	json_t *units = run_py(&r, python, mode), *u, *sizes = jget(r.truth, "sizes_mib");
	size_t i;

	cr_assert_eq(json_array_size(units), json_array_size(sizes), "%s", r.err);
	json_array_foreach(units, i, u) {
		double truth = json_number_value(json_array_get(sizes, i)) * MIB_F;

		cr_expect(within(jnum(u, "peak_rss_delta_bytes"), truth, 0.02, 2 * MIB_F),
			  "%s unit %zu: delta %.0f, allocated %.0f", python, i,
			  jnum(u, "peak_rss_delta_bytes"), truth);
		cr_expect_str_eq(json_string_value(jget(u, "spec")), "python:fit_gfmm");
	}
	cr_expect(json_is_string(jget(jget(r.manifest, "hardware"), "python_version")),
		  "the traced interpreter's version is recorded");
	um_result_free(&r);
}

Test(python, debian_numpy_array_peak)
{
	if (access(DEBIAN_PYTHON, X_OK))
		cr_skip_test("%s is absent", DEBIAN_PYTHON);
	expect_sizes(DEBIAN_PYTHON, true);
}

Test(python, pyenv_312_bytearray_peak)
{
	const char *py = pyenv("3.12.1");

	if (!py)
		cr_skip_test("pyenv 3.12.1 is absent");
	expect_sizes(py, false);
}

Test(python, pyenv_313_bytearray_peak)
{
	const char *py = pyenv("3.13.0");

	if (!py)
		cr_skip_test("pyenv 3.13.0 is absent");
	expect_sizes(py, false);
}

/* Plain calls, a recursive one and one that raises: one unit each, every one complete. */
static void expect_counts(const char *python)
{
	const char *mode[] = { "--mode", "counts", NULL };
	struct um_result r;
	json_t *units = run_py(&r, python, mode), *u;
	size_t i;

	cr_expect_eq(json_array_size(units), (size_t)jnum(r.truth, "calls"),
		     "%s: %zu units for %.0f calls", python, json_array_size(units), jnum(r.truth, "calls"));
	json_array_foreach(units, i, u)
		cr_expect_str_eq(json_string_value(jget(u, "status")), "complete");
	um_result_free(&r);
}

Test(python, counts_recursion_and_exceptions_debian)
{
	if (access(DEBIAN_PYTHON, X_OK))
		cr_skip_test("%s is absent", DEBIAN_PYTHON);
	expect_counts(DEBIAN_PYTHON);
}

Test(python, counts_recursion_and_exceptions_312)
{
	const char *py = pyenv("3.12.1");

	if (!py)
		cr_skip_test("pyenv 3.12.1 is absent");
	expect_counts(py);
}

Test(python, counts_recursion_and_exceptions_313)
{
	const char *py = pyenv("3.13.0");

	if (!py)
		cr_skip_test("pyenv 3.13.0 is absent");
	expect_counts(py);
}

/* A pool of two workers: each fit is a unit of the worker that ran it, with its CPU. */
static void expect_pool(const char *python, const char *start)
{
	const char *mode[] = { "--mode", "pool", "--start", start, NULL };
	struct um_result r;
	json_t *units = run_py(&r, python, mode), *fits = jget(r.truth, "fits"), *f, *u;
	size_t i, j;

	cr_assert_eq(json_array_size(units), json_array_size(fits), "%s: %zu units: %s", start,
		     json_array_size(units), r.err);
	/* match the k-th fit of each worker pid in both lists */
	json_array_foreach(fits, i, f) {
		long pid = (long)jnum(f, "pid");
		size_t k = 0, seen = 0;
		bool found = false;

		for (j = 0; j < i; j++)
			k += (long)jnum(json_array_get(fits, j), "pid") == pid;
		json_array_foreach(units, j, u) {
			if ((long)jnum(u, "pid") != pid || seen++ != k)
				continue;
			found = true;
			/*
			 * The unit runs from the wrapper's begin marker to its end marker: it holds
			 * the fit's own thread_time and lies inside the caller's, around the wrapped
			 * call (which adds the wrapper's first run in a fresh worker: copy-on-write
			 * faults after fork, the first marker call; microseconds here, ~10x more
			 * under emulation). Each bound with the 5% of two workers sharing two cores.
			 */
			cr_expect(jnum(u, "cpu_s") >= jnum(f, "cpu_s") * 0.95 &&
				  jnum(u, "cpu_s") <= jnum(f, "outer_cpu_s") * 1.05,
				  "%s pid %ld fit %zu: cpu %.4f, thread_time %.4f inside, %.4f around "
				  "(wall %.4f, collisions %.0f, orphans %.0f)", start, pid, k,
				  jnum(u, "cpu_s"), jnum(f, "cpu_s"), jnum(f, "outer_cpu_s"),
				  jnum(u, "wall_s"), jnum(jget(r.manifest, "run"), "thread_collisions"),
				  jnum(jget(r.manifest, "run"), "orphan_slices"));
		}
		cr_expect(found, "%s: no unit for fit %zu of worker %ld", start, k, pid);
	}
	/* the per-process breakdown says which worker did what */
	json_array_foreach(fits, i, f)
		cr_expect_geq(jnum(proc_record(r.manifest, (long)jnum(f, "pid")), "units"), 1);
	um_result_free(&r);
}

Test(python, pool_fork)
{
	expect_pool(DEBIAN_PYTHON, "fork");
}

Test(python, pool_spawn)
{
	expect_pool(DEBIAN_PYTHON, "spawn");
}

Test(python, pool_forkserver)
{
	expect_pool(DEBIAN_PYTHON, "forkserver");
}

Test(python, process_pool_executor)
{
	expect_pool(DEBIAN_PYTHON, "executor");
}

Test(python, joblib_loky)
{
	if (system(DEBIAN_PYTHON " -c 'import joblib' 2>/dev/null"))
		cr_skip_test("Debian's python3-joblib is not installed");
	expect_pool(DEBIAN_PYTHON, "joblib");
}

Test(python, pool_spawn_313)
{
	const char *py = pyenv("3.13.0");

	if (!py)
		cr_skip_test("pyenv 3.13.0 is absent");
	expect_pool(py, "spawn");
}

/* Methods and a module function found by the import hook (3.11) and sys.monitoring (3.13). */
static void expect_methods(const char *python)
{
	const char *args[] = { "run", "-q", "--unit", "python:Model.fit", "--unit",
			       "python:py_units_mod:solve", python, script(), "--mode", "method", NULL };
	struct um_result r;
	json_t *units, *u;
	size_t i, method = 0, module = 0;

	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	units = jget(r.manifest, "units");
	json_array_foreach(units, i, u) {
		const char *spec = json_string_value(jget(u, "spec"));

		method += !strcmp(spec, "python:Model.fit");
		module += !strcmp(spec, "python:py_units_mod:solve");
	}
	cr_expect_eq(method, (size_t)jnum(r.truth, "method_calls"), "%s: Model.fit units", python);
	cr_expect_eq(module, (size_t)jnum(r.truth, "module_calls"), "%s: module units", python);
	cr_expect(within(jnum(json_array_get(units, 1), "peak_rss_delta_bytes"), 24 * MIB_F, 0.02, 2 * MIB_F),
		  "solve(24): delta %.0f", jnum(json_array_get(units, 1), "peak_rss_delta_bytes"));
	um_result_free(&r);
}

Test(python, methods_and_modules_debian)
{
	expect_methods(DEBIAN_PYTHON);
}

Test(python, methods_and_modules_313)
{
	const char *py = pyenv("3.13.0");

	if (!py)
		cr_skip_test("pyenv 3.13.0 is absent");
	expect_methods(py);
}

/* A million calls of other functions around one fit: one unit (speed is make bench's). */
Test(python, other_calls_are_not_units)
{
	const char *mode[] = { "--mode", "calls", "--n", "1000000", NULL };
	struct um_result r;
	json_t *units = run_py(&r, DEBIAN_PYTHON, mode), *fit;
	double cpu, body, outer;

	cr_assert_eq(json_array_size(units), 1);
	/* the unit is the fit, between its own thread clock and its caller's, and none of the two
	 * million other calls around it */
	fit = jget(r.truth, "fit");
	cpu = jnum(json_array_get(units, 0), "cpu_s");
	body = jnum(fit, "cpu_s");
	outer = jnum(fit, "outer_cpu_s");
	cr_expect(cpu >= body * 0.98 && cpu <= outer * 1.02,
		  "unit cpu %.4f s; the fit's own clock %.4f s, its caller's %.4f s", cpu, body, outer);
	/* more than the bound's 2%: a unit that took them in would be past it */
	cr_expect_gt(jnum(r.truth, "other_calls_cpu_s"), 0.05 * outer,
		     "the other calls: %.3f s of CPU", jnum(r.truth, "other_calls_cpu_s"));
	um_result_free(&r);
}

Test(python, target_facts_in_the_hardware_record)
{
	const char *mode[] = { "--mode", "alloc", "--sizes", "8", "--numpy", NULL };
	struct um_result r;
	json_t *hw, *blas, *pool;
	size_t i;
	bool has_blas = false;

	setenv("OMP_NUM_THREADS", "3", 1);
	run_py(&r, DEBIAN_PYTHON, mode);
	hw = jget(r.manifest, "hardware");
	{
		/* the interpreter's own word, asked apart (3.11.2 on Debian 12, 3.13.5 on 13) */
		char version[32] = "";
		FILE *p = popen(DEBIAN_PYTHON " -c 'import platform; print(platform.python_version())'", "r");

		cr_assert_not_null(p);
		cr_assert_not_null(fgets(version, sizeof(version), p));
		pclose(p);
		version[strcspn(version, "\n")] = '\0';
		cr_expect_str_eq(json_string_value(jget(hw, "python_version")), version);
	}
	cr_expect_str_eq(json_string_value(jget(jget(hw, "thread_env"), "OMP_NUM_THREADS")), "3",
			 "thread_env comes from the target");
	blas = jget(hw, "blas");
	json_array_foreach(blas, i, pool)
		has_blas |= strstr(json_string_value(jget(pool, "backend")), "blas") != NULL;
	cr_expect(has_blas, "numpy's BLAS is mapped: %s", json_dumps(blas, 0));
	um_result_free(&r);
}

static void expect_refused(const char *python, const char *const *extra, const char *message)
{
	const char *args[16] = { "run", "--unit", "python:fit_gfmm", python };
	struct um_result r;
	int n = 4;

	for (int i = 0; extra && extra[i]; i++)
		args[n++] = extra[i];
	args[n] = NULL;
	um_run(&r, true, args);
	cr_expect_eq(r.status, RUN_FAILED, "status %d: %s", r.status, r.err);
	cr_expect_not_null(strstr(r.err, message), "%s", r.err);
	cr_expect_null(r.manifest, "nothing may start");
	um_result_free(&r);
}

Test(python, unsupported_interpreter_is_named)
{
	const char *py = pyenv("2.7.18");
	const char *extra[] = { "-c", "pass", NULL };

	if (!py)
		cr_skip_test("pyenv 2.7.18 is absent");
	expect_refused(py, extra, "is CPython 2.7.18; supported: CPython 3.6 or newer");
}

Test(python, isolated_mode_is_refused)
{
	const char *extra[] = { "-I", "-c", "pass", NULL };

	expect_refused(DEBIAN_PYTHON, extra, "'-I' makes Python ignore PYTHONPATH");
}

Test(python, malformed_spec_is_refused)
{
	struct um_result r;
	const char *args[] = { "run", "--unit", "python:fit gfmm", DEBIAN_PYTHON, "-c", "pass", NULL };

	um_run(&r, true, args);
	cr_expect_eq(r.status, RUN_FAILED);
	cr_expect_not_null(strstr(r.err, "is malformed: write python:QUALNAME"), "%s", r.err);
	um_result_free(&r);
}

/*
 * 3.6-3.11 wrap a __main__ unit function by line-tracing the main module's top level until its
 * def has run. The imports around the def must run untraced, the trace must resume after them
 * (the def is found), and the builtin import must be back once the def is wrapped.
 */
static void expect_main_between_imports(const char *python)
{
	static char path[512];
	const char *args[] = { "run", "-q", "--unit", "python:fit", python, path, NULL };
	struct um_result r;
	json_t *units, *traced, *t, *u;
	size_t i;

	snprintf(path, sizeof(path), "%s/../../tools/workloads/python/main_imports.py",
		 getenv("WORKLOADS") ? getenv("WORKLOADS") : ".output/workloads");
	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "%s: status %d: %s", python, r.status, r.err);
	cr_assert_not_null(r.truth, "%s printed no truth: %s\n%s", python, r.out, r.err);
	units = jget(r.manifest, "units");
	cr_expect_eq(json_array_size(units), (size_t)jnum(r.truth, "calls"), "%s: %zu units for %.0f calls",
		     python, json_array_size(units), jnum(r.truth, "calls"));
	json_array_foreach(units, i, u)
		cr_expect_str_eq(json_string_value(jget(u, "status")), "complete");
	traced = jget(r.truth, "imports_traced");
	cr_expect_eq(json_array_size(traced), 2);
	json_array_foreach(traced, i, t)
		cr_expect(json_is_false(t), "%s: import %zu ran under the bootstrap's tracer", python, i);
	cr_expect(json_is_true(jget(r.truth, "builtin_import_restored")),
		  "%s: the builtin __import__ was not put back", python);
	um_result_free(&r);
}

Test(python, main_unit_between_imports_36_to_311)
{
	const char *versions[] = { "3.6.15", "3.7.16", "3.8.18", "3.9.18", "3.10.13", "3.11.7" };
	int tried = 0;

	if (access(DEBIAN_PYTHON, X_OK) == 0) {
		expect_main_between_imports(DEBIAN_PYTHON);
		tried++;
	}
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		const char *py = pyenv(versions[i]);

		if (py) {
			expect_main_between_imports(py);
			tried++;
		}
	}
	if (!tried)
		cr_skip_test("no CPython 3.6-3.11 here");
}

/* A program's own sitecustomize (Debian ships one) still runs behind the bootstrap's. */
Test(python, the_programs_own_sitecustomize_still_runs)
{
	char dir[] = "/tmp/unitmeter-site-XXXXXX", path[512], ran[512], script_path[512];
	const char *args[] = { "run", "-q", "--unit", "python:fit", DEBIAN_PYTHON, script_path, NULL };
	struct um_result r;
	FILE *f;

	if (access(DEBIAN_PYTHON, X_OK))
		cr_skip_test("%s is absent", DEBIAN_PYTHON);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sitecustomize.py", dir);
	snprintf(ran, sizeof(ran), "%s/ran", dir);
	snprintf(script_path, sizeof(script_path), "%s/../../tools/workloads/python/main_imports.py",
		 getenv("WORKLOADS") ? getenv("WORKLOADS") : ".output/workloads");
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "import os\nos.close(os.open(%s, os.O_CREAT | os.O_WRONLY, 0o666))\n",
		"os.path.join(os.path.dirname(__file__), 'ran')");
	fclose(f);
	chmod(dir, 0777); /* the traced program runs as the sudo caller */
	setenv("PYTHONPATH", dir, 1);
	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
	cr_expect_eq(access(ran, F_OK), 0, "the program's sitecustomize did not run: %s", r.err);
	cr_expect_eq(json_array_size(jget(r.manifest, "units")), 3, "%s", r.err);
	um_result_free(&r);
	unlink(ran);
	unlink(path);
	rmdir(dir);
}

/*
 * Names as users write them (issue #37): the spec resolves to the function object once the
 * program has imported the module it names, through a re-export or a dotted path, and a spec
 * that matched nothing fails the run with the closest names, once for the run.
 */

static const char *python_workload(const char *name)
{
	static __thread char path[512];

	snprintf(path, sizeof(path), "%s/../../tools/workloads/python/%s",
		 getenv("WORKLOADS") ? getenv("WORKLOADS") : ".output/workloads", name);
	return path;
}

static size_t count_text(const char *haystack, const char *needle)
{
	size_t n = 0;

	for (const char *at = haystack; at && (at = strstr(at, needle)); at += strlen(needle))
		n++;
	return n;
}

static size_t units_of(json_t *manifest, const char *spec)
{
	json_t *units = jget(manifest, "units"), *u;
	size_t i, n = 0;

	json_array_foreach(units, i, u)
		n += !strcmp(json_string_value(jget(u, "spec")), spec);
	return n;
}

/* run.python's verdict on spec. */
static json_t *verdict_of(json_t *manifest, const char *spec)
{
	json_t *verdicts = jget(jget(manifest, "run"), "python"), *v;
	size_t i;

	json_array_foreach(verdicts, i, v)
		if (!strcmp(json_string_value(jget(v, "spec")), spec))
			return v;
	return NULL;
}

/* Five KMeans fits named the way a new user names them: five units, exit 0, no word. */
static void expect_kmeans_units(const char *spec)
{
	const char *args[] = { "run", "-q", "--unit", spec, DEBIAN_PYTHON,
			       python_workload("kmeans_fit.py"), NULL };
	struct um_result r;

	if (system(DEBIAN_PYTHON " -c 'import sklearn' 2>/dev/null"))
		cr_skip_test("Debian's python3-sklearn is not installed");
	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "%s: status %d: %s", spec, r.status, r.err);
	cr_assert_not_null(r.truth, "%s: no truth: %s", spec, r.err);
	cr_expect_eq(units_of(r.manifest, spec), (size_t)jnum(r.truth, "fits"), "%s: %s", spec, r.err);
	cr_expect_str_eq(json_string_value(jget(verdict_of(r.manifest, spec), "status")), "matched");
	cr_expect_str_eq(json_string_value(jget(verdict_of(r.manifest, spec), "defined_in")),
			 "sklearn.cluster._kmeans");
	um_result_free(&r);
}

Test(python, kmeans_by_qualname)
{
	expect_kmeans_units("python:KMeans.fit");
}

Test(python, kmeans_by_defining_module)
{
	expect_kmeans_units("python:sklearn.cluster._kmeans:KMeans.fit");
}

Test(python, kmeans_by_public_module)
{
	expect_kmeans_units("python:sklearn.cluster:KMeans.fit");
}

Test(python, kmeans_by_dotted_path)
{
	expect_kmeans_units("python:sklearn.cluster._kmeans.KMeans.fit");
}

/* The demo with a typo: an error naming the closest function, once, and unitmeter's status. */
Test(python, demo_typo_names_the_closest)
{
	char demo[512];
	const char *args[] = { "run", "-q", "--unit", "python:fit_gfmmm", DEBIAN_PYTHON, demo, NULL };
	int failure = RUN_FAILED;
	struct um_result r;
	json_t *v;

	if (system(DEBIAN_PYTHON " -c 'import sklearn' 2>/dev/null"))
		cr_skip_test("Debian's python3-sklearn is not installed");
	snprintf(demo, sizeof(demo), "%s/demo/fit_gmm.py", getenv("TOOLS") ? getenv("TOOLS") : "tools");
	um_run(&r, true, args);
	cr_expect_eq(r.status, failure, "status %d: %s", r.status, r.err);
	cr_expect_eq(count_text(r.err, "--unit python:fit_gfmmm matched no function"), 1, "%s", r.err);
	cr_expect_not_null(strstr(r.err, "fit_gmm.py defined or imported; closest: fit_gfmm"), "%s",
			   r.err);
	v = verdict_of(r.manifest, "python:fit_gfmmm");
	cr_expect_str_eq(json_string_value(jget(v, "status")), "not_found");
	cr_expect_str_eq(json_string_value(json_array_get(jget(v, "closest"), 0)), "fit_gfmm");
	cr_expect_eq(json_array_size(jget(r.manifest, "units")), 0);
	um_result_free(&r);
}

/* A typo in the function two spawned pool workers run: every process reports, one message. */
Test(python, typo_in_pool_worker_said_once)
{
	const char *args[] = { "run", "-q", "--unit", "python:fit_gfmx", DEBIAN_PYTHON, script(),
			       "--mode", "pool", "--start", "spawn", NULL };
	int failure = RUN_FAILED;
	struct um_result r;

	um_run(&r, true, args);
	cr_expect_eq(r.status, failure, "status %d: %s", r.status, r.err);
	cr_assert_not_null(r.truth, "%s", r.err);
	cr_expect_eq(json_array_size(jget(r.truth, "fits")), 4, "the workers ran their fits");
	cr_expect_eq(count_text(r.err, "python:fit_gfmx"), 1, "once for the run: %s", r.err);
	cr_expect_not_null(strstr(r.err, "closest: fit_gfmm"), "%s", r.err);
	um_result_free(&r);
}

/* The program failed on its own: its status stands, and the spec is still said. */
Test(python, the_programs_failure_comes_first)
{
	const char *args[] = { "run", "-q", "--unit", "python:fit_gfmx", DEBIAN_PYTHON, "-c",
			       "import sys; sys.exit(7)", NULL };
	struct um_result r;

	um_run(&r, true, args);
	cr_expect_eq(r.status, 7, "status %d: %s", r.status, r.err);
	cr_expect_not_null(strstr(r.err, "--unit python:fit_gfmx matched no function"), "%s", r.err);
	um_result_free(&r);
}

/*
 * Each kind of function py_names.py calls through the package umpkg, which re-exports what
 * umpkg._impl defines: the units of each spec are the calls the script made of it.
 */
struct named_case {
	const char *spec;
	const char *truth_key; /* its calls in the truth; NULL: none expected */
	const char *verdict;   /* run.python's status */
};

static void expect_named(const char *python, const struct named_case *cases, size_t n,
			 bool expect_failure)
{
	const char *args[64] = { "run", "-q" };
	int failure = expect_failure ? RUN_FAILED : 0;
	struct um_result r;
	size_t argc = 2;

	for (size_t i = 0; i < n; i++) {
		args[argc++] = "--unit";
		args[argc++] = cases[i].spec;
	}
	args[argc++] = python;
	args[argc++] = python_workload("py_names.py");
	args[argc] = NULL;
	um_run(&r, true, args);
	cr_expect_eq(r.status, failure, "%s: status %d: %s", python, r.status, r.err);
	cr_assert_not_null(r.truth, "%s: no truth: %s", python, r.err);
	for (size_t i = 0; i < n; i++) {
		size_t calls = cases[i].truth_key ?
				       (size_t)jnum(jget(r.truth, "calls"), cases[i].truth_key) : 0;

		cr_expect_eq(units_of(r.manifest, cases[i].spec), calls, "%s %s: %zu units, %zu calls",
			     python, cases[i].spec, units_of(r.manifest, cases[i].spec), calls);
		cr_expect_str_eq(json_string_value(jget(verdict_of(r.manifest, cases[i].spec), "status")),
				 cases[i].verdict, "%s %s", python, cases[i].spec);
	}
	um_result_free(&r);
}

/* One spec each: two specs naming one function would share its units. */
static const struct named_case common_cases[] = {
	{ "python:umpkg:Model.fit", "Model.fit", "matched" },          /* a re-exported class */
	{ "python:umpkg:solve", "solve", "matched" },                  /* a re-exported function */
	{ "python:umpkg:Child.fit", "Child.fit", "matched" },          /* inherited: Child's calls */
	{ "python:umpkg:wrapped_fit", "wrapped_fit", "matched" },      /* functools.wraps */
	{ "python:umpkg:Model.static_fit", "Model.static_fit", "matched" },
	{ "python:umpkg:Model.class_fit", "Model.class_fit", "matched" },
	{ "python:umpkg:never_called", NULL, "never_called" },
	{ "python:umpkg:alias_fit", "alias_fit", "matched" },          /* fit = _fit_impl */
	{ "python:umpkg:lambda_fit", "lambda_fit", "matched" },
};

#define N_COMMON (sizeof(common_cases) / sizeof(common_cases[0]))

/* The common cases and two that differ between 3.6-3.11 and 3.12+. */
static void expect_named_with(const char *python, const struct named_case *extra, bool failure)
{
	struct named_case cases[N_COMMON + 2];

	memcpy(cases, common_cases, sizeof(common_cases));
	cases[N_COMMON] = extra[0];
	cases[N_COMMON + 1] = extra[1];
	expect_named(python, cases, N_COMMON + 2, failure);
}

/* Whether python has sys.monitoring (3.12+): Debian 12's is 3.11, Debian 13's 3.13. */
static bool monitors(const char *python)
{
	int status;
	char *out = sh_out(&status, "%s -c 'import sys; print(int(sys.version_info >= (3, 12)))'",
			   python);
	bool yes = status == 0 && out[0] == '1';

	free(out);
	return yes;
}

Test(python, names_resolve_debian)
{
	const struct named_case wrapped[] = {
		/* 3.6-3.11 wrap where a function is bound: a nested one has no binding to wrap */
		{ "python:umpkg:outer.inner", NULL, "unresolvable" },
		/* the cache object cannot be opened: every call through the name is a unit */
		{ "python:umpkg:cached_fit", "cached_fit", "matched" },
	};
	const struct named_case monitored[] = {
		{ "python:umpkg:outer.inner", "outer.inner", "matched" },
		/* the cached function's code runs on a miss only */
		{ "python:umpkg:cached_fit", "cached_fit_misses", "matched" },
	};

	if (monitors(DEBIAN_PYTHON))
		expect_named_with(DEBIAN_PYTHON, monitored, false);
	else
		expect_named_with(DEBIAN_PYTHON, wrapped, true);
}

Test(python, names_resolve_313)
{
	const char *py = pyenv("3.13.0");
	const struct named_case extra[] = {
		{ "python:umpkg:outer.inner", "outer.inner", "matched" },
		/* the cached function's code runs on a miss only */
		{ "python:umpkg:cached_fit", "cached_fit_misses", "matched" },
	};

	if (!py)
		cr_skip_test("pyenv 3.13.0 is absent");
	expect_named_with(py, extra, false);
}

/* The dotted forms, Python's own <locals> step included (3.12+ only for the nested one). */
Test(python, dotted_names_313)
{
	const char *py = pyenv("3.13.0");
	const struct named_case cases[] = {
		{ "python:umpkg._impl.Model.fit", "Model.fit", "matched" },
		{ "python:umpkg._impl.outer.<locals>.inner", "outer.inner", "matched" },
		{ "python:umpkg.Child.fit", "Child.fit", "matched" },
	};

	if (!py)
		cr_skip_test("pyenv 3.13.0 is absent");
	expect_named(py, cases, 3, false);
}

Test(python, dotted_names_debian)
{
	const struct named_case cases[] = {
		{ "python:umpkg._impl.Model.fit", "Model.fit", "matched" },
		{ "python:umpkg.Child.fit", "Child.fit", "matched" },
	};

	expect_named(DEBIAN_PYTHON, cases, 2, false);
}

/* A spec that found its function and never saw it called: a warning, exit 0. */
Test(python, never_called_is_a_warning)
{
	const struct named_case cases[] = { { "python:umpkg:never_called", NULL, "never_called" } };
	const char *args[] = { "run", "-q", "--unit", "python:umpkg:never_called", DEBIAN_PYTHON,
			       python_workload("py_names.py"), NULL };
	struct um_result r;

	expect_named(DEBIAN_PYTHON, cases, 1, false);
	um_run(&r, true, args);
	cr_expect_eq(count_text(r.err, "warning: --unit python:umpkg:never_called: defined in "
				       "`umpkg._impl`, never called"), 1, "%s", r.err);
	um_result_free(&r);
}

/* The forms a python: spec is parsed in, Python's own <locals> step among them. */
Test(python, spec_forms_parse)
{
	const char *good[] = { "python:fit", "python:pkg.mod:Model.fit", "python:pkg.mod.Model.fit",
			       "python:outer.<locals>.inner", "python:pkg:outer.<locals>.inner" };
	const char *bad[] = { "python:outer.<locals>", "python:<locals>.f", "python:pkg:",
			      "python:a..b", "python:pkg.<lo>.f" };
	struct unit_spec spec;
	char why[256];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_expect_eq(unit_spec_resolve(&spec, good[i], NULL, 0, why, sizeof(why)), 0,
			     "%s: %s", good[i], why);
		unit_spec_free(&spec);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(unit_spec_resolve(&spec, bad[i], NULL, 0, why, sizeof(why)), -EINVAL,
			     "%s was accepted", bad[i]);
		unit_spec_free(&spec);
	}
}
