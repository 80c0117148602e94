// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/clock.h"
#include "common/fileio.h"
#include "common/grow.h"
#include "common/log.h"
#include "trace/run_group.h"
#include "unitmeter.skel.h"

size_t run_group_array_bytes(size_t size, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = ((size + 7) & ~(size_t)7) * n;

	return (bytes + page - 1) / page * page;
}

int run_group_map(struct run_group *g, struct unitmeter_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.groups);

	g->groups_bytes = run_group_array_bytes(sizeof(struct um_group),
						bpf_map__max_entries(skel->maps.groups));
	g->groups = mmap(NULL, g->groups_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (g->groups == MAP_FAILED) {
		int err = -errno;

		g->groups = NULL;
		um_err("cannot map the runs' table: %s", strerror(-err));
		return err;
	}
	return 0;
}

/*
 * A slot given back is taken again only this long after: a program that read its run's tag just
 * before has long ended (tracing programs run without sleeping, microseconds), so nothing more
 * is written for that run into the ring and buckets the next run of the slot takes over.
 */
#define SLOT_QUIET_NS (100 * 1000 * 1000ULL)

/* A process's start in clock ticks since boot (/proc/PID/stat's 22nd field); 0: gone. */
static uint64_t process_start_ticks(pid_t pid)
{
	unsigned long long ticks = 0;

	return um_proc_stat_field(pid, 22, &ticks) ? 0 : ticks;
}

/* Whether a group's registering run is gone (killed: its slot was never given back). */
bool run_group_owner_gone(const struct um_group *g)
{
	return process_start_ticks((pid_t)g->owner_pid) != g->owner_start_ticks;
}

static int discard_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

/*
 * The inner map a slot of outer holds (a ring, a timeline), opened, if it has the size this run
 * wants; -1 when none. A run's ring and timeline stay in their slot after it (nothing removed):
 * putting a map into an array of maps waits for an RCU grace period (15-20 ms here), which
 * the next run of the slot need not pay.
 */
static int slot_map_open(int outer_fd, __u32 slot, __u32 max_entries)
{
	struct bpf_map_info info = {};
	__u32 id = 0, len = sizeof(info);
	int fd;

	if (bpf_map_lookup_elem(outer_fd, &slot, &id) || !id)
		return -1;
	fd = bpf_map_get_fd_by_id(id);
	if (fd >= 0 && (bpf_obj_get_info_by_fd(fd, &info, &len) || info.max_entries != max_entries)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A run's ring size: the size asked (--ring-bytes), else 8 MiB (about 80,000 unit records). */
static __u32 ring_bytes(const struct tracer_config *cfg)
{
	return (__u32)(cfg->ring_bytes ? cfg->ring_bytes : 8 << 20);
}

static int ring_make(const struct tracer_config *cfg)
{
	return bpf_map_create(BPF_MAP_TYPE_RINGBUF, "um_ring", 0, 0, ring_bytes(cfg), NULL);
}

/* A run's timeline buckets, an array user space maps. */
static int timeline_make(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mmapable, .map_flags = BPF_F_MMAPABLE);

	return bpf_map_create(BPF_MAP_TYPE_ARRAY, "um_timeline", sizeof(__u32),
			      sizeof(struct um_timeline_bucket), UM_TIMELINE_SLOTS, &mmapable);
}

/*
 * Make this run a group in slot: its ring and its timeline's buckets, found in the slot or made
 * and put there, emptied of what an earlier run left; its configuration written, and its tag
 * last (struct um_group): from then on the programs count for it.
 */
int run_group_join(struct run_group *g, struct unitmeter_bpf *skel,
		   const struct tracer_config *cfg, __u32 slot)
{
	int rings_fd = bpf_map__fd(skel->maps.group_rings);
	int timelines_fd = bpf_map__fd(skel->maps.group_timelines);
	size_t timeline_bytes = run_group_array_bytes(sizeof(struct um_timeline_bucket),
						      UM_TIMELINE_SLOTS);
	const char *what;
	__u32 tag, generation;

	g->me = &g->groups[slot];
	what = "make the run's ring";
	g->ring_fd = slot_map_open(rings_fd, slot, ring_bytes(cfg));
	if (g->ring_fd >= 0) {
		/* records an earlier run of the slot left unread: not this run's */
		struct ring_buffer *rb = ring_buffer__new(g->ring_fd, discard_record, NULL, NULL);

		if (rb)
			ring_buffer__consume(rb);
		ring_buffer__free(rb);
	} else {
		g->ring_fd = ring_make(cfg);
		if (g->ring_fd < 0 || bpf_map_update_elem(rings_fd, &slot, &g->ring_fd, BPF_ANY))
			goto fail;
	}
	what = "make the run's memory timeline";
	g->timeline_fd = slot_map_open(timelines_fd, slot, UM_TIMELINE_SLOTS);
	if (g->timeline_fd < 0) {
		g->timeline_fd = timeline_make();
		if (g->timeline_fd < 0 ||
		    bpf_map_update_elem(timelines_fd, &slot, &g->timeline_fd, BPF_ANY))
			goto fail;
	}
	g->timeline_buckets = mmap(NULL, timeline_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
				   g->timeline_fd, 0);
	if (g->timeline_buckets == MAP_FAILED) {
		g->timeline_buckets = NULL;
		goto fail;
	}
	/* an earlier run's buckets: the programs write none for this slot until the tag is set */
	memset(g->timeline_buckets, 0, timeline_bytes);
	/* a generation more than the slot's last run: entries that run left are not this one's */
	generation = g->me->generation + 1;
	if (!(generation & 0xffffff))
		generation++; /* the tag never 0: a free slot's */
	tag = slot | (generation & 0xffffff) << 8;
	memset(g->me, 0, sizeof(*g->me));
	g->me->generation = generation;
	g->me->owner_pid = (__u32)getpid();
	g->me->owner_start_ticks = process_start_ticks(getpid());
	g->me->tmp_dir_dev = cfg->tmp_dir_dev;
	g->me->tmp_dir_ino = cfg->tmp_dir_ino;
	g->me->charge_cgroup_id = cfg->charge_cgroup_id;
	g->me->join_cgroup_id = cfg->join_cgroup_id;
	g->me->join_hierarchy_id = cfg->join_hierarchy_id;
	__atomic_store_n(&g->me->tag, tag, __ATOMIC_SEQ_CST);
	g->tag = tag;
	if (cfg->join_cgroup_id)
		__atomic_fetch_add(&skel->bss->join_watchers, 1, __ATOMIC_SEQ_CST);
	return 0;
fail:
	{
		int err = -errno;

		um_err("cannot %s: %s", what, strerror(-err));
		return err ? err : -EINVAL;
	}
}

/* Whether a sweep deletes an entry: its key, then its value (where the walk reads one). */
typedef bool (*sweep_doomed_fn)(const char *entry, const void *ctx);

/*
 * Delete every entry of a hash map that doomed names. Keys are gathered first, then deleted: a
 * walk that deletes as it goes starts over at the deleted key.
 */
static void sweep_map(int fd, size_t key_size, size_t value_size, sweep_doomed_fn doomed,
		      const void *ctx)
{
	size_t n = 0, cap = 0;
	char *keys = NULL, *bigger, prev[64], *entry = malloc(key_size + value_size);
	bool first = true;

	while (entry && key_size <= sizeof(prev) &&
	       bpf_map_get_next_key(fd, first ? NULL : prev, entry) == 0) {
		first = false;
		memcpy(prev, entry, key_size);
		if (value_size && bpf_map_lookup_elem(fd, entry, entry + key_size))
			continue;
		if (!doomed(entry, ctx))
			continue;
		bigger = um_grow(keys, &cap, n + 1, key_size, 64);
		if (!bigger)
			break;
		keys = bigger;
		memcpy(keys + n++ * key_size, entry, key_size);
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, keys + i * key_size);
	free(keys);
	free(entry);
}

/* A group's entries: its tag, a __u32 at `at` in the entry (key, then value). */
struct group_field {
	size_t at;
	__u32 tag;
};

static bool of_group(const char *entry, const void *ctx)
{
	const struct group_field *g = ctx;
	__u32 tag;

	memcpy(&tag, entry + g->at, sizeof(tag));
	return tag == g->tag;
}

/* Entries of a process or thread no longer tracked: the __u32 at id_at in the key (a tgid or
 * a tid) is no key of owners (procs or threads); value: room for one of owners' values. */
struct owner_map {
	int fd;
	size_t id_at;
	void *value;
};

static bool untracked(const char *entry, const void *ctx)
{
	const struct owner_map *o = ctx;
	__u32 id;

	memcpy(&id, entry + o->id_at, sizeof(id));
	return bpf_map_lookup_elem(o->fd, &id, o->value) != 0 && errno == ENOENT;
}

/* A group's entries of a map whose value (struct type) holds a `group` field. */
#define SWEEP_GROUP(fd, key_type, type, tag_)                                              \
	sweep_map(fd, sizeof(key_type), sizeof(type), of_group,                           \
		  &(struct group_field){ .at = sizeof(key_type) + offsetof(type, group),  \
					 .tag = (tag_) })

/*
 * Forget every entry a group left in the node's maps (its run ended, or was killed): its
 * processes, threads, mms and open units, the programs it looked up, and the device-memory
 * entries of processes and threads no longer tracked (keyed by tgid or tid, no group: swept
 * once their process's entry is gone). The programs no longer count for it (its tag is gone),
 * but its processes may still run, and would be looked up on every event.
 */
void run_group_sweep(struct unitmeter_bpf *skel, __u32 tag)
{
	int units_fd = bpf_map__fd(skel->maps.units), procs_fd = bpf_map__fd(skel->maps.procs);
	int threads_fd = bpf_map__fd(skel->maps.threads);

	struct um_proc proc_room;
	struct um_thread thread_room;
	struct owner_map procs = { .fd = procs_fd, .value = &proc_room };
	struct owner_map procs_by_key = { .fd = procs_fd, .id_at = offsetof(struct um_gpu_key, tgid),
					  .value = &proc_room };
	struct owner_map threads = { .fd = threads_fd, .value = &thread_room };

	SWEEP_GROUP(procs_fd, __u32, struct um_proc, tag);
	SWEEP_GROUP(threads_fd, __u32, struct um_thread, tag);
	SWEEP_GROUP(bpf_map__fd(skel->maps.mms), __u64, struct um_mm, tag);
	sweep_map(bpf_map__fd(skel->maps.exec_programs), sizeof(struct um_exec_key), 0, of_group,
		  &(struct group_field){ .at = offsetof(struct um_exec_key, group), .tag = tag });
	sweep_map(bpf_map__fd(skel->maps.gpu_procs), sizeof(__u32), 0, untracked, &procs);
	sweep_map(bpf_map__fd(skel->maps.gpu_allocs), sizeof(struct um_gpu_key), 0, untracked,
		  &procs_by_key);
	sweep_map(bpf_map__fd(skel->maps.gpu_ctxs), sizeof(struct um_gpu_key), 0, untracked,
		  &procs_by_key);
	sweep_map(bpf_map__fd(skel->maps.gpu_threads), sizeof(__u32), 0, untracked, &threads);
	sweep_map(bpf_map__fd(skel->maps.gpu_calls), sizeof(__u32), 0, untracked, &threads);
	/* open units: their slots freed (a unit's id gone, nothing more is charged to it); read in
	 * one call, not 4,096 */
	{
		struct um_unit *units = calloc(UM_UNIT_SLOTS, sizeof(*units));
		__u32 *slots = calloc(UM_UNIT_SLOTS, sizeof(*slots)), out = 0, count = UM_UNIT_SLOTS;
		LIBBPF_OPTS(bpf_map_batch_opts, batch);

		if (units && slots &&
		    (bpf_map_lookup_batch(units_fd, NULL, &out, slots, units, &count, &batch) == 0 ||
		     errno == ENOENT))
			for (__u32 i = 0; i < count; i++)
				if (units[i].id && units[i].group == tag) {
					units[i].id = 0;
					bpf_map_update_elem(units_fd, &slots[i], &units[i], BPF_ANY);
				}
		free(units);
		free(slots);
	}
}

/*
 * Register this run as a group of the node's set, under the node's lock: the first slot free
 * or whose run is gone (its entries swept first).
 */
int run_group_register(struct run_group *g, struct unitmeter_bpf *skel,
		       const struct tracer_config *cfg)
{
	__u32 n = bpf_map__max_entries(skel->maps.groups), best = n, fresh = n, id;
	int rings_fd = bpf_map__fd(skel->maps.group_rings);
	uint64_t now = um_monotonic_ns();
	int err = run_group_map(g, skel);

	if (err)
		return err;
	for (__u32 slot = 0; slot < n; slot++) {
		struct um_group *other = &g->groups[slot];
		__u32 tag = __atomic_load_n(&other->tag, __ATOMIC_SEQ_CST);

		if (tag && !run_group_owner_gone(other))
			continue;
		if (tag) {
			um_info("group %u: its run (process %u) is gone; its entries are swept", slot,
				other->owner_pid);
			__atomic_store_n(&other->tag, 0, __ATOMIC_SEQ_CST);
			if (other->join_cgroup_id)
				__atomic_fetch_sub(&skel->bss->join_watchers, 1, __ATOMIC_SEQ_CST);
			run_group_sweep(skel, tag);
			other->released_ns = now;
			continue; /* its programs may still be writing for it: quiet first */
		}
		id = 0;
		if (bpf_map_lookup_elem(rings_fd, &slot, &id) || !id) {
			if (fresh == n)
				fresh = slot;
		} else if (now - other->released_ns >= SLOT_QUIET_NS &&
			   (best == n || other->released_ns < g->groups[best].released_ns)) {
			best = slot;
		}
	}
	if (best == n)
		best = fresh;
	if (best == n) {
		um_err("%u runs already trace on this node, the most one set of programs serves", n);
		return -EBUSY;
	}
	return run_group_join(g, skel, cfg, best);
}

bool run_group_give_back(struct run_group *g, struct unitmeter_bpf *skel,
			 const struct tracer_config *cfg)
{
	__u32 slot = UM_GROUP_SLOT(g->tag), n, tag = g->tag;
	bool others = false;

	/* still this run's: a run that found it gone (a copy of this process outliving it, the
	 * detached release) may have taken the slot, which is then its own */
	if (__atomic_compare_exchange_n(&g->me->tag, &tag, 0, false, __ATOMIC_SEQ_CST,
					__ATOMIC_SEQ_CST)) {
		if (cfg->join_cgroup_id)
			__atomic_fetch_sub(&skel->bss->join_watchers, 1, __ATOMIC_SEQ_CST);
		/* its ring and timeline stay, for the slot's next run, as does its generation */
		g->me->owner_pid = 0;
		g->me->released_ns = um_monotonic_ns();
		n = bpf_map__max_entries(skel->maps.groups);
		for (__u32 i = 0; i < n && !others; i++)
			others = i != slot && g->groups[i].tag && !run_group_owner_gone(&g->groups[i]);
	} else {
		others = true; /* not ours to say */
	}
	run_group_sweep(skel, g->tag);
	return !others;
}

void run_group_close(struct run_group *g)
{
	if (g->timeline_buckets)
		munmap(g->timeline_buckets,
		       run_group_array_bytes(sizeof(struct um_timeline_bucket), UM_TIMELINE_SLOTS));
	if (g->groups)
		munmap(g->groups, g->groups_bytes);
	if (g->ring_fd >= 0)
		close(g->ring_fd);
	if (g->timeline_fd >= 0)
		close(g->timeline_fd);
	g->timeline_buckets = NULL;
	g->groups = NULL;
	g->ring_fd = g->timeline_fd = -1;
}

static void *slot_fill_run(void *arg)
{
	struct slot_fill *f = arg;
	__u32 slot = 0;

	if (bpf_map_update_elem(f->rings_fd, &slot, &f->ring_fd, BPF_ANY) ||
	    bpf_map_update_elem(f->timelines_fd, &slot, &f->timeline_fd, BPF_ANY))
		f->err = -errno;
	return NULL;
}

void slot_fill_start(struct slot_fill *f, struct unitmeter_bpf *skel,
		     const struct tracer_config *cfg)
{
	LIBBPF_OPTS(bpf_map_create_opts, outer);
	__u32 n = bpf_map__max_entries(skel->maps.groups);

	memset(f, 0, sizeof(*f));
	f->rings_fd = f->timelines_fd = -1;
	f->ring_fd = ring_make(cfg);
	f->timeline_fd = timeline_make();
	if (f->ring_fd < 0 || f->timeline_fd < 0)
		return;
	outer.inner_map_fd = f->ring_fd;
	f->rings_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "group_rings", sizeof(__u32),
				     sizeof(__u32), n, &outer);
	outer.inner_map_fd = f->timeline_fd;
	f->timelines_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "group_timelines",
					 sizeof(__u32), sizeof(__u32), n, &outer);
	/* libbpf's own way where any of it fails: its maps, the updates after the load */
	if (f->rings_fd < 0 || f->timelines_fd < 0 ||
	    bpf_map__reuse_fd(skel->maps.group_rings, f->rings_fd) ||
	    bpf_map__reuse_fd(skel->maps.group_timelines, f->timelines_fd))
		return;
	f->started = !pthread_create(&f->thread, NULL, slot_fill_run, f);
}

void slot_fill_finish(struct slot_fill *f)
{
	if (f->started)
		pthread_join(f->thread, NULL);
	if (f->err)
		um_info("cannot put the first slot's ring in place ahead (%s): it is made again",
			strerror(-f->err));
	/* the outer maps hold what they took; the skeleton holds its own copies of theirs */
	for (int *fd = &f->rings_fd; fd <= &f->timeline_fd; fd++)
		if (*fd >= 0)
			close(*fd);
}
