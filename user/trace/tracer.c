// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracer: open (the kernel read, the programs loaded or joined), attach, poll the ring,
 * end (everything it holds handed over in one struct trace_end), release. Its other jobs are in
 * load.c, track.c, probes.c and counters.c (tracer_internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/clock.h"
#include "common/grow.h"
#include "common/log.h"
#include "trace/bpf_words.h"
#include "trace/tracer_internal.h"

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

/*
 * Every record goes to the consumer as it came. A process held at its exec is only queued: the
 * caller's loop looks it up and continues it (tracer__service_held) once the batch is read, where
 * a reader of the loop sees it. Should the queue not grow, it is served at once: a held process
 * must never be forgotten.
 */
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

int tracer__open(struct tracer **out, const struct tracer_config *cfg, tracer_record_fn fn,
		 void *ctx)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int n_cpus = libbpf_num_possible_cpus();
	uint64_t t0 = um_monotonic_ns();
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
	err = load_programs(t);
	if (err)
		goto fail;
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
