// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "common/manifest_keys.h"
#include "common/fileio.h"
#include "trace/arm_cpu.h"
#include "trace/hw.h"
#include "trace/nvml.h"

extern char **environ;

/* The variables that size BLAS and OpenMP thread pools, as the seed records them. */
static const char *const thread_env_vars[] = {
	"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
	"VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS",
};

/* The value of "key : value" lines as /proc/cpuinfo writes them, or NULL. */
static char *cpuinfo_value(const char *line, const char *key)
{
	size_t klen = strlen(key);
	const char *p;

	if (strncmp(line, key, klen) != 0)
		return NULL;
	p = line + klen;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (*p == ' ')
		p++;
	return strndup(p, strcspn(p, "\n"));
}

/* A "key : 0x.." line's number, or -1. */
static long cpuinfo_number(const char *line, const char *key)
{
	char *v = cpuinfo_value(line, key), *end = NULL;
	long n = v ? strtol(v, &end, 0) : -1;

	if (!v || end == v || n < 0)
		n = -1;
	free(v);
	return n;
}

char *hw_parse_cpu_model(const char *cpuinfo)
{
	const char *line = cpuinfo;
	long implementer = -1, part = -1;

	while (line && *line) {
		char *v = cpuinfo_value(line, "model name");

		if (!v)
			v = cpuinfo_value(line, "Model"); /* some arm64 boards' device tree name */
		if (v && *v)
			return v;
		free(v);
		/* arm64 writes no model name: the first CPU's MIDR fields name its core */
		if (implementer < 0)
			implementer = cpuinfo_number(line, "CPU implementer");
		if (part < 0)
			part = cpuinfo_number(line, "CPU part");
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return implementer >= 0 && part >= 0 ? arm_cpu_name(implementer, part) : NULL;
}

int hw_parse_meminfo_bytes(const char *meminfo, const char *key, int64_t *bytes)
{
	size_t klen = strlen(key);
	const char *line = meminfo;

	while (line && *line) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			char *end;
			long long kib = strtoll(line + klen + 1, &end, 10);

			if (end == line + klen + 1 || kib < 0)
				return -EINVAL;
			*bytes = (int64_t)kib * 1024;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

/* "0-3,5,7-8" -> 7; -1 when malformed. */
int hw_parse_cpu_list_count(const char *list)
{
	const char *p = list;
	int count = 0;

	while (*p && *p != '\n') {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p || lo < 0)
			return -1;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				return -1;
			p = end;
		}
		count += (int)(hi - lo + 1);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return count ? count : -1;
}

/* Distinct (physical id, core id) pairs in /proc/cpuinfo; -1 when it does not give them. */
int hw_count_cpuinfo_cores(const char *cpuinfo)
{
	long pairs[4096][2];
	int n = 0;
	long phys = -1, core = -1;
	const char *line = cpuinfo;

	while (line) {
		char *v;
		bool end_of_cpu = (*line == '\n' || *line == '\0');

		if ((v = cpuinfo_value(line, "physical id")))
			phys = strtol(v, NULL, 10);
		else if ((v = cpuinfo_value(line, "core id")))
			core = strtol(v, NULL, 10);
		free(v);
		if (end_of_cpu && phys >= 0 && core >= 0) {
			int i;

			for (i = 0; i < n; i++)
				if (pairs[i][0] == phys && pairs[i][1] == core)
					break;
			if (i == n && n < 4096) {
				pairs[n][0] = phys;
				pairs[n][1] = core;
				n++;
			}
			phys = core = -1;
		}
		if (*line == '\0')
			break;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return n ? n : -1;
}

int hw_logical_cores(const char *root)
{
	char *online = um_read_text_at(root, "/sys/devices/system/cpu/online");
	int n = -1;

	if (online) {
		n = hw_parse_cpu_list_count(online);
		free(online);
	}
	if (n < 0) {
		char *cpuinfo = um_read_text_at(root, "/proc/cpuinfo");
		const char *line = cpuinfo;

		n = 0;
		while (line && *line) {
			if (strncmp(line, "processor", 9) == 0)
				n++;
			line = strchr(line, '\n');
			if (line)
				line++;
		}
		free(cpuinfo);
		if (!n)
			n = -1;
	}
	return n;
}

static long read_long_at(const char *root, const char *path)
{
	char *text = um_read_text_at(root, path);
	long v = -1;

	if (text) {
		char *end;

		v = strtol(text, &end, 10);
		if (end == text)
			v = -1;
		free(text);
	}
	return v;
}

static int is_cpu_dir(const char *name)
{
	if (strncmp(name, "cpu", 3) != 0 || !name[3])
		return 0;
	for (const char *p = name + 3; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

int hw_physical_cores(const char *root)
{
	char dir[4096], path[4352];
	long pairs[4096][2];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/sys/devices/system/cpu", root);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		long pkg, core;
		int i;

		if (!is_cpu_dir(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s/topology/physical_package_id",
			 de->d_name);
		pkg = read_long_at(root, path);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s/topology/core_id", de->d_name);
		core = read_long_at(root, path);
		if (pkg < 0 || core < 0)
			continue;
		for (i = 0; i < n; i++)
			if (pairs[i][0] == pkg && pairs[i][1] == core)
				break;
		if (i == n && n < 4096) {
			pairs[n][0] = pkg;
			pairs[n][1] = core;
			n++;
		}
	}
	if (d)
		closedir(d);
	if (!n) {
		char *cpuinfo = um_read_text_at(root, "/proc/cpuinfo");

		n = cpuinfo ? hw_count_cpuinfo_cores(cpuinfo) : -1;
		free(cpuinfo);
	}
	return n > 0 ? n : -1;
}

/* The highest cpuinfo_max_freq of any CPU, as psutil.cpu_freq().max; -1 without cpufreq (VMs). */
double hw_max_freq_mhz(const char *root)
{
	char dir[4096], path[4352];
	struct dirent *de;
	long best = -1;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/sys/devices/system/cpu", root);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		long khz;

		if (!is_cpu_dir(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s/cpufreq/cpuinfo_max_freq",
			 de->d_name);
		khz = read_long_at(root, path);
		if (khz > best)
			best = khz;
	}
	if (d)
		closedir(d);
	return best > 0 ? best / 1000.0 : -1.0;
}

json_t *hw_thread_env(char *const *envp)
{
	json_t *env = json_object();
	size_t nvars = sizeof(thread_env_vars) / sizeof(thread_env_vars[0]);

	if (!envp)
		envp = environ;
	for (size_t i = 0; i < nvars; i++) {
		size_t len = strlen(thread_env_vars[i]);
		json_t *value = json_null();

		for (char *const *e = envp; e && *e; e++) {
			if (strncmp(*e, thread_env_vars[i], len) == 0 && (*e)[len] == '=') {
				json_decref(value);
				value = json_string(*e + len + 1);
				break;
			}
		}
		json_object_set_new(env, thread_env_vars[i], value ? value : json_null());
	}
	return env;
}

static json_t *int_or_null(long long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

static json_t *string_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

/*
 * The GPUs NVML lists (index, name, memory total), read-only; null without NVML, and for a tree
 * other than the live machine's (a fixture has no GPU to ask about).
 */
static json_t *gpus(const char *root)
{
	char why[160];
	struct nvml *n;
	json_t *list;

	if (root[0])
		return json_null();
	n = nvml__open(why, sizeof(why));
	if (!n)
		return json_null();
	list = nvml__devices(n);
	nvml__close(n);
	return list ? list : json_null();
}

json_t *hw_capture(const char *root)
{
	json_t *hw = json_object();
	char *cpuinfo = um_read_text_at(root, "/proc/cpuinfo");
	char *meminfo = um_read_text_at(root, "/proc/meminfo");
	char *model = cpuinfo ? hw_parse_cpu_model(cpuinfo) : NULL;
	int64_t total = -1, avail = -1;
	double mhz = hw_max_freq_mhz(root);
	char platform[512], btf_path[4096];
	struct utsname u;
	bool have_uname = uname(&u) == 0;

	if (meminfo) {
		hw_parse_meminfo_bytes(meminfo, "MemTotal", &total);
		hw_parse_meminfo_bytes(meminfo, "MemAvailable", &avail);
	}
	json_object_set_new(hw, UM_HW_CPU_MODEL, string_or_null(model));
	json_object_set_new(hw, UM_HW_ARCHITECTURE, string_or_null(have_uname ? u.machine : NULL));
	json_object_set_new(hw, UM_HW_PHYSICAL_CORES, int_or_null(hw_physical_cores(root)));
	json_object_set_new(hw, UM_HW_LOGICAL_CORES, int_or_null(hw_logical_cores(root)));
	/* the seed rounds the MHz to one decimal */
	json_object_set_new(hw, UM_HW_CPU_FREQ_MHZ,
			    mhz > 0 ? json_real((double)(long long)(mhz * 10 + 0.5) / 10) : json_null());
	json_object_set_new(hw, UM_HW_TOTAL_MEMORY_BYTES, int_or_null(total));
	json_object_set_new(hw, UM_HW_AVAILABLE_MEMORY_BYTES, int_or_null(avail));
	json_object_set_new(hw, UM_HW_HOSTNAME, string_or_null(have_uname ? u.nodename : NULL));
	/* as Python's platform.platform() writes it on Linux */
	if (have_uname) {
		snprintf(platform, sizeof(platform), "%s-%s-%s-with-glibc%s", u.sysname, u.release,
			 u.machine, gnu_get_libc_version());
		json_object_set_new(hw, UM_HW_PLATFORM, json_string(platform));
	} else {
		json_object_set_new(hw, UM_HW_PLATFORM, json_null());
	}
	json_object_set_new(hw, UM_HW_SYSTEM, string_or_null(have_uname ? u.sysname : NULL));
	/* filled from the traced target, when there is one and it is CPython */
	json_object_set_new(hw, UM_HW_PYTHON_VERSION, json_null());
	json_object_set_new(hw, UM_HW_BLAS, json_array());
	json_object_set_new(hw, UM_HW_THREAD_ENV, hw_thread_env(NULL));
	json_object_set_new(hw, UM_HW_KERNEL_RELEASE, string_or_null(have_uname ? u.release : NULL));
	snprintf(btf_path, sizeof(btf_path), "%s/sys/kernel/btf/vmlinux", root);
	json_object_set_new(hw, UM_HW_BTF, json_boolean(access(btf_path, R_OK) == 0));
	json_object_set_new(hw, UM_HW_GPUS, gpus(root));
	free(model);
	free(cpuinfo);
	free(meminfo);
	return hw;
}
