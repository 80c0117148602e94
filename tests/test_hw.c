// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Hardware capture: parsers on fixture copies of /proc and /sys, the live record against values
 * read independently here. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "helpers.h"
#include "trace/hw.h"

Test(hw, vm_without_cpufreq)
{
	const char *root = fixture("hw/vm");
	json_t *hw = hw_capture(root);

	cr_expect_str_eq(json_string_value(jget(hw, "cpu_model")), "AMD EPYC");
	cr_expect_eq(jnum(hw, "logical_cores"), 2);
	cr_expect_eq(jnum(hw, "physical_cores"), 2);
	cr_expect(json_is_null(jget(hw, "cpu_freq_mhz")), "a VM without cpufreq has no max frequency");
	cr_expect_eq(jnum(hw, "total_memory_bytes"), 24683584.0 * 1024);
	cr_expect_eq(jnum(hw, "available_memory_bytes"), 24368276.0 * 1024);
	cr_expect(json_is_true(jget(hw, "btf")));
	cr_expect(json_is_null(jget(hw, "python_version")));
	cr_expect_eq(json_array_size(jget(hw, "blas")), 0);
	cr_expect(json_is_null(jget(hw, "gpus")), "a fixture tree has no GPU to ask NVML about");
	json_decref(hw);
}

Test(hw, laptop_with_smt_and_boost)
{
	json_t *hw = hw_capture(fixture("hw/laptop"));

	cr_expect_str_eq(json_string_value(jget(hw, "cpu_model")),
			 "Intel(R) Core(TM) i7-8565U CPU @ 1.80GHz");
	cr_expect_eq(jnum(hw, "logical_cores"), 4);
	cr_expect_eq(jnum(hw, "physical_cores"), 2, "SMT siblings share a core");
	cr_expect_eq(jnum(hw, "cpu_freq_mhz"), 4600.0, "the fastest core's max frequency");
	cr_expect(json_is_false(jget(hw, "btf")));
	json_decref(hw);
}

Test(hw, odd_machine_falls_back_and_says_null)
{
	json_t *hw = hw_capture(fixture("hw/odd"));

	cr_expect(json_is_null(jget(hw, "cpu_model")));
	cr_expect(json_is_null(jget(hw, "available_memory_bytes")), "no MemAvailable: null, not 0");
	cr_expect_eq(jnum(hw, "total_memory_bytes"), 2048000.0 * 1024);
	cr_expect_eq(jnum(hw, "logical_cores"), 4, "counted from /proc/cpuinfo without the online file");
	cr_expect_eq(jnum(hw, "physical_cores"), 2, "two sockets of one core each, from /proc/cpuinfo");
	cr_expect(json_is_null(jget(hw, "cpu_freq_mhz")));
	json_decref(hw);
}

Test(hw, missing_tree_gives_nulls_not_errors)
{
	json_t *hw = hw_capture("/nonexistent-unitmeter-root");

	cr_expect(json_is_null(jget(hw, "cpu_model")));
	cr_expect(json_is_null(jget(hw, "logical_cores")));
	cr_expect(json_is_null(jget(hw, "physical_cores")));
	cr_expect(json_is_null(jget(hw, "total_memory_bytes")));
	json_decref(hw);
}

/* arm64's /proc/cpuinfo has no model name: the core is named from MIDR implementer and part. */
Test(hw, arm64_core_named_from_implementer_and_part)
{
	static const char grace[] = "processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd\n"
				    "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\n"
				    "CPU part\t: 0xd4f\nCPU revision\t: 0\n\nprocessor\t: 1\n";
	static const char unknown[] = "CPU implementer\t: 0x41\nCPU part\t: 0xfff\n";
	static const char vendor[] = "CPU implementer\t: 0x00\nCPU part\t: 0x051\n";
	static const char x86[] = "processor\t: 0\nmodel name\t: AMD EPYC 9654\n";
	char *names[] = { hw_parse_cpu_model(grace), hw_parse_cpu_model(unknown),
			  hw_parse_cpu_model(vendor), hw_parse_cpu_model(x86),
			  hw_parse_cpu_model("CPU part\t: 0xd4f\n") };

	cr_expect_str_eq(names[0], "ARM Neoverse-V2");
	cr_expect_str_eq(names[1], "ARM part 0xfff");
	cr_expect_str_eq(names[2], "implementer 0x00 part 0x051");
	cr_expect_str_eq(names[3], "AMD EPYC 9654");
	cr_expect_null(names[4], "a part without its implementer names nothing: %s", names[4]);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		free(names[i]);
}

Test(hw, cpu_list_parser)
{
	cr_expect_eq(hw_parse_cpu_list_count("0-3,5,7-8\n"), 7);
	cr_expect_eq(hw_parse_cpu_list_count("0\n"), 1);
	cr_expect_eq(hw_parse_cpu_list_count("3-1"), -1);
	cr_expect_eq(hw_parse_cpu_list_count("x"), -1);
	cr_expect_eq(hw_parse_cpu_list_count(""), -1);
}

Test(hw, thread_env_from_an_environment_block)
{
	char *env[] = { "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=", "PATH=/bin", NULL };
	json_t *t = hw_thread_env(env);

	cr_expect_str_eq(json_string_value(jget(t, "OMP_NUM_THREADS")), "1");
	cr_expect_str_eq(json_string_value(jget(t, "MKL_NUM_THREADS")), "");
	cr_expect(json_is_null(jget(t, "OPENBLAS_NUM_THREADS")));
	cr_expect_eq(json_object_size(t), 5);
	json_decref(t);
}

/* `unitmeter hw` on this machine, against sysconf, sysinfo and uname read here. */
Test(hw, live_record_matches_the_machine)
{
	const char *args[] = { "hw", NULL };
	struct sysinfo si;
	struct utsname u;
	json_t *hw;

	hw = um_run_json(args);
	sysinfo(&si);
	uname(&u);
	cr_expect_eq(jnum(hw, "logical_cores"), sysconf(_SC_NPROCESSORS_ONLN));
	cr_expect_eq(jnum(hw, "total_memory_bytes"), (double)si.totalram * si.mem_unit);
	cr_expect_str_eq(json_string_value(jget(hw, "kernel_release")), u.release);
	cr_expect_str_eq(json_string_value(jget(hw, "hostname")), u.nodename);
	cr_expect_str_eq(json_string_value(jget(hw, "architecture")), u.machine);
	cr_expect_str_eq(json_string_value(jget(hw, "system")), "Linux");
	cr_expect_eq(json_is_true(jget(hw, "btf")), access("/sys/kernel/btf/vmlinux", R_OK) == 0);
	cr_expect_leq(jnum(hw, "physical_cores"), jnum(hw, "logical_cores"));
	json_decref(hw);
}

/* In unitmeter's process before its exec: the fake NVML (tools/workloads/gpu/fake_nvml.c). */
static void with_fake_nvml(void)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/fakenvml",
		 getenv("WORKLOADS") ? getenv("WORKLOADS") : ".output/workloads");
	setenv("LD_LIBRARY_PATH", dir, 1);
}

/* The GPUs are what NVML lists: the fake's one device, its name and memory. */
Test(hw, gpus_listed_by_nvml)
{
	const char *args[] = { "hw", NULL };
	struct um_result r;
	json_t *hw, *gpus, *g;

	um_run_with(&r, false, args, with_fake_nvml);
	cr_assert_eq(r.status, 0, "%s", r.err);
	hw = json_loads(r.out, 0, NULL);
	cr_assert_not_null(hw, "no JSON on stdout: %s", r.out);
	gpus = jget(hw, "gpus");
	cr_assert(json_is_array(gpus), "gpus is not a list");
	cr_assert_eq(json_array_size(gpus), 1);
	g = json_array_get(gpus, 0);
	cr_expect_eq(jnum(g, "index"), 0);
	cr_expect_str_eq(json_string_value(jget(g, "name")), "Fake GPU 80GB");
	cr_expect_eq(jnum(g, "memory_total_bytes"), 80.0 * 1024 * 1024 * 1024);
	json_decref(hw);
	um_result_free(&r);
}

Test(hw, gpus_null_without_nvml)
{
	const char *args[] = { "hw", NULL };
	void *real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	json_t *hw;

	if (real) {
		dlclose(real);
		cr_skip_test("this machine has a libnvidia-ml.so.1");
	}
	hw = um_run_json(args);
	cr_expect(json_is_null(jget(hw, "gpus")));
	json_decref(hw);
}
