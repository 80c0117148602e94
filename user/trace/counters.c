// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the run's programs counted, read at its end: the group's figures, the counters of what
 * the programs could not do (the node's change while this run traced, in a set), each
 * program's recursion misses, and the processes still alive with their slices closed now.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/fileio.h"
#include "common/grow.h"
#include "common/log.h"
#include "trace/tracer_internal.h"

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

void read_counters(struct tracer *t, struct tracer_counters *c)
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

/* Every tracked process that has not finished, its running slices closed now, into end. */
void read_live_procs(struct tracer *t, struct trace_end *end)
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
