// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracer's programs: which build the kernel takes, which of its programs this run needs, and
 * loading them, or joining the node's set of them (node_programs.h) as a group of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/log.h"
#include "trace/bpf_words.h"
#include "trace/tracer_internal.h"
#include "unitmeter_thread_cache.skel.h"
#include "unitmeter_baseline.skel.h"

/* The other objects are opened through the per-CPU one's skeleton struct: the build proves the
 * three declare the same programs, maps and globals (tools/skel-layout.sh). */
_Static_assert(sizeof(struct unitmeter_bpf) == sizeof(struct unitmeter_baseline_bpf),
	       "the baseline skeleton differs");
_Static_assert(sizeof(struct unitmeter_bpf) == sizeof(struct unitmeter_thread_cache_bpf),
	       "the thread-cache skeleton differs");

const char *const unit_program_names[UNIT_PROGRAMS] = { "unit_enter", "unit_return" };

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
struct bpf_program *spec_entry_program(struct tracer *t, uint32_t n)
{
	char name[32];

	snprintf(name, sizeof(name), "unit_enter_%u", n);
	return bpf_object__find_program_by_name(t->skel->obj, name);
}

/*
 * Multi-uprobe links where the kernel makes them; UNITMETER_UPROBE_LINK=perf takes perf events
 * anyway (the bench's comparison, and the tests' check that both count the same).
 */
bool use_uprobe_multi(const struct kernel_features *k)
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
	/* without unit specs the uprobe programs are not even verified: a faster start; with
	 * cookies, the markers enter through unit_enter too (UM_SPEC_FROM_ARG) */
	bpf_program__set_autoload(t->skel->progs.unit_enter, cookies && (natives || markers));
	bpf_program__set_autoload(t->skel->progs.unit_enter_marker, !cookies && markers);
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
void group_release(struct tracer *t)
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
int skel_prepare(struct tracer *t, bool node)
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
int skel_load(struct tracer *t)
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
void node_counts_read(const struct unitmeter_bpf *skel, struct node_counts *c)
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
int open_node_programs(struct tracer *t)
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

/*
 * The programs this run traces with: the node's set, joined or loaded, with this run a group
 * of it; else (a trial, the baseline, UNITMETER_PROGRAMS=own, the set unusable) its own, said
 * in -v with why. 0 or a negative errno, one line said.
 */
int load_programs(struct tracer *t)
{
	const char *own_why;
	int err = 0;

	own_why = t->cfg->own_programs ? "a trial of this run's own"
					: node_programs_refusal(&t->kernel);
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
			      run_group_join(&t->group, t->skel, t->cfg, 0);
	}
	return err;
}
