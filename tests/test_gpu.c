// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory through the CUDA driver API, against the fake libcuda.so.1 the suite builds
 * (tools/workloads/gpu/): each unit of gpu_driver holds device bytes the schedule fixes, so
 * every expected peak is exact. The fake is found as the loader would find it, through the
 * LD_LIBRARY_PATH unitmeter and the command share.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#define MIB 1048576LL

TestSuite(gpu, .init = require_tracing, .timeout = UM_SUITE_TIMEOUT_S);

/* In unitmeter's process before its exec; not workload(), whose buffer the args point to. */
static void with_fake_driver(void)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/fakecuda",
		 getenv("WORKLOADS") ? getenv("WORKLOADS") : ".output/workloads");
	setenv("LD_LIBRARY_PATH", dir, 1);
}

static void run_driver(struct um_result *r, const char *driver, const char *mode)
{
	const char *args[] = { "run", "-q", "--unit", "fit_unit", workload(driver), mode, NULL };

	um_run_with(r, true, args, with_fake_driver);
	cr_assert_eq(r->status, 0, "%s %s: status %d: %s", driver, mode, r->status, r->err);
	cr_assert_not_null(r->truth, "%s %s printed no truth: %s", driver, mode, r->err);
	cr_assert_eq(jnum(r->truth, "units"), json_array_size(jget(r->manifest, "units")),
		     "%s %s: units", driver, mode);
}

static long long unit_num(const json_t *units, size_t i, const char *key)
{
	return (long long)jnum(json_array_get(units, i), key);
}

/* Unit i's peak per device: device -1 is the null one; every listed device must be expected. */
static void expect_devices(const json_t *unit, size_t i, int n, const int *devices,
			   const long long *peaks)
{
	json_t *list = jget(unit, "peak_gpu_bytes_by_device"), *d;
	size_t k;

	cr_assert(json_is_array(list), "unit %zu: no per-device list", i);
	cr_expect_eq(json_array_size(list), (size_t)n, "unit %zu: %zu devices listed", i,
		     json_array_size(list));
	json_array_foreach(list, k, d) {
		json_t *dev = jget(d, "device");
		int device = json_is_null(dev) ? -1 : (int)json_integer_value(dev);
		bool expected = false;

		for (int j = 0; j < n; j++)
			if (devices[j] == device) {
				expected = true;
				cr_expect_eq((long long)jnum(d, "peak_bytes"), peaks[j],
					     "unit %zu device %d: %.0f", i, device, jnum(d, "peak_bytes"));
			}
		cr_expect(expected, "unit %zu: device %d not expected", i, device);
	}
}

/* The three units of the calls schedule: 6, 8 and 4 MiB, all on device 0. */
static void expect_calls(const char *driver, const char *mode)
{
	static const long long peaks[] = { 6 * MIB, 8 * MIB, 4 * MIB };
	struct um_result r;
	json_t *units;

	run_driver(&r, driver, mode);
	units = jget(r.manifest, "units");
	for (size_t i = 0; i < 3; i++) {
		cr_expect_eq(unit_num(units, i, "peak_gpu_bytes"), peaks[i], "%s unit %zu: %lld", mode,
			     i, unit_num(units, i, "peak_gpu_bytes"));
		cr_expect_eq(unit_num(units, i, "peak_gpu_managed_bytes"), 0);
		cr_expect_eq(unit_num(units, i, "gpu_devices"), 1);
		expect_devices(json_array_get(units, i), i, 1, (int[]){ 0 }, &peaks[i]);
	}
	/* the stream carries the same keys as the manifest */
	cr_expect_eq((long long)jnum(json_array_get(r.units, 0), "peak_gpu_bytes"), peaks[0]);
	cr_expect_eq((long long)jnum(jget(r.manifest, "run"), "peak_gpu_bytes"), 8 * MIB);
	um_result_free(&r);
}

Test(gpu, calls_through_the_plt)
{
	expect_calls("gpu_driver", "plt");
}

Test(gpu, calls_through_dlsym)
{
	expect_calls("gpu_driver", "dlsym");
}

/* cudart's path: pointers from cuGetProcAddress_v2, the _ptsz exports under the flag */
Test(gpu, calls_through_cuGetProcAddress_per_thread_stream)
{
	struct um_result r;

	run_driver(&r, "gpu_driver", "procaddr");
	cr_assert(json_is_true(jget(r.truth, "ptsz")), "the fake gave no _ptsz exports");
	um_result_free(&r);
	expect_calls("gpu_driver", "procaddr");
}

/*
 * Two runs of the driver at once, each a group of the node's one set (issue #34): each
 * attaches its own probes to the one library, and each counts only its own process's calls,
 * once: the three units' 6, 8 and 4 MiB and the same calls in each, not twice as many.
 */
struct gpu_run {
	pthread_t thread;
	struct um_result r;
};

static void *gpu_run_thread(void *arg)
{
	struct gpu_run *g = arg;
	const char *args[] = { "run", "-q", "--unit", "fit_unit", workload("gpu_driver"), "plt",
			       NULL };

	um_run(&g->r, true, args);
	return NULL;
}

Test(gpu, two_runs_at_once_count_their_own_calls_once)
{
	static const long long peaks[] = { 6 * MIB, 8 * MIB, 4 * MIB };
	struct gpu_run runs[2];
	char dir[512];

	/* in this process, before the threads: each run's unitmeter finds the fake driver, and
	 * each driver pauses 100 ms a unit, so the two overlap */
	snprintf(dir, sizeof(dir), "%s/fakecuda",
		 getenv("WORKLOADS") ? getenv("WORKLOADS") : ".output/workloads");
	setenv("LD_LIBRARY_PATH", dir, 1);
	setenv("GPU_DRIVER_PAUSE_MS", "100", 1);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&runs[i].thread, NULL, gpu_run_thread, &runs[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(runs[i].thread, NULL);
	for (int i = 0; i < 2; i++) {
		struct um_result *r = &runs[i].r;
		json_t *run, *units;
		const char *build;

		cr_assert_eq(r->status, 0, "run %d: status %d: %s", i, r->status, r->err);
		cr_assert_not_null(r->manifest, "run %d: %s", i, r->err);
		run = jget(r->manifest, "run");
		units = jget(r->manifest, "units");
		cr_assert_eq(json_array_size(units), 3, "run %d: %zu units", i, json_array_size(units));
		for (size_t k = 0; k < 3; k++)
			cr_expect_eq(unit_num(units, k, "peak_gpu_bytes"), peaks[k],
				     "run %d unit %zu: %lld", i, k, unit_num(units, k, "peak_gpu_bytes"));
		cr_expect_eq((long long)jnum(run, "peak_gpu_bytes"), 8 * MIB, "run %d: %.0f", i,
			     jnum(run, "peak_gpu_bytes"));
		cr_expect_eq(jnum(jget(run, "gpu"), "calls"),
			     jnum(jget(jget(runs[0].r.manifest, "run"), "gpu"), "calls"),
			     "run %d: %.0f driver calls", i, jnum(jget(run, "gpu"), "calls"));
		cr_expect_gt(jnum(jget(run, "gpu"), "calls"), 0);
		/* the baseline (5.10's BPF, no attach cookies) loads a run's own */
		build = json_string_value(jget(jget(run, "tracing"), "build"));
		cr_expect_str_eq(json_string_value(jget(jget(run, "tracing"), "programs")),
				 build && !strcmp(build, "baseline") ? "run" : "node", "run %d", i);
	}
	for (int i = 0; i < 2; i++)
		um_result_free(&runs[i].r);
}

Test(gpu, library_dlopened_after_tracing_began)
{
	expect_calls("gpu_driver_late", "dlsym");
}

/* Wait (up to 60 s: an emulated guest is slow) until pid has exec'd and mapped the driver. */
static bool target_mapped_the_driver(pid_t pid)
{
	char path[64], *maps;
	bool mapped = false;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (int waited = 0; !mapped && waited < 600; waited++) {
		maps = slurp_file(path);
		mapped = maps && strstr(maps, "/libcuda.so.1");
		free(maps);
		if (!mapped)
			usleep(100000);
	}
	return mapped;
}

/*
 * attach: the library is found in the target's maps (unitmeter's own environment does not
 * name it), and the units after the attach are exact.
 */
Test(gpu, attach_finds_the_library_the_target_mapped)
{
	static const long long peaks[] = { 6 * MIB, 8 * MIB, 4 * MIB };
	char pidtext[16], go[64];
	struct attach_run a;
	/* the duration: a bound should the target's exit be missed */
	const char *args[] = { "attach", "-q", "-p", pidtext, "--unit", "fit_unit", "--duration",
			       "60", "--ready-fd", a.fd_text, NULL };
	const char *library;
	json_t *units;
	pthread_t th;
	pid_t target;
	int status;

	a.args = args;
	snprintf(go, sizeof(go), "/tmp/um-gpu-go-%d", (int)getpid());
	unlink(go);
	target = fork();
	cr_assert(target >= 0);
	if (target == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1); /* its truth line is the schedule's, known here */
		with_fake_driver();
		execl(workload("gpu_driver"), "gpu_driver", "attach", go, (char *)NULL);
		_exit(99);
	}
	snprintf(pidtext, sizeof(pidtext), "%d", target);
	cr_assert(target_mapped_the_driver(target), "the target never mapped libcuda.so.1");
	attach_start(&a, &th);
	close(open(go, O_WRONLY | O_CREAT, 0600));
	cr_assert_eq(waitpid(target, &status, 0), target);
	cr_assert_eq(pthread_join(th, NULL), 0);
	unlink(go);
	cr_assert_eq(status, 0, "the target failed: %d", status);
	cr_assert_not_null(a.r.manifest, "status %d: %s", a.r.status, a.r.err);
	library = json_string_value(jget(jget(jget(a.r.manifest, "run"), "gpu"), "library"));
	cr_expect(library && strstr(library, "/proc/") && strstr(library, "fakecuda/libcuda.so.1"),
		  "not the mapped library: %s", library ? library : "null");
	units = jget(a.r.manifest, "units");
	cr_assert_eq(json_array_size(units), 3, "%zu units: %s", json_array_size(units), a.r.err);
	for (size_t i = 0; i < 3; i++)
		cr_expect_eq(unit_num(units, i, "peak_gpu_bytes"), peaks[i], "unit %zu: %lld", i,
			     unit_num(units, i, "peak_gpu_bytes"));
	um_result_free(&a.r);
}

/* One unit's peak, managed peak and devices: a schedule of a single unit. */
static void expect_one(const char *mode, long long peak, long long managed, int n_devices,
		       const int *devices, const long long *peaks, json_t **run_out,
		       struct um_result *r)
{
	json_t *units, *u;

	run_driver(r, "gpu_driver", mode);
	units = jget(r->manifest, "units");
	u = json_array_get(units, 0);
	cr_expect_eq(unit_num(units, 0, "peak_gpu_bytes"), peak, "%s: %lld, expected %lld", mode,
		     unit_num(units, 0, "peak_gpu_bytes"), peak);
	cr_expect_eq(unit_num(units, 0, "peak_gpu_managed_bytes"), managed, "%s: managed %lld",
		     mode, unit_num(units, 0, "peak_gpu_managed_bytes"));
	expect_devices(u, 0, n_devices, devices, peaks);
	*run_out = jget(r->manifest, "run");
}

Test(gpu, several_threads_hold_at_once)
{
	struct um_result r;
	json_t *run;

	expect_one("threads", 10 * MIB, 0, 1, (int[]){ 0 }, (long long[]){ 10 * MIB }, &run, &r);
	cr_expect_eq(unit_num(jget(r.manifest, "units"), 0, "threads"), 5);
	um_result_free(&r);
}

Test(gpu, failed_allocation_is_not_counted)
{
	struct um_result r;
	json_t *run;

	expect_one("failed", 3 * MIB, 0, 1, (int[]){ 0 }, (long long[]){ 3 * MIB }, &run, &r);
	cr_expect_eq(jnum(jget(run, "gpu"), "failed_calls"), 1);
	um_result_free(&r);
}

Test(gpu, free_of_an_unknown_address_takes_nothing_off)
{
	struct um_result r;
	json_t *run;

	expect_one("unknown_free", 2 * MIB, 0, 1, (int[]){ 0 }, (long long[]){ 2 * MIB }, &run, &r);
	cr_expect_eq(jnum(jget(run, "gpu"), "failed_calls"), 1);
	um_result_free(&r);
}

/* 5 MiB held at the unit's start and freed in it: the unit held 5 MiB; the next one none */
Test(gpu, memory_allocated_before_the_unit_and_freed_in_it)
{
	struct um_result r;
	json_t *units;

	run_driver(&r, "gpu_driver", "before");
	units = jget(r.manifest, "units");
	cr_expect_eq(unit_num(units, 0, "peak_gpu_bytes"), 5 * MIB, "%lld",
		     unit_num(units, 0, "peak_gpu_bytes"));
	cr_expect_eq(unit_num(units, 1, "peak_gpu_bytes"), 0);
	cr_expect_eq(unit_num(units, 1, "gpu_devices"), 0);
	um_result_free(&r);
}

/* cuMemCreate on device 1 counts there; a host-located one is not device memory */
Test(gpu, vmm_create_and_release_device_located_only)
{
	struct um_result r;
	json_t *run;

	expect_one("vmm", 2 * MIB, 0, 1, (int[]){ 1 }, (long long[]){ 2 * MIB }, &run, &r);
	cr_expect_eq(unit_num(jget(r.manifest, "units"), 0, "gpu_devices"), 1);
	um_result_free(&r);
}

/* the pitch the driver chose (1000 bytes rounded to 1024) times the height */
Test(gpu, pitch_allocation_is_pitch_times_height)
{
	struct um_result r;
	json_t *run;

	expect_one("pitch", 1024 * 300, 0, 1, (int[]){ 0 }, (long long[]){ 1024 * 300 }, &run, &r);
	um_result_free(&r);
}

Test(gpu, managed_memory_counted_apart)
{
	struct um_result r;
	json_t *run;

	expect_one("managed", 1 * MIB, 3 * MIB, 1, (int[]){ 0 }, (long long[]){ 1 * MIB }, &run, &r);
	cr_expect_eq((long long)jnum(run, "peak_gpu_managed_bytes"), 3 * MIB);
	um_result_free(&r);
}

/* a child forked inside the unit is in its scope: 1 MiB of the parent's and 2 of its own */
Test(gpu, forked_child_in_the_unit_scope)
{
	struct um_result r;
	json_t *run;

	expect_one("fork", 3 * MIB, 0, 1, (int[]){ 0 }, (long long[]){ 3 * MIB }, &run, &r);
	cr_expect_eq(unit_num(jget(r.manifest, "units"), 0, "processes"), 2);
	um_result_free(&r);
}

Test(gpu, devices_from_the_current_context)
{
	struct um_result r;
	json_t *run;

	expect_one("devices", 3 * MIB, 0, 2, (int[]){ 0, 1 }, (long long[]){ 1 * MIB, 2 * MIB },
		   &run, &r);
	cr_expect_eq(unit_num(jget(r.manifest, "units"), 0, "gpu_devices"), 2);
	cr_expect_eq(jnum(run, "gpu_devices"), 2);
	um_result_free(&r);
}

/* no context made current by a call seen: the bytes count, their device is null */
Test(gpu, device_unknown_without_a_context)
{
	struct um_result r;
	json_t *run;

	expect_one("nocontext", 1 * MIB, 0, 1, (int[]){ -1 }, (long long[]){ 1 * MIB }, &run, &r);
	cr_expect(json_is_null(jget(json_array_get(jget(r.manifest, "units"), 0), "gpu_devices")));
	cr_expect(json_is_null(jget(run, "gpu_devices")));
	um_result_free(&r);
}

/* a fit in Python that reaches the driver through ctypes, as frameworks' bindings do */
Test(gpu, python_fit_through_ctypes)
{
	static const long long sizes[] = { 3 * MIB, 7 * MIB, 5 * MIB };
	char script[512];
	const char *args[] = { "run", "-q", "--unit", "python:fit_gpu", "/usr/bin/python3", script,
			       "3,7,5", NULL };
	struct um_result r;
	json_t *units;

	snprintf(script, sizeof(script), "%s/../../tools/workloads/python/gpu_fit.py",
		 getenv("WORKLOADS") ? getenv("WORKLOADS") : ".output/workloads");
	um_run_with(&r, true, args, with_fake_driver);
	cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
	units = jget(r.manifest, "units");
	cr_assert_eq(json_array_size(units), 3, "%zu units: %s", json_array_size(units), r.err);
	for (size_t i = 0; i < 3; i++)
		cr_expect_eq(unit_num(units, i, "peak_gpu_bytes"), sizes[i], "unit %zu: %lld", i,
			     unit_num(units, i, "peak_gpu_bytes"));
	um_result_free(&r);
}

/*
 * A CPU-only command with the driver found: the probes are attached to the library's file, so
 * a process that never maps it never hits one; its figures are null, with the reason.
 */
Test(gpu, cpu_only_command_has_null_figures_and_no_calls)
{
	const char *args[] = { "run", "-q", "--unit", "fit_unit", workload("units"), "--mode",
			       "spikes", "--sizes", "4", NULL };
	struct um_result r;
	json_t *u, *run, *gpu;

	um_run_with(&r, true, args, with_fake_driver);
	cr_assert_eq(r.status, 0, "%s", r.err);
	u = json_array_get(jget(r.manifest, "units"), 0);
	run = jget(r.manifest, "run");
	gpu = jget(run, "gpu");
	cr_expect(json_is_null(jget(u, "peak_gpu_bytes")));
	cr_expect(json_is_null(jget(u, "peak_gpu_bytes_by_device")));
	cr_expect(json_is_null(jget(run, "peak_gpu_bytes")));
	cr_expect(json_is_string(jget(gpu, "library")), "the fake driver was not found");
	cr_expect_eq(jnum(gpu, "calls"), 0);
	cr_expect(json_is_string(jget(gpu, "reason")));
	um_result_free(&r);
}

/*
 * NVML (the fake libnvidia-ml.so.1, tools/workloads/gpu/fake_nvml.c): it reports each live
 * process the fake driver published as the bytes it holds plus a fixed context. unitmeter reads
 * it as each unit's record arrives; the workload pauses after each unit, so the read falls
 * while the process is alive and still: the difference must be the fake's context exactly. The
 * "held" schedule keeps 2, then 5 MiB past the units' ends (the API peaks are 2, 5, 5 MiB), so
 * the bytes held then must be taken off NVML's figure, not counted in the context.
 */
static char nvml_state[64];

static void with_fake_nvml(void)
{
	char dir[1024];
	const char *w = getenv("WORKLOADS") ? getenv("WORKLOADS") : ".output/workloads";

	snprintf(dir, sizeof(dir), "%s/fakecuda:%s/fakenvml", w, w);
	setenv("LD_LIBRARY_PATH", dir, 1);
	setenv("FAKE_CUDA_STATE_DIR", nvml_state, 1);
	setenv("GPU_DRIVER_PAUSE_MS", "200", 1);
}

static void remove_nvml_state(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", nvml_state);
	cr_expect_eq(system(cmd), 0);
}

Test(gpu, nvml_context_read_at_each_units_end)
{
	static const long long peaks[] = { 2 * MIB, 5 * MIB, 5 * MIB };
	const long long context = 300 * MIB; /* FAKE_NVML_CONTEXT_BYTES */
	const char *args[] = { "run", "-q", "--unit", "fit_unit", workload("gpu_driver"), "held",
			       NULL };
	struct um_result r;
	json_t *units, *run;

	snprintf(nvml_state, sizeof(nvml_state), "/tmp/um-nvml-XXXXXX");
	cr_assert_not_null(mkdtemp(nvml_state));
	um_run_with(&r, true, args, with_fake_nvml);
	remove_nvml_state();
	cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
	units = jget(r.manifest, "units");
	cr_assert_eq(json_array_size(units), 3, "%zu units: %s", json_array_size(units), r.err);
	for (size_t i = 0; i < 3; i++) {
		json_t *u = json_array_get(units, i);

		/* the API figure is what it is without NVML */
		cr_expect_eq(unit_num(units, i, "peak_gpu_bytes"), peaks[i]);
		cr_expect_str_eq(json_string_value(jget(u, "gpu_nvml")),
				 "read by NVML at the unit's end, not traced", "unit %zu", i);
		cr_expect_eq(unit_num(units, i, "gpu_context_bytes"), context, "unit %zu: %lld", i,
			     unit_num(units, i, "gpu_context_bytes"));
		cr_expect_eq(unit_num(units, i, "peak_gpu_total_bytes"), peaks[i] + context,
			     "unit %zu: %lld", i, unit_num(units, i, "peak_gpu_total_bytes"));
	}
	cr_expect_eq((long long)jnum(json_array_get(r.units, 1), "peak_gpu_total_bytes"),
		     peaks[1] + context, "the stream carries the same keys");
	run = jget(r.manifest, "run");
	cr_expect_eq((long long)jnum(run, "peak_gpu_bytes"), 5 * MIB);
	cr_expect_eq((long long)jnum(run, "gpu_context_bytes"), context);
	cr_expect_eq((long long)jnum(run, "peak_gpu_total_bytes"), 5 * MIB + context);
	cr_expect(!strncmp(json_string_value(jget(jget(run, "gpu"), "nvml")), "read, not traced",
			   16), "%s", json_string_value(jget(jget(run, "gpu"), "nvml")));
	/* the hardware record lists the fake's device */
	cr_expect_eq(json_array_size(jget(jget(r.manifest, "hardware"), "gpus")), 1);
	um_result_free(&r);
}

Test(gpu, without_nvml_its_figures_are_null_and_the_api_ones_unchanged)
{
	static const long long peaks[] = { 6 * MIB, 8 * MIB, 4 * MIB };
	struct um_result r;
	json_t *units, *run;
	void *real;

	/* where a driver is installed, NVML is found: nothing to show about its absence */
	real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (real) {
		dlclose(real);
		cr_skip_test("this machine has a libnvidia-ml.so.1");
	}
	run_driver(&r, "gpu_driver", "plt");
	units = jget(r.manifest, "units");
	for (size_t i = 0; i < 3; i++) {
		json_t *u = json_array_get(units, i);

		cr_expect_eq(unit_num(units, i, "peak_gpu_bytes"), peaks[i]);
		cr_expect(json_is_null(jget(u, "peak_gpu_total_bytes")), "unit %zu", i);
		cr_expect(json_is_null(jget(u, "gpu_context_bytes")), "unit %zu", i);
		cr_expect_str_eq(json_string_value(jget(u, "gpu_nvml")),
				 "no NVML (run.gpu.nvml says why)");
	}
	run = jget(r.manifest, "run");
	cr_expect_eq((long long)jnum(run, "peak_gpu_bytes"), 8 * MIB);
	cr_expect(json_is_null(jget(run, "peak_gpu_total_bytes")));
	cr_expect(json_is_null(jget(run, "gpu_context_bytes")));
	cr_expect_str_eq(json_string_value(jget(jget(run, "gpu"), "nvml")),
			 "libnvidia-ml.so.1 was not found (no NVIDIA driver)");
	um_result_free(&r);
}

static size_t count_of(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *at = s; (at = strstr(at, needle)); at += strlen(needle))
		n++;
	return n;
}

/* The number after needle's first occurrence at or after from; -1 when none. */
static double number_after(const char *from, const char *needle)
{
	const char *at = from ? strstr(from, needle) : NULL;

	return at ? strtod(at + strlen(needle), NULL) : -1;
}

/*
 * From a fake-driver run to the request and the page: the unit held 1 MiB on device 0 and 2 MiB
 * on device 1, so --gres=gpu:2 and 2 MiB x 1.25 = 2.5 MiB per GPU; the page draws the unit's
 * 3 MiB (all devices) as a bar and the run's peak as a line, with the caption saying why.
 */
Test(gpu, project_and_report_of_a_gpu_run)
{
	const char *project[] = { "project", NULL, "--units", "10", "--tasks", "1", NULL };
	const char *report[] = { "report", NULL, "-o", NULL, NULL };
	struct um_result r, p;
	char page[160];
	const char *svg;
	char *html;

	run_driver(&r, "gpu_driver", "devices");
	project[1] = report[1] = r.manifest_path;
	um_run(&p, false, project);
	cr_assert_eq(p.status, 0, "%s", p.err);
	cr_expect_not_null(strstr(p.out, "\n#SBATCH --gres=gpu:2\n# GPU memory: 2.5 MiB per GPU "
					 "for one unit (its peak on one device 2.0 MiB x 1.25 "
					 "margin)"), "%s", p.out);
	um_result_free(&p);

	snprintf(page, sizeof(page), "%s/report.html", r.dir);
	report[3] = page;
	um_run(&p, false, report);
	cr_assert_eq(p.status, 0, "%s", p.err);
	um_result_free(&p);
	html = slurp_file(page);
	cr_assert_not_null(html);
	svg = strstr(html, "<svg class=\"gpu\"");
	cr_assert_not_null(svg, "no device memory chart in a GPU run's page");
	cr_expect_not_null(strstr(html, "The memory timeline holds no GPU samples"));
	/* beside RSS: in the memory section, after its chart */
	cr_expect_gt(svg, strstr(html, "<svg class=\"memory\""));
	cr_expect_eq(count_of(html, "<rect class=\"gpu-unit\""),
		     json_array_size(jget(r.manifest, "units")));
	cr_expect_eq(number_after(strstr(svg, "<rect class=\"gpu-unit\""), "data-value=\""),
		     3 * MIB);
	cr_expect_eq(number_after(strstr(svg, "<line class=\"gpu-run-peak\""), "data-value=\""),
		     jnum(jget(r.manifest, "run"), "peak_gpu_bytes"));
	free(html);
	/* drawn in a browser: the chart, its bar and no console error. Where make test runs it
	 * (BROWSER_CHECK set); the kernel matrix runs this suite for its probes, and its guests and
	 * cells have no browser: the page does not depend on the kernel */
	if (getenv("BROWSER_CHECK")) {
		const char *counts[] = { "gpu=svg.gpu", "bars=svg.gpu rect.gpu-unit",
					 "memory=svg.memory path.rss", NULL };
		char shot[256];
		json_t *j;

		snprintf(shot, sizeof(shot), "%s/unitmeter-report-gpu.png", screenshot_dir());
		j = render(page, shot, counts);
		expect_no_console_errors(j);
		cr_expect_eq(jnum(jget(j, "counts"), "gpu"), 1);
		cr_expect_eq(jnum(jget(j, "counts"), "bars"), 1);
		cr_expect_geq(jnum(jget(j, "counts"), "memory"), 1, "RSS beside it");
		json_decref(j);
	}
	um_result_free(&r);
}

/*
 * The NVIDIA driver's own libraries (Debian's non-free libcuda1 and libnvidia-ml1 of this
 * release, downloaded and unpacked by tools/workloads/gpu/nvidia-libs.sh, never installed): the
 * folder for arch, or the test is skipped with the script's reason (no mirror, no non-free).
 */
static const char *real_driver_libs(const char *arch)
{
	static __thread char dir[512];
	char cmd[1024], why[512] = "";
	const char *tools = getenv("TOOLS");
	FILE *p;
	int status;

	if (!tools)
		cr_skip_test("TOOLS is not set (make test sets it): the driver's packages are not fetched");
	snprintf(cmd, sizeof(cmd), "%s/workloads/gpu/nvidia-libs.sh %s 2>&1", tools, arch);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "popen %s", cmd);
	if (!fgets(dir, sizeof(dir), p))
		dir[0] = '\0';
	while (fgets(why, sizeof(why), p))
		;
	status = pclose(p);
	dir[strcspn(dir, "\n")] = '\0';
	if (status != 0)
		cr_skip_test("the NVIDIA driver's libraries (%s) could not be had: %s", arch, dir);
	return dir;
}

/* In unitmeter's process before its exec: the real driver's folder first. */
static char real_driver_dir[512];
static void with_real_driver(void)
{
	setenv("LD_LIBRARY_PATH", real_driver_dir, 1);
}

/*
 * Every entry point gpu_probes.c names (17) resolves and attaches in the real libcuda.so.1 of
 * both architectures (the symbol lookup is the same code for either file; a probe on a file no
 * process maps is not decoded until one does).
 */
Test(gpu, real_driver_every_entry_point_attaches)
{
	static const char *const arches[] = { "amd64", "arm64" };

	for (size_t i = 0; i < 2; i++) {
		const char *args[] = { "run", "-v", "--", "/bin/true", NULL };
		char expected[700];
		struct um_result r;

		snprintf(real_driver_dir, sizeof(real_driver_dir), "%s", real_driver_libs(arches[i]));
		um_run_with(&r, true, args, with_real_driver);
		cr_assert_eq(r.status, 0, "%s: status %d: %s", arches[i], r.status, r.err);
		snprintf(expected, sizeof(expected), "device memory: 17 entry points probed in %s/libcuda.so.1",
			 real_driver_dir);
		cr_expect_not_null(strstr(r.err, expected), "%s: %s", arches[i], r.err);
		um_result_free(&r);
	}
}

/*
 * The real driver on a machine with no GPU: cuInit refuses (no device), and the unit's three
 * probed calls (the primary context, an allocation, a free) fail: each is counted as called and
 * as failed, no byte is held, run.gpu says why, and the real NVML's refusal is named.
 */
Test(gpu, real_driver_without_a_device_counts_the_refused_calls)
{
	const char *args[] = { "run", "-q", "--unit", "fit_unit", workload("gpu_driver_late"),
			       "nodevice", NULL };
	struct um_result r;
	json_t *run, *gpu, *unit;
	char library[600];
	const char *nvml, *reason;
	void *real_nvml;

	snprintf(real_driver_dir, sizeof(real_driver_dir), "%s", real_driver_libs("amd64"));
	/* a machine with a driver loaded would allocate: this test is for one without */
	if (access("/proc/driver/nvidia/version", F_OK) == 0)
		cr_skip_test("this machine has the NVIDIA driver loaded");
	um_run_with(&r, true, args, with_real_driver);
	cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
	cr_assert_not_null(r.truth, "no truth: %s", r.err);
	cr_expect_neq(jnum(r.truth, "init"), 0, "cuInit succeeded without a GPU");
	cr_expect_neq(jnum(r.truth, "alloc"), 0, "cuMemAlloc_v2 succeeded without a GPU");
	run = jget(r.manifest, "run");
	gpu = jget(run, "gpu");
	snprintf(library, sizeof(library), "%s/libcuda.so.1", real_driver_dir);
	cr_expect_str_eq(json_string_value(jget(gpu, "library")), library);
	cr_expect_eq(jnum(gpu, "calls"), 3);
	cr_expect_eq(jnum(gpu, "failed_calls"), 3);
	cr_expect_eq(jnum(run, "peak_gpu_bytes"), 0);
	cr_expect(json_is_null(jget(run, "gpu_context_bytes")));
	reason = json_string_value(jget(gpu, "reason"));
	cr_expect(reason && strstr(reason, "every probed call to the CUDA driver failed"), "%s",
		  reason ? reason : "(null)");
	nvml = json_string_value(jget(gpu, "nvml"));
	cr_expect(nvml && strstr(nvml, "the NVIDIA driver is not loaded") &&
			  strstr(nvml, "(NVML error 9)"),
		  "%s", nvml ? nvml : "(null)");
	/* the unit's scope made no call that held anything: its figures are null, as a CPU unit's */
	unit = json_array_get(jget(r.manifest, "units"), 0);
	cr_assert_not_null(unit, "no unit: %s", r.err);
	cr_expect(json_is_null(jget(unit, "peak_gpu_bytes")));
	cr_expect(json_is_null(jget(unit, "gpu_context_bytes")));
	/* the process list nvml.c reads (the _v3 call, nvmlProcessInfo_v2_t's 24 bytes) is the
	 * newest the real library exports */
	snprintf(library, sizeof(library), "%s/libnvidia-ml.so.1", real_driver_dir);
	real_nvml = dlopen(library, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(real_nvml, "%s", dlerror());
	cr_expect_not_null(dlsym(real_nvml, "nvmlDeviceGetComputeRunningProcesses_v3"));
	cr_expect_null(dlsym(real_nvml, "nvmlDeviceGetComputeRunningProcesses_v4"),
		       "a newer process list than nvml.c reads");
	dlclose(real_nvml);
	um_result_free(&r);
}
