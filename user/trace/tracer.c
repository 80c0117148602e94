// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/pidfd.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/grow.h"
#include "common/clock.h"
#include "common/fileio.h"
#include "trace/gpu_probes.h"
#include "trace/kernel.h"
#include "trace/node_programs.h"
#include "trace/run_group.h"
#include "common/log.h"
#include "trace/slice_claims.h"
#include "trace/spec.h"
#include "trace/bpf_words.h"
#include "trace/tracer.h"
#include "trace/uprobe_link.h"
#include "unitmeter.h"
#include "unitmeter.skel.h"
#include "unitmeter_thread_cache.skel.h"
#include "unitmeter_baseline.skel.h"

/* The other objects are opened through the per-CPU one's skeleton struct: the build proves the
 * three declare the same programs, maps and globals (tools/skel-layout.sh). */
_Static_assert(sizeof(struct unitmeter_bpf) == sizeof(struct unitmeter_baseline_bpf),
	       "the baseline skeleton differs");
_Static_assert(sizeof(struct unitmeter_bpf) == sizeof(struct unitmeter_thread_cache_bpf),
	       "the thread-cache skeleton differs");

/* The unit probes' programs, which a run of the node's set attaches by their pins' descriptors. */
enum { UNIT_ENTER, UNIT_ENTER_MARKER, UNIT_RETURN, UNIT_PROGRAMS };
static const char *const unit_program_names[UNIT_PROGRAMS] = { "unit_enter", "unit_enter_marker",
								"unit_return" };

/* The node-wide counters (state.bpf.h) a run of a shared set reports as their change. */
struct node_counts {
	__u64 map_full, scope_overflows, thread_collisions, orphan_slices, switch_in_misses;
	__u64 handover_timeouts, switch_in_misses_exact, late_switch_ins, lock_timeouts;
};

/* A process stopped at its exec (--lookup-at-exec), waiting for tracer__service_held. */
struct held_exec {
	__u32 pid;
	struct um_program_id program;
};

struct tracer {
	struct unitmeter_bpf *skel;
	struct ring_buffer *rb;
	/* this run's group of the programs (run_group.h): its slot, ring and timeline */
	struct run_group group;
	/* the node's set of programs (node_programs.h), when this run is a group of it */
	bool node_shared;
	bool group_released; /* given back (group_release, once: before a detached release) */
	struct node_programs node;
	int unit_prog_fd[UNIT_PROGRAMS];
	struct node_counts node_base; /* the node-wide counters when this run registered */
	struct uprobe_link *unit_links; /* entry and return probe per target and program */
	size_t n_unit_links, cap_unit_links;
	bool uprobe_multi; /* the uprobes as multi-uprobe links (uprobe_link.h), else perf events */
	const struct tracer_config *cfg;
	tracer_record_fn record_fn;
	void *record_ctx;
	char *found_path[UM_MAX_SPECS]; /* per cookie: where a path-less target was found */
	bool marks_failed; /* a tracked thread could not be marked: the BPF side must not trust marks */
	struct kernel_features kernel;
	struct tracer_timing timing;
	struct memory_timeline *timeline; /* handed over by tracer__end */
	uint64_t timeline_drained_ns; /* the last drain of the BPF timeline ring */
	uint64_t claims_swept_ns; /* the last sweep of the baseline's handover keys */
	struct claims_sweep claims_sweep;
	/* held at their exec, queued by the ring's callback in record order for the caller's loop */
	struct held_exec *held;
	size_t n_held, cap_held;
	char gpu_library[PATH_MAX]; /* the libcuda.so.1 probed; "" when none */
	/* read-only: the context and pools each unit's process holds, beside the API's bytes;
	 * NULL: absent or failed, nvml_why says why */
	struct nvml *nvml;
	char nvml_why[160];
	/* attach --cgroup: processes the programs saw enter the cgroup, for tracer__joined */
	pid_t *joined;
	size_t n_joined, cap_joined;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && um_verbosity < 2)
		return 0;
	if (level == LIBBPF_INFO && um_verbosity < 1)
		return 0;
	if (level == LIBBPF_WARN && um_verbosity < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

const char *tracer_precheck(void)
{
	static struct kernel_features k;

	kernel_features_read(&k);
	return k.build == KERNEL_BUILD_NONE ? k.refusal : NULL;
}

static int attach_unit_target(struct tracer *t, const struct unit_target *target,
			      const char *path);

static bool has_exec_targets(const struct tracer_config *cfg)
{
	for (size_t i = 0; i < cfg->n_targets; i++)
		if (!cfg->targets[i].path)
			return true;
	return false;
}

/*
 * A process held at the exec of a program not seen before: attach the path-less targets that
 * the program defines, remember the program so its next execs run on, and let the process go.
 * Probes are attached by the program's file (its inode), so later processes running it are
 * covered too.
 */
static void exec_lookup(struct tracer *t, __u32 pid, const struct um_program_id *program)
{
	int programs_fd = bpf_map__fd(t->skel->maps.exec_programs);
	struct um_exec_key key = { .program = *program, .group = t->group.tag };
	char exe[64], real[PATH_MAX], why[1024];
	__u32 seen = 1;
	ssize_t n;

	snprintf(exe, sizeof(exe), "/proc/%u/exe", pid);
	n = readlink(exe, real, sizeof(real) - 1);
	real[n > 0 ? n : 0] = '\0';
	/* a second process held at the same new program: the first one's lookup covers it; one
	 * already gone (no /proc/PID/exe) tells nothing about its program, which stays unknown */
	if (n > 0 && bpf_map_lookup_elem(programs_fd, &key, &seen) != 0) {
		for (size_t i = 0; i < t->cfg->n_targets; i++) {
			struct unit_target found = t->cfg->targets[i];

			if (found.path || elf_function_offset(exe, found.symbol, NULL, &found.offset,
							      why, sizeof(why)))
				continue;
			if (attach_unit_target(t, &found, exe))
				continue;
			um_info("unit %s found in %s (process %u)", found.symbol, real, pid);
			if (found.cookie < UM_MAX_SPECS && !t->found_path[found.cookie])
				t->found_path[found.cookie] = strdup(real);
		}
		seen = 1;
		if (bpf_map_update_elem(programs_fd, &key, &seen, BPF_ANY)) {
			/* full: every exec would be held again and probed again; stop holding */
			um_warn("cannot remember %s as looked up (%s): programs exec'd from now on are "
				"not searched for unit symbols", real, strerror(errno));
			__atomic_store_n(&t->group.me->hold_at_exec, 0, __ATOMIC_SEQ_CST);
		}
	}
	if (kill(pid, SIGCONT) && errno != ESRCH)
		um_warn("cannot continue process %u after its exec: %s", pid, strerror(errno));
}

/* Queue a held process for tracer__service_held; -ENOMEM when the queue cannot grow. */
static int hold_queue(struct tracer *t, __u32 pid, const struct um_program_id *program)
{
	struct held_exec *bigger = um_grow(t->held, &t->cap_held, t->n_held + 1, sizeof(*bigger), 16);

	if (!bigger)
		return -ENOMEM;
	t->held = bigger;
	t->held[t->n_held++] = (struct held_exec){ .pid = pid, .program = *program };
	return 0;
}

/*
 * Every record goes to the consumer as it came. A process held at its exec is only queued: the
 * caller's loop looks it up and continues it (tracer__service_held) once the batch is read, where
 * a reader of the loop sees it. Should the queue not grow, it is served at once: a held process
 * must never be forgotten.
 */
/* NVML unloaded, by the process that loaded it (never by the detached child). */
static void nvml_done(struct tracer *t)
{
	nvml__close(t->nvml);
	t->nvml = NULL;
}

/* The device bytes the probes see process pid hold now (managed memory apart); 0: none seen. */
static uint64_t gpu_live_bytes(const struct tracer *t, pid_t pid)
{
	__u32 key = (__u32)pid;
	struct um_gpu_live live;

	if (!bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.gpu_procs), &key, &live) &&
	    live.total > 0)
		return (uint64_t)live.total;
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	const struct um_proc_exec *e = data;
	const struct um_unit_record *u = data;
	const struct um_cgroup_join *j = data;
	struct gpu_nvml_unit nvml;

	if (size >= sizeof(*e) && e->type == UM_REC_PROC_EXEC && e->held &&
	    hold_queue(t, e->pid, &e->program))
		exec_lookup(t, e->pid, &e->program);
	if (size >= sizeof(*j) && j->type == UM_REC_CGROUP_JOIN) {
		pid_t *joined = um_grow(t->joined, &t->cap_joined, t->n_joined + 1,
					sizeof(*joined), 16);

		/* none lost: the walk after each join reads the cgroup as it is */
		if (joined) {
			t->joined = joined;
			t->joined[t->n_joined++] = (pid_t)j->pid;
		}
		return 0;
	}
	if (size >= sizeof(*u) && u->type == UM_REC_UNIT) {
		/* NVML's reading of the unit's process now, at its end as the loader sees it,
		 * beside the bytes the probes see it hold now */
		gpu_nvml_read(t->nvml, (pid_t)u->pid, u->gpu_seen,
			      t->nvml && u->gpu_seen ? gpu_live_bytes(t, (pid_t)u->pid) : 0, &nvml);
		return t->record_fn(t->record_ctx, data, size, &nvml);
	}
	return t->record_fn(t->record_ctx, data, size, NULL);
}

int tracer__service_held(struct tracer *t)
{
	size_t n = t ? t->n_held : 0;

	/* in the order they were held; a lookup reads no record, so the queue cannot grow here */
	for (size_t i = 0; i < n; i++)
		exec_lookup(t, t->held[i].pid, &t->held[i].program);
	if (t)
		t->n_held = 0;
	return (int)n;
}

/*
 * rss.bpf.c reads each CPU's share of an mm counter at the counter's address plus that CPU's
 * per-CPU offset; its learn_cpu_offsets program finds the offsets. Run it once, before anything
 * is attached: without them every RSS figure would be wrong, so failing here is fatal.
 */
static int learn_cpu_offsets(struct tracer *t, int n_cpus)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err = bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.learn_cpu_offsets), &opts);

	if (err) {
		err = -errno;
		um_err("cannot learn the kernel's per-CPU offsets: %s", strerror(-err));
		return err;
	}
	if ((int)opts.retval != n_cpus) {
		um_err("cannot learn the kernel's per-CPU offsets: %u of %d CPUs found", opts.retval,
		       n_cpus);
		return -ENODEV;
	}
	return 0;
}

/*
 * Open the build of the programs the kernel takes. The thread-cache and baseline objects go
 * through the per-CPU skeleton's struct, each with its own ELF bytes.
 */
static struct unitmeter_bpf *open_build(enum kernel_build build)
{
	struct unitmeter_bpf *skel;
	int err;

	if (build == KERNEL_BUILD_PER_CPU)
		return unitmeter_bpf__open();
	skel = calloc(1, sizeof(*skel));
	if (!skel)
		return NULL;
	err = unitmeter_bpf__create_skeleton(skel);
	if (!err) {
		skel->skeleton->data =
			build == KERNEL_BUILD_THREAD_CACHE ?
				(void *)unitmeter_thread_cache_bpf__elf_bytes(&skel->skeleton->data_sz) :
				(void *)unitmeter_baseline_bpf__elf_bytes(&skel->skeleton->data_sz);
		err = bpf_object__open_skeleton(skel->skeleton, NULL);
	}
	if (err) {
		unitmeter_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/* The entry program of spec index n on kernels without attach cookies. */
static struct bpf_program *spec_entry_program(struct tracer *t, uint32_t n)
{
	char name[32];

	snprintf(name, sizeof(name), "unit_enter_%u", n);
	return bpf_object__find_program_by_name(t->skel->obj, name);
}

/*
 * Multi-uprobe links where the kernel makes them; UNITMETER_UPROBE_LINK=perf takes perf events
 * anyway (the bench's comparison, and the tests' check that both count the same).
 */
static bool use_uprobe_multi(const struct kernel_features *k)
{
	const char *forced = getenv("UNITMETER_UPROBE_LINK");

	return k->uprobe_multi && !(forced && !strcmp(forced, "perf"));
}

/* Load only the programs this kernel and this run (node: any run of the node) need. */
static void choose_programs(struct tracer *t, bool node)
{
	const struct tracer_config *cfg = t->cfg;
	bool cookies = kernel_build_has_bpf_of_5_17(t->kernel.build), natives = node, markers = node;
	bool functions;
	struct bpf_program *prog;

	for (size_t i = 0; i < cfg->n_targets; i++) {
		if (cfg->targets[i].spec_from_arg)
			markers = true;
		else
			natives = true;
	}
	bpf_object__for_each_program(prog, t->skel->obj)
		if (strncmp(bpf_program__name(prog), "unit_enter_", 11) == 0)
			bpf_program__set_autoload(prog, false);
	/* without unit specs the uprobe programs are not even verified: a faster start */
	bpf_program__set_autoload(t->skel->progs.unit_enter, cookies && natives);
	bpf_program__set_autoload(t->skel->progs.unit_enter_marker, markers);
	bpf_program__set_autoload(t->skel->progs.unit_return, node || cfg->n_targets > 0);
	if (!cookies)
		for (size_t i = 0; i < cfg->n_targets; i++)
			if (!cfg->targets[i].spec_from_arg)
				bpf_program__set_autoload(spec_entry_program(t, cfg->targets[i].cookie),
							  true);
	bpf_program__set_autoload(t->skel->progs.learn_cpu_offsets,
				  t->kernel.build == KERNEL_BUILD_PER_CPU);
	bpf_program__set_autoload(t->skel->progs.handle_fault_done,
				  t->kernel.thread_rss_caches && t->kernel.fault_hook == FAULT_HOOK_FEXIT);
	bpf_program__set_autoload(t->skel->progs.handle_fault_done_kretprobe,
				  t->kernel.thread_rss_caches &&
					  t->kernel.fault_hook == FAULT_HOOK_KRETPROBE);
	t->skel->rodata->thread_rss_caches = t->kernel.thread_rss_caches;
	/* writes, forks and exits: at the functions, else at every syscall (bpf/syscalls.bpf.c) */
	functions = t->kernel.syscall_hooks == SYSCALL_HOOKS_FUNCTIONS;
	bpf_program__set_autoload(t->skel->progs.handle_vfs_write, functions);
	bpf_program__set_autoload(t->skel->progs.handle_vfs_writev, functions);
	bpf_program__set_autoload(t->skel->progs.handle_clone_entry, functions);
	bpf_program__set_autoload(t->skel->progs.handle_clone_return, functions);
	bpf_program__set_autoload(t->skel->progs.handle_exit_entry, functions);
	bpf_program__set_autoload(t->skel->progs.handle_sys_enter, !functions);
	bpf_program__set_autoload(t->skel->progs.handle_sys_exit, !functions);
	/* the GPU programs only where a driver library was found to probe (tracer__open) */
	bpf_object__for_each_program(prog, t->skel->obj)
		if (strncmp(bpf_program__name(prog), "gpu_", 4) == 0)
			bpf_program__set_autoload(prog, t->gpu_library[0] != '\0');
	bpf_program__set_autoload(t->skel->progs.handle_page_cache_add,
				  node || cfg->charge_cgroup_id != 0);
	bpf_program__set_autoload(t->skel->progs.handle_cgroup_attach,
				  node || cfg->join_cgroup_id != 0);
}

/*
 * Give this run's group back (a node's set), under the node's lock; the last run out removes
 * the set's registry: its programs detach when no run holds them.
 */
static void group_release(struct tracer *t)
{
	if (!t->node_shared || !t->group.me || t->group_released)
		return;
	t->group_released = true;
	if (node_programs_lock(&t->node)) {
		um_warn("cannot take the node's programs lock: this run's group is left for the "
			"next run to sweep");
		return;
	}
	if (run_group_give_back(&t->group, t->skel, t->cfg))
		node_programs_forget(&t->node);
	node_programs_unlock(&t->node);
}

/*
 * Open the build's skeleton and set it up for a load: the maps' sizes (one group, or the node's
 * UM_MAX_GROUPS), the machine's constants, the programs this run (or any run of the node) needs.
 */
static int skel_prepare(struct tracer *t, bool node)
{
	__u32 n_groups = node ? UM_MAX_GROUPS : 1;
	struct bpf_words words;
	int err;

	t->skel = open_build(t->kernel.build);
	if (!t->skel) {
		err = -errno;
		um_err("cannot open the BPF programs: %s", bpf_words(err, &words));
		return err;
	}
	bpf_map__set_max_entries(t->skel->maps.groups, n_groups);
	bpf_map__set_max_entries(t->skel->maps.group_rings, n_groups);
	bpf_map__set_max_entries(t->skel->maps.group_timelines, n_groups);
	/* the smallest ring: only the arm64 baseline's fence reserves there, and discards */
	bpf_map__set_max_entries(t->skel->maps.fence_ring, (__u32)sysconf(_SC_PAGESIZE));
	/* the handover keys are the baseline's alone (slice_claims.h) */
	if (t->kernel.build != KERNEL_BUILD_BASELINE)
		bpf_map__set_max_entries(t->skel->maps.slice_claims, 1);
	t->skel->rodata->nr_possible_cpus = libbpf_num_possible_cpus();
	/*
	 * Every mm and memcg counter counts pages of the kernel's size (4K, 16K or 64K on arm64):
	 * glibc's sysconf answers with the AT_PAGESZ the kernel handed this process, never -1.
	 */
	t->skel->rodata->page_size = (__u64)sysconf(_SC_PAGESIZE);
	choose_programs(t, node);
	if (t->uprobe_multi)
		uprobe_link_prepare(t->skel->obj);
	/* -vvv: the verifier's statistics of every program (its time, the states it walked) */
	if (um_verbosity >= 3) {
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, t->skel->obj)
			bpf_program__set_log_level(prog, 4);
	}
	return 0;
}

/* Load the prepared skeleton's programs and maps, and learn what they need from the kernel. */
static int skel_load(struct tracer *t)
{
	struct bpf_words words;
	struct slot_fill fill;
	int err;

	slot_fill_start(&fill, t->skel, t->cfg);
	err = unitmeter_bpf__load(t->skel);
	slot_fill_finish(&fill);

	if (err) {
		/* as root, EACCES is the verifier's refusal of a program, not a missing right */
		if ((err == -EPERM || err == -EACCES) && !t->kernel.root)
			um_err("loading the BPF programs was refused (%s): run as root, or with "
			       "CAP_BPF and CAP_PERFMON", bpf_words(err, &words));
		else
			um_err("cannot load the %s build of the BPF programs on kernel %s: %s (%s%s%s"
			       "run 'unitmeter check' for what this kernel offers, -vv for the "
			       "verifier's log)", kernel_build_name(t->kernel.build), t->kernel.release,
			       bpf_words(err, &words), t->kernel.forced[0] ? "forced by " : "",
			       t->kernel.forced[0] ? t->kernel.forced : "",
			       t->kernel.forced[0] ? "; " : "");
		return err;
	}
	if (t->kernel.build == KERNEL_BUILD_PER_CPU)
		return learn_cpu_offsets(t, libbpf_num_possible_cpus());
	return 0;
}

/* The node-wide counters as they stand (struct node_counts: what a run of a shared set
 * reports is their change while it ran). */
static void node_counts_read(const struct unitmeter_bpf *skel, struct node_counts *c)
{
	c->map_full = skel->bss->map_full;
	c->scope_overflows = skel->bss->scope_overflows;
	c->thread_collisions = skel->bss->thread_collisions;
	c->orphan_slices = skel->bss->orphan_slices;
	c->switch_in_misses = skel->bss->switch_in_misses;
	c->handover_timeouts = skel->bss->handover_timeouts;
	c->switch_in_misses_exact = skel->bss->switch_in_misses_exact;
	c->late_switch_ins = skel->bss->late_switch_ins;
	c->lock_timeouts = skel->bss->lock_timeouts;
}

/*
 * Use the node's set of programs (node_programs.h): join the one pinned, or load, attach and pin
 * it; then register this run's group in it. All under the node's lock. On failure the
 * skeleton is gone and the caller loads programs of this run's own.
 */
static int open_node_programs(struct tracer *t)
{
	struct node_programs *np = &t->node;
	bool joined = false;
	int err;

	err = skel_prepare(t, true);
	if (err)
		return err;
	node_programs_name(np, t->skel, &t->kernel, t->uprobe_multi, t->gpu_library[0] != '\0');
	err = node_programs_lock(np);
	if (err) {
		um_info("cannot take the node's programs lock (%s)", strerror(-err));
		goto fail;
	}
	err = node_programs_open(np, t->skel);
	joined = !err;
	if (err == -ENOENT) {
		/* none, or a set gone with its last run (killed, its registry left): load it */
		if (!access(np->registry, F_OK))
			node_programs_forget(np);
		unitmeter_bpf__destroy(t->skel);
		t->skel = NULL;
		err = skel_prepare(t, true);
		if (!err)
			err = skel_load(t);
		if (!err) {
			t->skel->bss->trust_marks = 1;
			err = unitmeter_bpf__attach(t->skel);
			if (err)
				um_info("cannot attach the node's programs (%s)", strerror(-err));
		}
		if (!err) {
			err = node_programs_publish(np, t->skel);
			if (err)
				um_info("cannot write the node's programs registry %s (%s)", np->registry,
					strerror(-err));
		}
	} else if (err) {
		um_info("cannot open the node's programs of %s (%s)", np->registry, strerror(-err));
	}
	for (int i = 0; !err && i < UNIT_PROGRAMS; i++) {
		t->unit_prog_fd[i] = node_programs_prog_fd(np, unit_program_names[i]);
		if (t->unit_prog_fd[i] < 0)
			err = t->unit_prog_fd[i];
	}
	if (!err)
		err = run_group_register(&t->group, t->skel, t->cfg);
	if (err)
		goto fail;
	node_counts_read(t->skel, &t->node_base);
	um_info("programs: the node's, %s (%s, group %u)", joined ? "joined" : "loaded for it",
		np->registry, UM_GROUP_SLOT(t->group.tag));
	node_programs_unlock(np);
	return 0;
fail:
	if (np->lock_fd >= 0 && !joined)
		node_programs_forget(np);
	node_programs_release(np);
	for (int i = 0; i < UNIT_PROGRAMS; i++) {
		if (t->unit_prog_fd[i] >= 0)
			close(t->unit_prog_fd[i]);
		t->unit_prog_fd[i] = -1;
	}
	unitmeter_bpf__destroy(t->skel);
	t->skel = NULL;
	return err ? err : -EINVAL;
}

int tracer__open(struct tracer **out, const struct tracer_config *cfg, tracer_record_fn fn,
		 void *ctx)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int n_cpus = libbpf_num_possible_cpus();
	uint64_t t0 = um_monotonic_ns();
	const char *own_why;
	int err;

	if (!t)
		return -ENOMEM;
	t->group.ring_fd = t->group.timeline_fd = t->node.lock_fd = -1;
	for (int i = 0; i < UNIT_PROGRAMS; i++)
		t->unit_prog_fd[i] = -1;
	/* 64 KiB: on the heap, as it is handed over at the end */
	t->timeline = calloc(1, sizeof(*t->timeline));
	if (!t->timeline) {
		free(t);
		return -ENOMEM;
	}
	t->cfg = cfg;
	t->record_fn = fn;
	t->record_ctx = ctx;
	libbpf_set_print(libbpf_print);
	kernel_features_read(&t->kernel);
	if (t->kernel.build == KERNEL_BUILD_NONE) {
		um_err("%s", t->kernel.refusal);
		err = -ENOTSUP;
		goto fail;
	}
	um_info("kernel %s: the %s build of the programs", t->kernel.release,
		kernel_build_name(t->kernel.build));
	if (n_cpus < 1 || n_cpus > UM_MAX_CPUS) {
		err = n_cpus < 0 ? n_cpus : -E2BIG;
		um_err("cannot trace on this machine: %d possible CPUs (at most %d are supported)",
		       n_cpus, UM_MAX_CPUS);
		goto fail;
	}
	if (!gpu_library_find(cfg->gpu_mapped_by, t->gpu_library, sizeof(t->gpu_library)))
		um_info("no %s found: device memory is not traced, its programs are not loaded",
			"libcuda.so.1");
	t->nvml = nvml__open(t->nvml_why, sizeof(t->nvml_why));
	if (!t->nvml)
		um_info("the GPU context and pools are not read: %s", t->nvml_why);
	t->uprobe_multi = use_uprobe_multi(&t->kernel);
	um_info("uprobes: %s", t->uprobe_multi ? "multi-uprobe links" :
		t->kernel.uprobe_multi ? "perf events (UNITMETER_UPROBE_LINK=perf)" :
		"perf events (this kernel makes no multi-uprobe link)");
	t->timing.open_ns = um_monotonic_ns() - t0;
	t0 = um_monotonic_ns();
	own_why = cfg->own_programs ? "a trial of this run's own" :
				      node_programs_refusal(&t->kernel);
	if (!own_why) {
		t->node_shared = open_node_programs(t) == 0;
		if (!t->node_shared)
			own_why = "the node's could not be used (the line above says why)";
	}
	if (!t->node_shared) {
		um_info("programs: this run's own (%s)", own_why);
		err = skel_prepare(t, false);
		if (!err)
			err = skel_load(t);
		if (!err)
			err = run_group_map(&t->group, t->skel) ?:
			      run_group_join(&t->group, t->skel, cfg, 0);
		if (err)
			goto fail;
	}
	t->rb = ring_buffer__new(t->group.ring_fd, on_record, t, NULL);
	if (!t->rb) {
		err = -errno;
		um_err("cannot set up the ring buffer: %s", strerror(-err));
		goto fail;
	}
	t->timing.load_ns = um_monotonic_ns() - t0;
	*out = t;
	return 0;
fail:
	tracer__destroy(t);
	return err;
}

/* "RssAnon:    1234 kB" from /proc/PID/status, in bytes; 0 when absent. */
static uint64_t status_kib(const char *status, const char *key)
{
	const char *line = strstr(status, key);

	return line ? strtoull(line + strlen(key), NULL, 10) * 1024 : 0;
}

/* The first field of /proc/PID/task/TID/schedstat: on-CPU time in ns, as se.sum_exec_runtime. */
static int task_runtime_ns(pid_t pid, pid_t tid, __u64 *ns)
{
	char path[64], *text;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	text = um_read_text(path);
	if (!text)
		return -errno;
	*ns = strtoull(text, NULL, 10);
	free(text);
	return 0;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* linux/pidfd.h, 6.9: a pidfd for one thread, not its group */
#endif

/*
 * Put the kernel's tracked mark (tracked_tasks, task storage keyed by a pidfd) on one thread;
 * threads forked later get it in BPF. A thread without it would be skipped by the per-fault
 * programs, so a failure here turns the marks off altogether (tracer__attach).
 */
static int mark_tracked(struct tracer *t, pid_t tid)
{
	int fd, err = 0;
	__u32 mark = 1;

	/* no task storage (the baseline build): the threads map is the mark */
	if (!kernel_build_has_bpf_of_5_17(t->kernel.build))
		return 0;
	fd = pidfd_open(tid, PIDFD_THREAD);
	if (fd < 0)
		fd = pidfd_open(tid, 0); /* before 6.9: a thread-group leader only */
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.tracked_tasks), &fd, &mark, BPF_ANY))
		err = -errno;
	close(fd);
	return err;
}

/*
 * Enter each thread of pid in the threads map and mark it. While the programs run (an adopted
 * process), only threads no program has entered are added (one the fork program took meanwhile
 * keeps its entry), and a mark that cannot be set turns the marks off at once.
 */
static int track_threads(struct tracer *t, pid_t pid, struct um_proc *proc, bool programs_live)
{
	int fd = bpf_map__fd(t->skel->maps.threads);
	char dir[64];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct um_thread th = { .tgid = pid, .group = t->group.tag };
		__u32 tid = strtoul(de->d_name, NULL, 10);

		if (!tid || task_runtime_ns(pid, tid, &th.runtime_seen_ns))
			continue;
		if (mark_tracked(t, tid)) {
			t->marks_failed = true;
			if (programs_live)
				t->skel->bss->trust_marks = 0;
		}
		if (bpf_map_update_elem(fd, &tid, &th, programs_live ? BPF_NOEXIST : BPF_ANY) == 0) {
			proc->live_threads++;
			proc->active_threads++;
			proc->threads_seen++;
		}
	}
	closedir(d);
	return proc->live_threads ? 0 : -ESRCH;
}

/*
 * A process found running (attach, adopted): its RSS members as /proc/PID/status has them, as the
 * figures it starts from and its peak so far. 0, or -errno when it is gone.
 */
static int rss_from_proc(pid_t pid, struct um_proc *proc)
{
	char path[64], *status;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	status = um_read_text(path);
	if (!status)
		return -errno;
	proc->initial_member_bytes[UM_MM_ANONPAGES] = status_kib(status, "RssAnon:");
	proc->initial_member_bytes[UM_MM_FILEPAGES] = status_kib(status, "RssFile:");
	proc->initial_member_bytes[UM_MM_SHMEMPAGES] = status_kib(status, "RssShmem:");
	free(status);
	proc->peak_rss_bytes = proc->initial_member_bytes[UM_MM_ANONPAGES] +
			       proc->initial_member_bytes[UM_MM_FILEPAGES] +
			       proc->initial_member_bytes[UM_MM_SHMEMPAGES];
	return 0;
}

/* Add bytes to a figure the programs update at the same time (a mapped map: shared memory). */
static void figure_add(__s64 *figure, __s64 bytes)
{
	__atomic_fetch_add(figure, bytes, __ATOMIC_RELAXED);
}

static void figure_raise(__u64 *peak, __u64 value)
{
	__u64 seen = __atomic_load_n(peak, __ATOMIC_RELAXED);

	while (value > seen &&
	       !__atomic_compare_exchange_n(peak, &seen, value, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* The run whose group tracks pid: 0 none, else its tag. */
static __u32 tracking_group(const struct tracer *t, pid_t pid)
{
	__u32 key = pid;
	struct um_proc proc;

	return bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.procs), &key, &proc) ? 0 : proc.group;
}

bool tracer__tracked(const struct tracer *t, pid_t pid)
{
	return tracking_group(t, pid) == t->group.tag;
}

/*
 * A process is one run's: another live run of the node's set that tracks it keeps it. Its
 * group, or NULL (none, this run, or a run that is gone, whose process this run may take).
 */
static const struct um_group *other_owner(const struct tracer *t, pid_t pid)
{
	__u32 group = tracking_group(t, pid);
	const struct um_group *g;

	if (!group || group == t->group.tag || !t->group.groups)
		return NULL;
	g = &t->group.groups[UM_GROUP_SLOT(group)];
	return g->tag == group && !run_group_owner_gone(g) ? g : NULL;
}

int tracer__track(struct tracer *t, pid_t pid, pid_t ppid, bool from_exec)
{
	struct um_proc proc = { .ppid = ppid, .group = t->group.tag, .start_ns = um_monotonic_ns() };
	/* the run's own child is its own; an attach target may be another run's */
	const struct um_group *other = from_exec ? NULL : other_owner(t, pid);
	__u32 key = pid;
	int err;

	if (other) {
		um_err("process %d is traced by another unitmeter run (process %u): a process is "
		       "measured by one run at a time", pid, other->owner_pid);
		return -EBUSY;
	}
	if (from_exec) {
		/* the held child is single-threaded until it execs */
		struct um_thread th = { .tgid = pid, .group = t->group.tag };

		proc.flags = UM_PROC_AWAIT_EXEC;
		proc.live_threads = proc.active_threads = proc.threads_seen = 1;
		err = task_runtime_ns(pid, pid, &th.runtime_seen_ns);
		if (!err && mark_tracked(t, pid))
			t->marks_failed = true;
		if (!err && bpf_map_update_elem(bpf_map__fd(t->skel->maps.threads), &key, &th, BPF_ANY))
			err = -errno;
	} else {
		uint64_t rss;

		err = rss_from_proc(pid, &proc);
		if (err < 0) {
			um_err("cannot start tracking process %d: %s", pid,
			       err == -ENOENT ? "it has exited" : strerror(-err));
			return err;
		}
		rss = proc.peak_rss_bytes;
		/* the process's mm is learned on its next RSS change; until then /proc stands in */
		figure_add(&t->group.me->rss_bytes, (__s64)rss);
		figure_raise(&t->group.me->peak_rss_bytes, (__u64)__atomic_load_n(&t->group.me->rss_bytes,
									   __ATOMIC_RELAXED));
		err = track_threads(t, pid, &proc, false);
	}
	if (!err && bpf_map_update_elem(bpf_map__fd(t->skel->maps.procs), &key, &proc, BPF_ANY))
		err = -errno;
	if (err)
		um_err("cannot start tracking process %d: %s", pid, strerror(-err));
	return err;
}

int tracer__adopt(struct tracer *t, pid_t pid, pid_t ppid)
{
	struct um_proc proc = { .ppid = ppid, .group = t->group.tag, .start_ns = um_monotonic_ns() };
	struct um_proc_start rec = { .type = UM_REC_PROC_START, .pid = pid, .ppid = ppid };
	char path[64], *comm;
	__u32 key = pid;
	uint64_t rss;
	int err;

	/* this run's already, or another live run's (which keeps it) */
	if (tracer__tracked(t, pid) || other_owner(t, pid))
		return 0;
	err = rss_from_proc(pid, &proc);
	if (err < 0)
		return err;
	rss = proc.peak_rss_bytes;
	err = track_threads(t, pid, &proc, true);
	if (err)
		return err;
	/* the fork program took it meanwhile (its parent was adopted first): that entry stands */
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.procs), &key, &proc, BPF_NOEXIST))
		return errno == EEXIST ? 0 : -errno;
	/* as tracer__track: /proc stands in for the mm until its next RSS change */
	figure_add(&t->group.me->rss_bytes, (__s64)rss);
	figure_raise(&t->group.me->peak_rss_bytes, (__u64)__atomic_load_n(&t->group.me->rss_bytes, __ATOMIC_RELAXED));
	rec.ts_ns = proc.start_ns;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	comm = um_read_text(path);
	if (comm) {
		comm[strcspn(comm, "\n")] = '\0';
		snprintf(rec.comm, sizeof(rec.comm), "%s", comm);
		free(comm);
	}
	/* the record the fork program would have sent */
	t->record_fn(t->record_ctx, &rec, sizeof(rec), NULL);
	return 1;
}

size_t tracer__joined(struct tracer *t, pid_t **pids)
{
	size_t n = t->n_joined;

	*pids = t->joined;
	t->n_joined = 0;
	return n;
}

/* The GPU programs' descriptors while their probes are attached: the node's set's, dup'd. */
struct gpu_attach {
	struct tracer *t;
	int fds[GPU_PROGRAMS];
};

/* Keep a probe's link with the units' (gpu_probes_attach's keep): destroyed with them. */
static int keep_link(void *ctx, struct uprobe_link *link)
{
	struct tracer *t = ((struct gpu_attach *)ctx)->t;
	struct uprobe_link *links = um_grow(t->unit_links, &t->cap_unit_links, t->n_unit_links + 1,
					    sizeof(*links), 16);

	if (!links) {
		uprobe_link_destroy(link);
		return -ENOMEM;
	}
	t->unit_links = links;
	t->unit_links[t->n_unit_links++] = *link;
	return 0;
}

/* gpu_probes_attach's attach: as a unit probe is, by descriptor in the node's set, else by the
 * run's own program; with cookies, the run's group in the high half (um_probe_group) */
static int attach_gpu_probe(void *ctx, struct uprobe_link *out, enum gpu_program program,
			    const char *path, const char *symbol, uint64_t offset, bool ret)
{
	struct gpu_attach *a = ctx;
	struct tracer *t = a->t;
	uint64_t cookie = kernel_build_has_bpf_of_5_17(t->kernel.build) ? (uint64_t)t->group.tag << 32
									 : 0;

	if (t->node_shared)
		return uprobe_link_attach_fd(out, a->fds[program], path, symbol, offset, ret, cookie,
					     t->uprobe_multi);
	return uprobe_link_attach(out, bpf_object__find_program_by_name(t->skel->obj,
									gpu_program_names[program]),
				  path, symbol, offset, ret, cookie, t->uprobe_multi);
}

/*
 * The CUDA driver's allocation entry points, on the file the command would load (found before
 * the load): the kernel plants them only in processes that map it, so a process that never
 * does pays nothing.
 */
static int attach_gpu_probes(struct tracer *t)
{
	struct gpu_attach a = { .t = t };
	int probed = 0;

	if (!t->gpu_library[0])
		return 0;
	for (int i = 0; i < GPU_PROGRAMS; i++) {
		a.fds[i] = t->node_shared ? node_programs_prog_fd(&t->node, gpu_program_names[i]) : -1;
		if (t->node_shared && a.fds[i] < 0 && probed >= 0)
			probed = a.fds[i];
	}
	if (probed == 0)
		probed = gpu_probes_attach(t->gpu_library, t->uprobe_multi, attach_gpu_probe,
					   keep_link, &a);
	else
		um_err("the node's programs have no device-memory programs: %s", strerror(-probed));
	for (int i = 0; i < GPU_PROGRAMS; i++)
		if (a.fds[i] >= 0)
			close(a.fds[i]);
	if (probed < 0)
		return probed;
	um_info("device memory: %d entry points probed in %s", probed, t->gpu_library);
	if (!probed)
		t->gpu_library[0] = '\0';
	return 0;
}

/* What a user can do about a probe the kernel refused. */
static const char *attach_advice(int err)
{
	switch (-err) {
	case EACCES:
	case EPERM:
		return " (unitmeter needs root, or CAP_BPF and CAP_PERFMON; a lockdown kernel refuses "
		       "probes)";
	case EINVAL:
		return " (the kernel refused the place: is the file an executable or library of this "
		       "machine's architecture, and the name a function, not data?)";
	case ENOENT:
		return " (the file or the function is gone: it changed since the spec was checked)";
	default:
		return "";
	}
}

static int attach_unit_target(struct tracer *t, const struct unit_target *target,
			      const char *path)
{
	struct bpf_program *entry;
	struct uprobe_link *links;
	uint64_t cookie = 0;
	int err;

	/* the spec's index: the marker's argument, the cookie, or the entry program itself */
	if (target->spec_from_arg)
		entry = t->skel->progs.unit_enter_marker;
	else if (kernel_build_has_bpf_of_5_17(t->kernel.build))
		entry = t->skel->progs.unit_enter;
	else
		entry = spec_entry_program(t, target->cookie);
	/* with cookies, the run's group in the high half (um_probe_group) */
	if (kernel_build_has_bpf_of_5_17(t->kernel.build))
		cookie = (uint64_t)t->group.tag << 32 | (target->spec_from_arg ? 0 : target->cookie);

	links = um_grow(t->unit_links, &t->cap_unit_links, t->n_unit_links + 2, sizeof(*links), 16);
	if (!links)
		return -ENOMEM;
	t->unit_links = links;
	/*
	 * The end first: a call whose entry is seen must have its end seen too. With the entry
	 * first, a call of a running process (attach, a dlopen'd library) that entered between the
	 * two attachments would leave its depth at 1 for good: no later call would ever open a
	 * unit (seen on a guest, where the gap is long). An end without its entry is ignored.
	 */
	for (int end = 1; end >= 0; end--) {
		/* the end is the function's return, or the end marker's entry */
		const char *symbol = end && target->end_symbol ? target->end_symbol : target->symbol;
		/* by the offset the spec found (libbpf 1.1 refuses a name with several versions), or
		 * by name: the marker library's own two functions */
		bool by_offset = target->offset && !(end && target->end_symbol);

		/* every process: the BPF side filters */
		if (t->node_shared)
			err = uprobe_link_attach_fd(
				&t->unit_links[t->n_unit_links],
				t->unit_prog_fd[end ? UNIT_RETURN :
					       target->spec_from_arg ? UNIT_ENTER_MARKER : UNIT_ENTER],
				path, symbol, by_offset ? target->offset : 0,
				end && !target->end_symbol, cookie, t->uprobe_multi);
		else
			err = uprobe_link_attach(&t->unit_links[t->n_unit_links],
						 end ? t->skel->progs.unit_return : entry, path, symbol,
						 by_offset ? target->offset : 0,
						 end && !target->end_symbol, cookie, t->uprobe_multi);
		if (err) {
			struct bpf_words words;

			um_err("cannot attach the %s probe of %s in %s: %s%s", end ? "return" : "entry",
			       symbol, path, bpf_words(err, &words), attach_advice(err));
			return err;
		}
		t->n_unit_links++;
	}
	return 0;
}

/* Kernels 6.11 to 6.13 (fixed in 6.14, and in 6.12.y) can kill a seccomp-confined process at a
 * uretprobe, since the return trampoline makes a syscall the filter may not allow. Only on
 * x86-64: the uretprobe syscall exists nowhere else. */
static void warn_uretprobe_seccomp(void)
{
#if defined(__x86_64__)
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return;
	if (major == 6 && minor >= 11 && minor <= 13)
		um_warn("kernel %s: return probes can kill a process that runs under a seccomp "
			"filter (fixed in 6.14 and 6.12.y); sandboxed programs may die at a unit's end",
			u.release);
#endif
}

int tracer__attach(struct tracer *t)
{
	uint64_t t0 = um_monotonic_ns();
	struct bpf_words words;
	int err;

	/* no pidfd_open (an old kernel, or valgrind, which does not know the call): every event
	 * takes the long way, exact but slower (for every run of a node's set: its flag is one) */
	if (!t->node_shared || t->marks_failed)
		t->skel->bss->trust_marks = !t->marks_failed;
	__atomic_store_n(&t->group.me->hold_at_exec, has_exec_targets(t->cfg), __ATOMIC_SEQ_CST);
	if (t->marks_failed)
		um_info("cannot mark tracked threads for the kernel (pidfd_open): every event is "
			"looked up in the maps");
	/* the timeline's origin: nothing is traced before the attach */
	memory_timeline__init(t->timeline, t0);
	__atomic_store_n(&t->group.me->timeline_start_ns, t0, __ATOMIC_SEQ_CST);
	t->timeline_drained_ns = t0;
	/* a node's set is attached since it was loaded */
	err = t->node_shared ? 0 : unitmeter_bpf__attach(t->skel);

	if (err) {
		um_err("cannot attach the BPF programs: %s", bpf_words(err, &words));
		return err;
	}
	for (size_t i = 0; i < t->cfg->n_targets; i++)
		if (!t->cfg->targets[i].end_symbol) {
			warn_uretprobe_seccomp();
			break;
		}
	/* before the units' (attach: a unit whose entry is seen has every device call seen) */
	err = attach_gpu_probes(t);
	if (err)
		return err;
	for (size_t i = 0; i < t->cfg->n_targets; i++) {
		if (!t->cfg->targets[i].path)
			continue; /* attached when a program defining it is exec'd */
		err = attach_unit_target(t, &t->cfg->targets[i], t->cfg->targets[i].path);
		if (err)
			return err;
	}
	t->timing.attach_ns = um_monotonic_ns() - t0;
	return 0;
}

/*
 * Take the timeline's ended buckets from the BPF ring, every TIMELINE_DRAIN_NS: often enough that
 * a slot is taken long before the ring comes round to it again (UM_TIMELINE_SLOTS buckets, ~4 s),
 * seldom enough that a poll loop turning every few ms does not scan it each turn.
 */
#define TIMELINE_DRAIN_NS (50 * 1000 * 1000ULL)

static void timeline_drain(struct tracer *t, bool all)
{
	uint64_t now = um_monotonic_ns();

	if (!t->timeline || !t->group.me || !t->group.me->timeline_start_ns ||
	    (!all && now - t->timeline_drained_ns < TIMELINE_DRAIN_NS))
		return;
	memory_timeline__drain(t->timeline, t->group.timeline_buckets, now, all);
	t->timeline_drained_ns = now;
}

/*
 * Remove the baseline's handover keys of closed units every CLAIMS_SWEEP_NS (each a sweep after
 * its unit was seen closed): a close adds a few, and UM_SLICE_CLAIMS hold those of thousands.
 */
#define CLAIMS_SWEEP_NS (100 * 1000 * 1000ULL)

static void claims_sweep(struct tracer *t)
{
	uint64_t now = um_monotonic_ns();
	long removed;

	if (t->kernel.build != KERNEL_BUILD_BASELINE || now - t->claims_swept_ns < CLAIMS_SWEEP_NS)
		return;
	t->claims_swept_ns = now;
	removed = slice_claims_sweep(&t->claims_sweep, bpf_map__fd(t->skel->maps.slice_claims),
				     bpf_map__fd(t->skel->maps.units));
	if (removed < 0 && !t->claims_sweep.warned) {
		um_warn("cannot remove the handover keys of closed units: %s (tried again every "
			"100 ms)", strerror((int)-removed));
		t->claims_sweep.warned = true;
	}
}

int tracer__poll(struct tracer *t, int timeout_ms)
{
	int n = ring_buffer__poll(t->rb, timeout_ms), more;

	/* unit records are submitted without a wakeup until a batch waits: read what is there */
	if (n < 0 && n != -EINTR)
		return n;
	more = ring_buffer__consume(t->rb);
	if (more < 0)
		return more;
	timeline_drain(t, false);
	claims_sweep(t);
	return n < 0 ? n : n + more;
}

/* Hold no more processes at their exec (--lookup-at-exec), and continue every one held. */
static void stop_holding(struct tracer *t)
{
	if (!t || !t->skel || !t->group.me)
		return;
	__atomic_store_n(&t->group.me->hold_at_exec, 0, __ATOMIC_SEQ_CST);
	/* every process held so far has its record in the ring: read them all, continuing each
	 * batch's held processes before the next batch is read */
	while (t->rb && ring_buffer__consume(t->rb) > 0)
		tracer__service_held(t);
	tracer__service_held(t);
}

/* Each loaded program's skipped runs, as the kernel counts them (struct tracer_prog_misses). */
/* One program's skipped runs, by its descriptor, named name (NULL: the kernel's name). */
static void prog_misses_of(int fd, const char *name, struct tracer_counters *c)
{
	struct tracer_prog_misses *m = &c->progs[c->n_progs];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	bool read;

	if (fd < 0 || c->n_progs >= TRACER_MAX_PROGS)
		return;
	read = bpf_obj_get_info_by_fd(fd, &info, &len) == 0;
	snprintf(m->name, sizeof(m->name), "%s", name ? name : read ? info.name : "?");
	/* a kernel older than the field fills less of the struct than it ends at */
	m->known = read && len >= offsetof(struct bpf_prog_info, recursion_misses) +
					  sizeof(info.recursion_misses);
	m->recursion_misses = m->known ? info.recursion_misses : 0;
	c->n_progs++;
}

/*
 * Each loaded program's skipped runs, as the kernel counts them (struct tracer_prog_misses). A
 * node's set: its programs, found through the links this run holds, named as the kernel keeps
 * them (16 bytes), counted since the set was loaded.
 */
static void read_prog_misses(struct tracer *t, struct tracer_counters *c)
{
	struct bpf_program *prog;

	c->n_progs = 0;
	if (!t->node_shared) {
		bpf_object__for_each_program(prog, t->skel->obj)
			prog_misses_of(bpf_program__fd(prog), bpf_program__name(prog), c);
		return;
	}
	for (size_t i = 0; i < t->node.n_links; i++) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		int fd;

		if (bpf_obj_get_info_by_fd(t->node.link_fds[i], &info, &len))
			continue;
		fd = bpf_prog_get_fd_by_id(info.prog_id);
		prog_misses_of(fd, NULL, c);
		if (fd >= 0)
			close(fd);
	}
	for (int i = 0; i < UNIT_PROGRAMS; i++)
		prog_misses_of(t->unit_prog_fd[i], unit_program_names[i], c);
}

/* What thread tid of the machine is: its process and name, from /proc while it lives. */
static void describe_thread(struct tracer_unseen_after *u)
{
	char path[64], line[128];
	FILE *f;

	u->pid = -1;
	u->comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/status", u->tid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:\t", 6)) {
			size_t len = strcspn(line + 6, "\n");

			/* a task's name is at most 15 bytes (TASK_COMM_LEN) */
			if (len >= sizeof(u->comm))
				len = sizeof(u->comm) - 1;
			memcpy(u->comm, line + 6, len);
			u->comm[len] = '\0';
		} else if (sscanf(line, "Tgid:\t%d", &u->pid) == 1) {
			break;
		}
	}
	fclose(f);
}

static void read_counters(struct tracer *t, struct tracer_counters *c)
{
	struct node_counts now;

	c->group_peak_rss_bytes = t->group.me->peak_rss_bytes;
	c->group_rss_bytes = t->group.me->rss_bytes;
	c->lost_records = t->group.me->lost_records;
	/* the node's counters: their change since this run registered (0 before, when its own) */
	node_counts_read(t->skel, &now);
	c->map_full = now.map_full - t->node_base.map_full;
	c->scope_overflows = now.scope_overflows - t->node_base.scope_overflows;
	c->thread_collisions = now.thread_collisions - t->node_base.thread_collisions;
	c->orphan_slices = now.orphan_slices - t->node_base.orphan_slices;
	c->switch_in_misses = now.switch_in_misses - t->node_base.switch_in_misses;
	c->handover_timeouts = now.handover_timeouts - t->node_base.handover_timeouts;
	c->switch_in_misses_exact = now.switch_in_misses_exact - t->node_base.switch_in_misses_exact;
	c->late_switch_ins = now.late_switch_ins - t->node_base.late_switch_ins;
	c->lock_timeouts = now.lock_timeouts - t->node_base.lock_timeouts;
	c->programs_shared = t->node_shared;
	for (int i = 0; i < UM_UNSEEN_SLOTS; i++) {
		c->unseen_after[i].tid = t->skel->bss->unseen_after_tid[i];
		c->unseen_after[i].count = t->skel->bss->unseen_after_count[i];
		if (c->unseen_after[i].tid)
			describe_thread(&c->unseen_after[i]);
	}
	read_prog_misses(t, c);
	c->charge_known = t->group.me->charge_memcg != 0;
	c->group_peak_charge_bytes = t->group.me->peak_charge_bytes;
	c->charge_watermark_start_bytes = t->group.me->charge_watermark_start_bytes;
	c->charge_watermark_last_bytes = t->group.me->charge_watermark_last_bytes;
	c->charge_unwatched = t->group.me->charge_unwatched;
	c->build = kernel_build_name(t->kernel.build);
	c->thread_rss_caches = t->kernel.thread_rss_caches;
	c->uprobe_links = t->uprobe_multi ? "multi" : "perf";
	c->syscall_hooks = syscall_hooks_name(t->kernel.syscall_hooks);
	gpu_counters_read(t->group.me, &c->gpu);
	snprintf(c->gpu.library, sizeof(c->gpu.library), "%s", t->gpu_library);
}

struct unitmeter_bpf *tracer__skel(struct tracer *t)
{
	return t->skel;
}

const struct um_group *tracer__group(const struct tracer *t)
{
	return t->group.me;
}

const struct kernel_features *tracer__kernel(const struct tracer *t)
{
	return &t->kernel;
}

/* Every tracked process that has not finished, its running slices closed now, into end. */
static void read_live_procs(struct tracer *t, struct trace_end *end)
{
	int procs_fd = bpf_map__fd(t->skel->maps.procs);
	int threads_fd = bpf_map__fd(t->skel->maps.threads);
	int mms_fd = bpf_map__fd(t->skel->maps.mms);
	__u32 key, next, *prev = NULL;
	size_t cap = 0;

	while (bpf_map_get_next_key(procs_fd, prev, &next) == 0) {
		struct tracer_live_proc live = { .pid = next };
		struct tracer_live_proc *bigger;
		__u32 tkey, tnext, *tprev = NULL;
		struct um_proc proc;
		struct um_mm mm;

		key = next;
		prev = &key;
		/* another run's (a node's set) */
		if (bpf_map_lookup_elem(procs_fd, &key, &proc) || proc.group != t->group.tag)
			continue;
		/*
		 * Pages CPUs still hold for its threads, taken out before the process is read: a
		 * switch-out charges them to the process, so read after, they could count twice or,
		 * read before the process, not at all.
		 */
		while (bpf_map_get_next_key(threads_fd, tprev, &tnext) == 0) {
			struct um_thread th;

			tkey = tnext;
			tprev = &tkey;
			if (bpf_map_lookup_elem(threads_fd, &tkey, &th) || th.tgid != key)
				continue;
			for (__u32 cpu = 0; cpu < t->skel->rodata->nr_possible_cpus; cpu++)
				if (__atomic_load_n(&t->skel->bss->cpu_running[cpu], __ATOMIC_SEQ_CST) ==
				    um_cpu_running_entry(tkey, 1))
					live.page_alloc_bytes += __atomic_exchange_n(
						&t->skel->bss->cpu_pending_alloc[cpu].bytes, 0,
						__ATOMIC_SEQ_CST);
		}
		tprev = NULL;
		if (bpf_map_lookup_elem(procs_fd, &key, &proc))
			continue;
		live.ppid = proc.ppid;
		live.cpu_ns = proc.cpu_ns;
		live.peak_rss_bytes = proc.peak_rss_bytes;
		live.page_alloc_bytes += proc.page_alloc_bytes;
		live.output_bytes = proc.output_bytes;
		live.tmp_output_bytes = t->cfg->tmp_dir_ino ? proc.tmp_output_bytes : UM_TMP_UNKNOWN;
		live.threads = proc.threads_seen;
		if (proc.mm && bpf_map_lookup_elem(mms_fd, &proc.mm, &mm) == 0 &&
		    mm.peak_rss_bytes > live.peak_rss_bytes)
			live.peak_rss_bytes = mm.peak_rss_bytes;
		/* close the slices still running: what the scheduler has charged since the last switch */
		while (bpf_map_get_next_key(threads_fd, tprev, &tnext) == 0) {
			struct um_thread th;
			__u64 runtime;

			tkey = tnext;
			tprev = &tkey;
			if (bpf_map_lookup_elem(threads_fd, &tkey, &th) || th.tgid != key)
				continue;
			if (task_runtime_ns(key, tkey, &runtime) == 0 && runtime > th.runtime_seen_ns)
				live.cpu_ns += runtime - th.runtime_seen_ns;
		}
		bigger = um_grow(end->live, &cap, end->n_live + 1, sizeof(*bigger), 64);
		if (!bigger)
			break; /* the rest have null figures, as if their exit were lost */
		end->live = bigger;
		end->live[end->n_live++] = live;
	}
}

void tracer__end(struct tracer *t, struct trace_end *end)
{
	memset(end, 0, sizeof(*end));
	/* first, before the long writes: no process may stay held at an exec nobody reads; this
	 * also reads every record still in the ring */
	stop_holding(t);
	read_counters(t, &end->counters);
	read_live_procs(t, end);
	end->stop_ns = um_monotonic_ns();
	/* every unit's record is read: NVML has nothing more to read */
	end->nvml_loaded = t->nvml != NULL;
	snprintf(end->nvml_why, sizeof(end->nvml_why), "%s", t->nvml_why);
	nvml_done(t);
	timeline_drain(t, true);
	if (t->timeline)
		t->timeline->overruns = t->group.me->timeline_overruns;
	end->timeline = t->timeline;
	t->timeline = NULL;
	memcpy(end->found_path, t->found_path, sizeof(end->found_path));
	memset(t->found_path, 0, sizeof(t->found_path));
}

void trace_end__free(struct trace_end *end)
{
	free(end->live);
	free(end->timeline);
	for (size_t i = 0; i < UM_MAX_SPECS; i++)
		free(end->found_path[i]);
	memset(end, 0, sizeof(*end));
}



static int ignore_record(void *ctx, void *data, size_t size, const struct gpu_nvml_unit *nvml)
{
	(void)ctx;
	(void)data;
	(void)size;
	(void)nvml;
	return 0;
}

int tracer_check(FILE *out)
{
	struct tracer_config cfg = { .own_programs = true };
	struct kernel_features k;
	struct tracer *t = NULL;
	const char *how;
	int err;

	kernel_features_fresh();
	kernel_features_read(&k);
	kernel_features_print(out, &k);
	if (k.root) {
		struct fault_hook_cost cost;

		/* measured here only: a run pays for no trial it does not need */
		fault_hook_measure(&cost);
		fault_hook_cost_print(out, &cost);
	}
	if (k.build == KERNEL_BUILD_NONE) {
		fprintf(out, "verdict: unitmeter cannot trace here\n");
		fflush(out);
		um_err("%s", k.refusal);
		return 2;
	}
	fflush(out);
	err = tracer__open(&t, &cfg, ignore_record, NULL);
	if (!err)
		err = tracer__attach(t);
	tracer__destroy(t);
	if (err) {
		fprintf(out, "verdict: the programs did not load or attach here (the line above says "
			"why)\n");
		return 2;
	}
	fprintf(out, "trial: loaded and attached, then detached\n");
	how = k.thread_rss_caches ? "each thread's RSS cache is read at the end of every fault" :
				    "mm counters are read at each change";
	if (k.build == KERNEL_BUILD_BASELINE)
		/* docs/limitations.md: the baseline's shared counters are under one lock */
		fprintf(out, "verdict: unitmeter works here; every figure is exact (%s), but for a "
			"peak where an update could not have the baseline build's lock in time "
			"(counted in the manifest's run.tracing.lock_timeouts; seen only in emulated "
			"machines)\n", how);
	else
		fprintf(out, "verdict: unitmeter works here; every figure is exact (%s)\n", how);
	return 0;
}

static void *destroy_link(void *link)
{
	uprobe_link_destroy(link);
	return NULL;
}

/*
 * Closing a uprobe link waits for an RCU grace period (70-130 ms each on these machines), and one
 * after the other they were most of a short run's tear-down: close them side by side, each in a
 * thread of its own, and wait for all.
 */
static void destroy_links_in_parallel(struct uprobe_link *links, size_t n)
{
	pthread_t *threads = calloc(n ? n : 1, sizeof(*threads));
	bool *started = calloc(n ? n : 1, sizeof(*started));

	for (size_t i = 0; i < n; i++) {
		if (threads && started)
			started[i] = !pthread_create(&threads[i], NULL, destroy_link, &links[i]);
		if (!started || !started[i])
			uprobe_link_destroy(&links[i]);
	}
	for (size_t i = 0; threads && started && i < n; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
	free(threads);
	free(started);
}

/* Free the BPF side: the probes' links closed side by side, then the rest. */
static void tracer_release(struct tracer *t)
{
	nvml_done(t);
	ring_buffer__free(t->rb);
	destroy_links_in_parallel(t->unit_links, t->n_unit_links);
	/* after this run's probes are gone: none of them can count for the group any more */
	group_release(t);
	node_programs_release(&t->node);
	for (int i = 0; i < UNIT_PROGRAMS; i++)
		if (t->unit_prog_fd[i] >= 0)
			close(t->unit_prog_fd[i]);
	run_group_close(&t->group);
	free(t->unit_links);
	free(t->held);
	free(t->joined);
	free(t->timeline);
	claims_sweep_free(&t->claims_sweep);
	for (size_t i = 0; i < UM_MAX_SPECS; i++)
		free(t->found_path[i]);
	unitmeter_bpf__destroy(t->skel);
	free(t);
}

void tracer__destroy_detached(struct tracer *t)
{
	int gate[2];
	pid_t pid;

	if (!t)
		return;
	/* the group back at once, by this process, which owns it: the slot is free for the next
	 * run when this one exits, not once the kernel has released the programs */
	group_release(t);
	nvml_done(t);
	/* the child waits on the gate's read end; this process's exit closes the write end */
	if (pipe(gate)) {
		tracer__destroy(t);
		return;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		char c;

		/* holds no terminal or pipe of the caller open: a reader of our output sees EOF
		 * when this process exits */
		close(gate[1]);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		while (read(gate[0], &c, 1) < 0 && errno == EINTR)
			;
		/* unitmeter has exited: release every object here, the probes side by side (one
		 * grace period in all, not one each: a run started meanwhile waits for them). The
		 * ring is not read again: the units stream is unitmeter's, and complete. */
		tracer_release(t);
		_exit(0);
	}
	close(gate[0]);
	if (pid < 0)
		close(gate[1]);
	/* gate[1] stays open until this process exits (close-on-exec: no exec follows) */
	else
		fcntl(gate[1], F_SETFD, FD_CLOEXEC);
	tracer__destroy(t);
}

void tracer__timing(const struct tracer *t, struct tracer_timing *out)
{
	*out = t ? t->timing : (struct tracer_timing){ 0 };
}

void tracer__destroy(struct tracer *t)
{
	if (!t)
		return;
	stop_holding(t);
	tracer_release(t);
}
