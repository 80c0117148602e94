// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which build of the programs a kernel takes, and the one line that says why none, from the
 * features read off the kernels of the matrix (tools/vm): the live ones run in make vmtest.
 */
#include <criterion/criterion.h>
#include <string.h>
#include "helpers.h"
#include "trace/kernel.h"

/* What Debian 11's 5.10 offers (read in its guest by unitmeter check). */
static struct kernel_features debian_5_10(void)
{
	struct kernel_features k = {
		.release = "5.10.0-46-amd64", .root = true, .btf = true, .tracefs = true,
		.lockdown = "none", .ringbuf = true, .thread_rss_caches = true,
		.fault_hook = FAULT_HOOK_FEXIT,
	};
	return k;
}

/* Debian 12's 6.1: every newer BPF feature but the kfunc, and the old mm counters. */
static struct kernel_features debian_6_1(void)
{
	struct kernel_features k = debian_5_10();

	snprintf(k.release, sizeof(k.release), "6.1.0-57-amd64");
	k.fetch_atomics = k.task_storage = k.current_task_btf = k.attach_cookie = true;
	k.bpf_loop = k.percpu_lookup = true;
	return k;
}

/* Ubuntu 22.04's 5.15: the BPF of 6.1 but bpf_loop (5.17), and the old mm counters. */
static struct kernel_features ubuntu_5_15(void)
{
	struct kernel_features k = debian_6_1();

	snprintf(k.release, sizeof(k.release), "5.15.0-160-generic");
	k.bpf_loop = k.percpu_lookup = false;
	return k;
}

/* 6.12 and this machine's 6.18: per-CPU mm counters, no thread caches. */
static struct kernel_features kernel_6_18(void)
{
	struct kernel_features k = debian_6_1();

	snprintf(k.release, sizeof(k.release), "6.18.44");
	k.per_cpu_mm_counters = true;
	k.thread_rss_caches = false;
	k.kfunc_rdonly_cast = true;
	return k;
}

static void expect_refused(struct kernel_features k, const char *says)
{
	kernel_choose_build(&k);
	cr_expect_eq(k.build, KERNEL_BUILD_NONE);
	cr_expect(strstr(k.refusal, says), "refusal '%s' lacks '%s'", k.refusal, says);
	cr_expect(!strchr(k.refusal, '\n'), "one line: '%s'", k.refusal);
}

Test(kernel, each_kernel_of_the_matrix_takes_its_build)
{
	struct kernel_features k;

	k = debian_5_10();
	kernel_choose_build(&k);
	cr_expect_eq(k.build, KERNEL_BUILD_BASELINE, "5.10: %s", k.refusal);
	k = debian_6_1();
	kernel_choose_build(&k);
	cr_expect_eq(k.build, KERNEL_BUILD_THREAD_CACHE, "6.1: %s", k.refusal);
	/* Debian 12's arm64 6.1: no ftrace direct calls, so fexit refused and the kretprobe hook */
	k = debian_6_1();
	snprintf(k.release, sizeof(k.release), "6.1.0-57-arm64");
	k.fault_hook = FAULT_HOOK_KRETPROBE;
	kernel_choose_build(&k);
	cr_expect_eq(k.build, KERNEL_BUILD_THREAD_CACHE, "6.1 arm64: %s", k.refusal);
	/* without bpf_loop the thread-cache build's waits cannot be verified: the baseline */
	k = ubuntu_5_15();
	kernel_choose_build(&k);
	cr_expect_eq(k.build, KERNEL_BUILD_BASELINE, "5.15: %s", k.refusal);
	k = kernel_6_18();
	kernel_choose_build(&k);
	cr_expect_eq(k.build, KERNEL_BUILD_PER_CPU, "6.18: %s", k.refusal);
}

Test(kernel, what_cannot_be_served_is_said_in_one_line)
{
	struct kernel_features k;

	k = debian_5_10();
	k.root = false;
	expect_refused(k, "run it as root or with sudo");
	k = debian_5_10();
	k.btf = false;
	expect_refused(k, "CONFIG_DEBUG_INFO_BTF=y");
	k = debian_5_10();
	k.tracefs = false;
	expect_refused(k, "mount -t tracefs nodev /sys/kernel/tracing");
	k = debian_5_10();
	snprintf(k.lockdown, sizeof(k.lockdown), "confidentiality");
	expect_refused(k, "lockdown=integrity");
	/* before 5.8 (a 5.4 with BTF): no ring buffer */
	k = debian_5_10();
	k.ringbuf = false;
	expect_refused(k, "5.10 or later");
	/* per-CPU counters without the kfunc that reads them */
	k = kernel_6_18();
	k.kfunc_rdonly_cast = false;
	expect_refused(k, "bpf_rdonly_cast");
	/* thread caches that cannot be read where they change */
	k = debian_5_10();
	k.fault_hook = FAULT_HOOK_NONE;
	expect_refused(k, "handle_mm_fault");
}

/* The live kernel: check's verdict and its exit status agree with the build it chose. */
Test(kernel, check_on_this_machine_loads_and_attaches, .init = require_tracing)
{
	char cmd[512], out[8192] = "";
	const char *cost;
	FILE *p;
	size_t n;
	int status;

	snprintf(cmd, sizeof(cmd), "%s check 2>&1", unitmeter_bin());
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	status = pclose(p);
	cr_expect_eq(WEXITSTATUS(status), 0, "%s", out);
	cr_expect(strstr(out, "trial: loaded and attached, then detached"), "%s", out);
	cr_expect(strstr(out, "verdict: unitmeter works here"), "%s", out);
	/* what each fault hook costs, measured, agrees with the one the trial chose */
	cost = strstr(out, "a page fault; what a hook adds (empty body)");
	cr_assert_not_null(cost, "%s", out);
	if (strstr(out, "(attached)     fexit\n")) {
		cr_expect(strstr(cost, "; fexit +") || strstr(cost, "; fexit -"), "%s", out);
	} else if (strstr(out, "(attached)     kretprobe")) {
		cr_expect(strstr(cost, "; fexit refused; kretprobe +") ||
				  strstr(cost, "; fexit refused; kretprobe -"), "%s", out);
	}
	cr_expect(!strstr(cost, "nan"), "%s", out);
}
