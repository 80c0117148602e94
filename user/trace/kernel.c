// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "common/fileio.h"
#include "trace/kernel.h"
#include "trace/uprobe_link.h"

/* CapEff bits from /proc/self/status: CAP_PERFMON is 38, CAP_BPF 39. */
static bool has_bpf_caps(void)
{
	char *status = um_read_text("/proc/self/status");
	const char *line = status ? strstr(status, "CapEff:") : NULL;
	unsigned long long caps = 0;

	if (line)
		caps = strtoull(line + 7, NULL, 16);
	free(status);
	return (caps & (1ULL << 38)) && (caps & (1ULL << 39));
}

/*
 * The kind of a struct member's type (typedefs and qualifiers skipped), looking inside anonymous
 * structs and unions as C does (mm_struct keeps its fields in one); -1 when absent.
 */
static int member_kind_in(const struct btf *btf, const struct btf_type *t, const char *member_name,
			  int depth)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);
		const struct btf_type *mt = btf__type_by_id(btf, btf__resolve_type(btf, m->type));

		if (!mt)
			continue;
		if (name && *name && strcmp(name, member_name) == 0)
			return btf_kind(mt);
		if ((!name || !*name) && (btf_is_struct(mt) || btf_is_union(mt)) && depth < 4) {
			int kind = member_kind_in(btf, mt, member_name, depth + 1);

			if (kind >= 0)
				return kind;
		}
	}
	return -1;
}

static int member_kind(const struct btf *btf, const char *type_name, const char *member_name)
{
	int id = btf__find_by_name_kind(btf, type_name, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;

	return t ? member_kind_in(btf, t, member_name, 0) : -1;
}

/* The lockdown mode in force, from "none [integrity] confidentiality". */
static void read_lockdown(char *mode, size_t size)
{
	char *text = um_read_text("/sys/kernel/security/lockdown");
	char *open = text ? strchr(text, '[') : NULL, *close = open ? strchr(open, ']') : NULL;

	snprintf(mode, size, "none");
	if (open && close && (size_t)(close - open - 1) < size)
		snprintf(mode, size, "%.*s", (int)(close - open - 1), open + 1);
	free(text);
}

/*
 * Whether the verifier takes an atomic fetch-add (BPF_ATOMIC with BPF_FETCH, 5.12): a socket
 * filter that adds to a stack slot and returns 0. Older kernels refuse the instruction's form.
 */
static bool probe_fetch_atomics(void)
{
	const struct bpf_insn insns[] = {
		/* *(u64 *)(r10 - 8) = 0 */
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		/* r1 = 1 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		/* r1 = atomic_fetch_add((u64 *)(r10 - 8), r1) */
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8, .imm = BPF_ADD | BPF_FETCH },
		/* r0 = 0; exit */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static bool has_helper(enum bpf_func_id helper)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, helper, NULL) == 1;
}

void kernel_choose_build(struct kernel_features *k)
{
	static const char *const tested = "unitmeter is tested on Linux 5.10, 6.1, 6.12 and 6.18";
	char *why = k->refusal;
	size_t size = sizeof(k->refusal);

	k->build = KERNEL_BUILD_NONE;
	if (!k->root)
		snprintf(why, size, "tracing needs root, or CAP_BPF and CAP_PERFMON: run it as root "
			 "or with sudo");
	else if (!k->btf)
		snprintf(why, size, "kernel %s has no BTF (/sys/kernel/btf/vmlinux is missing): "
			 "unitmeter needs a kernel built with CONFIG_DEBUG_INFO_BTF=y, as Debian's, "
			 "Ubuntu's and RHEL's are from 5.10 / 5.15 / 5.14 on", k->release);
	else if (!k->tracefs)
		snprintf(why, size, "tracefs is not mounted at /sys/kernel/tracing (where the kernel's "
			 "kmem:rss_stat tracepoint, which the memory program attaches to, is checked "
			 "for): mount it with 'mount -t tracefs nodev /sys/kernel/tracing'");
	else if (strcmp(k->lockdown, "confidentiality") == 0)
		snprintf(why, size, "kernel lockdown is in confidentiality mode, which forbids BPF "
			 "programs to read kernel memory: boot with lockdown=integrity or none (or "
			 "without Secure Boot's lockdown) to trace here");
	else if (!k->ringbuf)
		snprintf(why, size, "kernel %s has no BPF ring buffer (Linux 5.8 added it): "
			 "unitmeter needs 5.10 or later; %s", k->release, tested);
	else if (k->per_cpu_mm_counters && k->fetch_atomics && k->task_storage &&
		 k->current_task_btf && k->attach_cookie && k->percpu_lookup && k->kfunc_rdonly_cast)
		k->build = KERNEL_BUILD_PER_CPU;
	else if (k->per_cpu_mm_counters)
		snprintf(why, size, "kernel %s keeps per-CPU mm counters but lacks %s, which reading "
			 "them needs; %s", k->release,
			 !k->kfunc_rdonly_cast ? "the kfunc bpf_rdonly_cast" :
			 !k->percpu_lookup ? "bpf_map_lookup_percpu_elem" :
			 !k->fetch_atomics ? "BPF atomic fetch operations" :
			 !k->task_storage ? "task storage maps" :
			 !k->attach_cookie ? "BPF attach cookies" : "bpf_get_current_task_btf",
			 tested);
	else if (k->thread_rss_caches && k->fault_hook == FAULT_HOOK_NONE)
		snprintf(why, size, "kernel %s caches RSS changes in each thread, and neither fexit "
			 "nor a kretprobe attaches to handle_mm_fault, where they change; %s",
			 k->release, tested);
	else if (k->fetch_atomics && k->task_storage && k->current_task_btf && k->attach_cookie &&
		 k->bpf_loop)
		k->build = KERNEL_BUILD_THREAD_CACHE;
	else
		k->build = KERNEL_BUILD_BASELINE;
}

bool kernel_build_has_bpf_of_5_17(enum kernel_build build)
{
	return build == KERNEL_BUILD_PER_CPU || build == KERNEL_BUILD_THREAD_CACHE;
}

/* Read once per process: the precheck and the tracer both ask, and the probes load programs. */
/* A setting that overrode the kernel's choice, kept for the load's error (k->forced). */
static void note_forced(struct kernel_features *k, const char *name, const char *value)
{
	size_t used = strlen(k->forced);

	snprintf(k->forced + used, sizeof(k->forced) - used, "%s%s=%s", used ? " " : "", name, value);
}

/*
 * The choice an environment setting forces: the index of names (the choices' own names, NULL
 * where none) that env holds, noted in k->forced for the load's error; -1 when env is unset
 * or names none of them.
 */
static int forced_choice(struct kernel_features *k, const char *env, const char *const *names,
			 int n)
{
	const char *value = getenv(env);

	for (int i = 0; value && i < n; i++)
		if (names[i] && !strcmp(value, names[i])) {
			note_forced(k, env, value);
			return i;
		}
	return -1;
}

/*
 * UNITMETER_BUILD=per-cpu|thread-cache|baseline loads that build whatever the kernel offers: for
 * testing that the matrix catches the wrong one (make vmtest), never needed to trace.
 * UNITMETER_FAULT_HOOK=fexit|kretprobe loads that hook whatever the trial said: for testing that
 * the matrix catches the wrong one (fexit on arm64 before 6.4) and that the other is exact.
 * UNITMETER_SYSCALL_HOOKS=functions|tracepoints loads those hooks whatever the kernel offers:
 * for the bench's comparison, and for testing that both count alike where both attach.
 */
static void force_choices(struct kernel_features *k)
{
	const char *const builds[] = { NULL, kernel_build_name(KERNEL_BUILD_PER_CPU),
				       kernel_build_name(KERNEL_BUILD_THREAD_CACHE),
				       kernel_build_name(KERNEL_BUILD_BASELINE) };
	const char *const fault_hooks[] = { NULL, fault_hook_name(FAULT_HOOK_FEXIT),
					    fault_hook_name(FAULT_HOOK_KRETPROBE) };
	const char *const syscall_hooks[] = { syscall_hooks_name(SYSCALL_HOOKS_FUNCTIONS),
					      syscall_hooks_name(SYSCALL_HOOKS_TRACEPOINTS) };
	int choice;

	if (k->build != KERNEL_BUILD_NONE) {
		choice = forced_choice(k, "UNITMETER_BUILD", builds, 4);
		if (choice >= 0)
			k->build = (enum kernel_build)choice;
		choice = forced_choice(k, "UNITMETER_FAULT_HOOK", fault_hooks, 3);
		if (choice >= 0)
			k->fault_hook = (enum fault_hook)choice;
	}
	choice = forced_choice(k, "UNITMETER_SYSCALL_HOOKS", syscall_hooks, 2);
	if (choice >= 0)
		k->syscall_hooks = (enum syscall_hooks)choice;
}

/*
 * What the probes and the BTF said, kept until the next boot: they cannot change while the
 * kernel runs, and reading them again (the kernel's BTF is parsed, ~10 ms, and libbpf parses it
 * again to load) is most of a traced command's set-up. Keyed by the boot id and the release;
 * written by root only, in a directory only root may enter. UNITMETER_FEATURE_CACHE names
 * another file (the tests), "" none.
 */
#define FEATURE_CACHE_DIR "/run/unitmeter"
#define FEATURE_CACHE FEATURE_CACHE_DIR "/kernel-features"

static const char *cache_path(void)
{
	const char *path = getenv("UNITMETER_FEATURE_CACHE");

	return path ? (*path ? path : NULL) : FEATURE_CACHE;
}

static bool boot_id(char *id, size_t len)
{
	char *text = um_read_text("/proc/sys/kernel/random/boot_id");

	if (!text)
		return false;
	text[strcspn(text, "\n")] = '\0';
	snprintf(id, len, "%s", text);
	free(text);
	return *id != '\0';
}

/* The probed features the record keeps, in its order (a digit each, then the fault hook). */
#define CACHED_FEATURES 13

static void cached_features(struct kernel_features *k, bool *fields[CACHED_FEATURES])
{
	bool *all[CACHED_FEATURES] = { &k->ringbuf, &k->task_storage, &k->fetch_atomics,
				       &k->current_task_btf, &k->attach_cookie, &k->percpu_lookup,
				       &k->per_cpu_mm_counters, &k->thread_rss_caches,
				       &k->kfunc_rdonly_cast, &k->uprobe_multi, &k->bpf_loop,
				       &k->fexit, &k->syscall_functions };

	memcpy(fields, all, sizeof(all));
}

/* The probed features, in one line, in a fixed order. */
static void cache_line(struct kernel_features *k, const char *boot, char *line, size_t len)
{
	char bits[CACHED_FEATURES + 2];
	bool *fields[CACHED_FEATURES];

	cached_features(k, fields);
	for (size_t i = 0; i < CACHED_FEATURES; i++)
		bits[i] = *fields[i] ? '1' : '0';
	bits[CACHED_FEATURES] = (char)('0' + k->fault_hook);
	bits[CACHED_FEATURES + 1] = '\0';
	snprintf(line, len, "unitmeter-kernel-features 5 %s %s %s\n", boot, k->release, bits);
}

static bool fresh_read;

void kernel_features_fresh(void)
{
	fresh_read = true;
}

static bool cache_read(struct kernel_features *k)
{
	char boot[64], want_head[256], *text;
	const char *path = cache_path();
	struct stat st;
	size_t head_len;
	const char *bits;
	bool ok = false;

	if (fresh_read || !path || !boot_id(boot, sizeof(boot)) || stat(path, &st) || st.st_uid != 0 ||
	    (st.st_mode & 022))
		return false;
	text = um_read_text(path);
	if (!text)
		return false;
	snprintf(want_head, sizeof(want_head), "unitmeter-kernel-features 5 %s %s ", boot,
		 k->release);
	head_len = strlen(want_head);
	bits = text + head_len;
	/*
	 * The features (0 or 1 each), the fault hook (enum fault_hook, one digit), the line's end.
	 * The hook's digit may be a 0 or a 1 too: the features are the first CACHED_FEATURES of the
	 * span, not all of it (all of it refused every record with those hooks).
	 */
	if (!strncmp(text, want_head, head_len) && strspn(bits, "01") >= CACHED_FEATURES &&
	    bits[CACHED_FEATURES] >= '0' + FAULT_HOOK_NONE &&
	    bits[CACHED_FEATURES] <= '0' + FAULT_HOOK_KRETPROBE &&
	    (bits[CACHED_FEATURES + 1] == '\n' || bits[CACHED_FEATURES + 1] == '\0')) {
		bool *fields[CACHED_FEATURES];

		cached_features(k, fields);
		for (size_t i = 0; i < CACHED_FEATURES; i++)
			*fields[i] = bits[i] == '1';
		k->fault_hook = (enum fault_hook)(bits[CACHED_FEATURES] - '0');
		ok = true;
	}
	free(text);
	return ok;
}

static void cache_write(struct kernel_features *k)
{
	char boot[64], line[256];
	const char *path = cache_path();
	struct um_atomic_file af;

	if (!path || !boot_id(boot, sizeof(boot)))
		return;
	if (!strcmp(path, FEATURE_CACHE) && mkdir(FEATURE_CACHE_DIR, 0700) && errno != EEXIST)
		return;
	if (um_atomic_open(&af, path, 0644, 0, 0))
		return;
	cache_line(k, boot, line, sizeof(line));
	if (write(af.fd, line, strlen(line)) != (ssize_t)strlen(line)) {
		close(af.fd);
		um_atomic_abort(&af);
		return;
	}
	if (close(af.fd))
		um_atomic_abort(&af);
	else
		um_atomic_commit(&af);
}

void kernel_features_read(struct kernel_features *k)
{
	static struct kernel_features once;
	static bool read;
	struct btf *btf;
	struct utsname u;

	if (read) {
		*k = once;
		return;
	}
	memset(k, 0, sizeof(*k));
	if (uname(&u) == 0)
		snprintf(k->release, sizeof(k->release), "%s", u.release);
	k->root = geteuid() == 0 || has_bpf_caps();
	k->btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	k->tracefs = access("/sys/kernel/tracing/events/kmem/rss_stat", F_OK) == 0;
	read_lockdown(k->lockdown, sizeof(k->lockdown));
	if (k->root && cache_read(k))
		goto probed;
	if (k->root) {
		k->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
		k->task_storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1;
		k->fetch_atomics = probe_fetch_atomics();
		k->current_task_btf = has_helper(BPF_FUNC_get_current_task_btf);
		k->attach_cookie = has_helper(BPF_FUNC_get_attach_cookie);
		k->bpf_loop = has_helper(BPF_FUNC_loop);
		k->percpu_lookup = has_helper(BPF_FUNC_map_lookup_percpu_elem);
		k->uprobe_multi = uprobe_multi_supported();
	}
	btf = k->btf ? btf__load_vmlinux_btf() : NULL;
	if (btf) {
		k->per_cpu_mm_counters = member_kind(btf, "mm_struct", "rss_stat") == BTF_KIND_ARRAY;
		k->thread_rss_caches = member_kind(btf, "task_struct", "rss_stat") == BTF_KIND_STRUCT;
		k->kfunc_rdonly_cast = btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) > 0;
		k->syscall_functions = btf__find_by_name_kind(btf, "vfs_write", BTF_KIND_FUNC) > 0 &&
				       btf__find_by_name_kind(btf, "vfs_writev", BTF_KIND_FUNC) > 0 &&
				       btf__find_by_name_kind(btf, "kernel_clone", BTF_KIND_FUNC) > 0 &&
				       btf__find_by_name_kind(btf, "do_exit", BTF_KIND_FUNC) > 0;
		/* an attach is no BTF lookup: tried once a boot (the record below) */
		if (k->root)
			k->fexit = fault_hook_fexit_attaches();
		/* the kretprobe only where the builds with thread caches need a fault hook */
		if (k->root && k->thread_rss_caches)
			k->fault_hook = fault_hook_try(k->fexit);
		btf__free(btf);
		/* a fault hook's trial that failed is not kept: the next run tries again */
		if (k->root && !(k->thread_rss_caches && k->fault_hook == FAULT_HOOK_NONE))
			cache_write(k);
	}
probed:
	kernel_choose_build(k);
	k->syscall_hooks = k->fexit && k->syscall_functions ? SYSCALL_HOOKS_FUNCTIONS
							    : SYSCALL_HOOKS_TRACEPOINTS;
	force_choices(k);
	once = *k;
	read = true;
}

const char *kernel_build_name(enum kernel_build build)
{
	switch (build) {
	case KERNEL_BUILD_PER_CPU:
		return "per-cpu";
	case KERNEL_BUILD_THREAD_CACHE:
		return "thread-cache";
	case KERNEL_BUILD_BASELINE:
		return "baseline";
	default:
		return "none";
	}
}

const char *syscall_hooks_name(enum syscall_hooks hooks)
{
	return hooks == SYSCALL_HOOKS_FUNCTIONS ? "functions" : "tracepoints";
}

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

/* Where the builds before the per-CPU counters read each thread's cache, into text. */
static const char *thread_caches_read(const struct kernel_features *k, char *text, size_t size)
{
	if (!k->thread_rss_caches)
		return "no thread caches";
	snprintf(text, size, "each thread's RSS cache at switch-out and at the end of every page "
		 "fault (%s/handle_mm_fault)", fault_hook_name(k->fault_hook));
	return text;
}

void kernel_features_print(FILE *out, const struct kernel_features *k)
{
	char caches[128];

	fprintf(out, "kernel %s\n", k->release);
	fprintf(out, "  %-44s %s\n", "root (or CAP_BPF + CAP_PERFMON)", yes_no(k->root));
	fprintf(out, "  %-44s %s\n", "BTF (/sys/kernel/btf/vmlinux)", yes_no(k->btf));
	fprintf(out, "  %-44s %s\n", "tracefs (/sys/kernel/tracing)", yes_no(k->tracefs));
	fprintf(out, "  %-44s %s\n", "lockdown", k->lockdown);
	fprintf(out, "  %-44s %s\n", "BPF ring buffer", yes_no(k->ringbuf));
	fprintf(out, "  %-44s %s\n", "mm counters per CPU (mm->rss_stat)", yes_no(k->per_cpu_mm_counters));
	fprintf(out, "  %-44s %s\n", "RSS cached in each thread (task->rss_stat)",
		yes_no(k->thread_rss_caches));
	fprintf(out, "  %-44s %s\n", "hook on handle_mm_fault's end (attached)",
		k->fault_hook == FAULT_HOOK_FEXIT ? "fexit" :
		k->fault_hook == FAULT_HOOK_KRETPROBE ? "kretprobe (fexit refused: no ftrace direct "
							"calls; a trap per fault, slower)" :
		k->thread_rss_caches ? "none attaches" : "not needed (no thread caches)");
	fprintf(out, "  %-44s %s\n", "writes, forks and exits seen at",
		k->syscall_hooks == SYSCALL_HOOKS_FUNCTIONS ?
			"fexit/fentry of vfs_write, vfs_writev, kernel_clone, do_exit" :
		!k->fexit ? "the sys_enter/sys_exit tracepoints (fexit refused: every system call "
			    "of the node takes their slow path while a run traces)" :
		!k->syscall_functions ? "the sys_enter/sys_exit tracepoints (a function missing "
					"from the BTF: every system call of the node takes their "
					"slow path while a run traces)" :
					"the sys_enter/sys_exit tracepoints (UNITMETER_SYSCALL_HOOKS)");
	fprintf(out, "  %-44s %s\n", "BPF atomic fetch operations", yes_no(k->fetch_atomics));
	fprintf(out, "  %-44s %s\n", "task storage maps", yes_no(k->task_storage));
	fprintf(out, "  %-44s %s\n", "bpf_get_current_task_btf", yes_no(k->current_task_btf));
	fprintf(out, "  %-44s %s\n", "attach cookies", yes_no(k->attach_cookie));
	fprintf(out, "  %-44s %s\n", "bpf_loop", yes_no(k->bpf_loop));
	fprintf(out, "  %-44s %s\n", "bpf_map_lookup_percpu_elem", yes_no(k->percpu_lookup));
	fprintf(out, "  %-44s %s\n", "kfunc bpf_rdonly_cast", yes_no(k->kfunc_rdonly_cast));
	fprintf(out, "  %-44s %s\n", "multi-uprobe links", yes_no(k->uprobe_multi));
	switch (k->build) {
	case KERNEL_BUILD_PER_CPU:
		fprintf(out, "programs: the per-CPU build: each mm counter is read (every CPU's share) "
			"at each of its changes\n");
		break;
	case KERNEL_BUILD_THREAD_CACHE:
		fprintf(out, "programs: the thread-cache build: mm counters at each change, %s; "
			"atomics for shared counters\n", thread_caches_read(k, caches, sizeof(caches)));
		break;
	case KERNEL_BUILD_BASELINE:
		fprintf(out, "programs: the baseline build: mm counters at each change, %s; one lock "
			"for shared counters, one entry program per unit spec\n",
			thread_caches_read(k, caches, sizeof(caches)));
		break;
	default:
		fprintf(out, "programs: none can run here: %s\n", k->refusal);
		break;
	}
}
