// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Units: one call of a unit function in one process, from the uprobe on its entry to the
 * uretprobe on its return. Only the outermost call opens a unit; the same return program serves
 * every spec. The entry program learns the spec's index from the attach cookie (unit_enter) or,
 * on kernels without cookies (the baseline build), from which of the unit_enter_N programs runs;
 * for interpreted code the begin marker's first argument is the index (unit_enter again, its
 * cookie saying so; unit_enter_marker without cookies), and the end marker's entry takes the
 * return program.
 */
#include "model.bpf.h"
#include "charge.bpf.h"
#include "gpu.bpf.h"

/* Unit records waiting in the ring before the reader is woken: ~600 units. */
#define UM_WAKEUP_BYTES (64 * 1024)

struct unit_edge {
	__u64 id;
	__u64 start_ns;
	__u64 start_steal_ns;
	__u32 start_cpu;
	__u32 closer_tid;      /* the thread closing the unit, whose CPU's steal we can read */
	__u64 closer_steal_ns; /* that CPU's cumulative steal now */
	__u64 now;
	__u64 cpu_ns;
	__u32 slot;
};

/* One scope thread's running slice being handed over to a close (hand_over_try). */
struct slice_look {
	__u64 id;       /* the closing unit */
	__u64 start_ns; /* its edges */
	__u64 now;
	__u64 cpu_ns;   /* what the close took */
	__u32 slot;
	__u32 tid;
};

#if !UM_HAVE_BPF_LOOP
/*
 * The baseline's waits for a few instructions of another CPU (compat.bpf.h, UM_WAIT_ROUNDS):
 * each round a function the old verifier walks once, not once per reread.
 */
__noinline int slice_wait_spin(__u32 tid, __u32 state)
{
	struct um_thread *th = bpf_map_lookup_elem(&threads, &tid);

	if (!th)
		return 1;
	for (int k = 0; k < UM_WAIT_SPIN; k++)
		if (UM_SLICE_STATE(*(volatile __u64 *)&th->slice) != state)
			return 1;
	return 0;
}

/*
 * Until tid's word leaves this state (its CPU's switch has gone on): whether it did. A function
 * too: inlined in the close's tries, its rounds took 5.10's verifier past a million steps. The
 * chain it ends (a close at a process's last switch-out) is then 512 bytes of stack, what 5.10
 * allows (unit_close_locked and close_take_cpu keep their keys in functions of their own).
 */
__noinline int slice_wait(__u32 tid, __u32 state)
{
	for (int i = 0; i < UM_WAIT_ROUNDS; i++)
		if (slice_wait_spin(tid, state))
			return 1;
	return 0;
}
#endif

#if !UM_HAVE_FETCH_ATOMICS
/* The baseline's handover keys and edge keys: model.bpf.h says why each step is enough. */
__noinline __u64 key_first_value(__u32 tid, __u32 seq, __u64 id, __u64 value)
{
	struct um_slice_claim key = { .tid = tid, .seq = seq, .unit_id = id };
	__u64 *held;
	int err;

	/* twice: a key removed between the insert and the look (an edge's, by its fixer) is
	 * inserted again, under the bucket lock its remover has left */
	for (int i = 0; i < 2; i++) {
		err = bpf_map_update_elem(&slice_claims, &key, &value, BPF_NOEXIST);
		if (!err)
			return value;
		if (err != -UM_EEXIST)
			break;
		held = bpf_map_lookup_elem(&slice_claims, &key);
		if (held)
			return *held | UM_KEY_HELD;
	}
	if (err != -UM_EEXIST)
		__sync_fetch_and_add(&handover_timeouts, 1);
	return 0;
}

/*
 * A function, for the stack of sched_switch's deepest chain (a close at a process's last
 * switch-out, 512 bytes on 5.10), which inlined it four times.
 */
__noinline __u64 unit_edge_pending(__u32 slot, __u32 which, __u64 now)
{
	struct um_unit *unit = bpf_map_lookup_elem(&units, &slot);
	__u64 instant, seen;

	if (!unit)
		return now;
	instant = unit_edge_claim(unit->id, which, now);
	/* the edge is written before its key goes: reread after the answer (arm64 reorders
	 * loads; a rare path, taken only in the instant an edge is pending) */
	um_order_fence();
	seen = *(volatile __u64 *)unit_edge(unit, which);
	if (seen != UM_EDGE_PENDING)
		return seen;
	return instant ? instant : now;
}

__noinline int unit_edge_forget(__u64 id, __u32 which)
{
	struct um_slice_claim key = { .seq = which, .unit_id = id };

	bpf_map_delete_elem(&slice_claims, &key);
	return 0;
}
#endif

/*
 * The close's side of the handover of a RUNNING slice: whether it has the slice for its unit
 * (1), another has it (0), or it cannot tell (-1). With an exchange, a compare-and-swap of the
 * word for the word with its claim (next); in the baseline, the slice's key (model.bpf.h).
 */
static __always_inline int close_claim(struct um_thread *th, __u64 word, __u64 next,
				       struct slice_look *look)
{
#if UM_HAVE_FETCH_ATOMICS
	return um_cas(&th->slice, word, next) == word;
#else
	switch (slice_key_claim(look->tid, word >> 32, look->id, UM_CLAIM_BY_CLOSE)) {
	case UM_CLAIM_WON:
		return 1;
	case UM_CLAIM_LOST:
		return 0; /* its switch-out's: the next look waits for its adds */
	default:
		return -1; /* this close's already, or the map full (counted) */
	}
#endif
}

/*
 * One look at a scope thread's handover word (model_pure.bpf.h). Returns 1 when the thread is
 * settled: its part counted here, or left to its switch-out, which has added it by the time
 * its word is OFF; 0 to look again (its switch-in or switch-out is under way on its CPU).
 */
static long hand_over_try(__u64 i, void *arg)
{
	struct slice_look *look = arg;
	struct um_thread *th = bpf_map_lookup_elem(&threads, &look->tid);
	__u64 word, since, next = 0;
	int claimed;

	if (!th)
		return 1; /* gone: its last switch-out added its slice before the entry went */
	word = *(volatile __u64 *)&th->slice;
	/* the slice's own switch-in time: written before its word went RUNNING, and unchanged
	 * while the compare-and-swap below finds the same word (a new slice has a new number); in
	 * the baseline, until the slice's switch-out has tried its key, after the close's */
	since = *(volatile __u64 *)&th->on_cpu_since_ns;
	switch (slice_close_step(word, look->slot, &next)) {
	case UM_SLICE_STEP_CLAIM:
		claimed = close_claim(th, word, next, look);
		if (claimed < 0)
			return 1; /* nothing to count here */
		if (!claimed)
			return 0;
		since = since > look->start_ns ? since : look->start_ns;
		if (look->now > since)
			look->cpu_ns += look->now - since;
		return 1;
	case UM_SLICE_STEP_WAIT:
#if !UM_HAVE_BPF_LOOP
		/* without bpf_loop each try is verified apart: wait on the word alone a while */
		slice_wait(look->tid, UM_SLICE_STATE(word));
#endif
		return 0;
	case UM_SLICE_STEP_FULL:
		__sync_fetch_and_add(&handover_timeouts, 1);
		return 1;
	default:
		return 1;
	}
}

/* Settle one scope thread found on a CPU (hand_over_try), a bounded number of looks. */
static __always_inline void hand_over(struct slice_look *look, __u32 tid)
{
	look->tid = tid;
	if (UM_LOOP(UM_HANDOVER_TRIES, hand_over_try, look) >= UM_HANDOVER_TRIES)
		__sync_fetch_and_add(&handover_timeouts, 1);
}

/* Whether a tracked thread's process is in the unit's scope. */
static __always_inline struct um_proc *scope_proc(struct um_thread *th, __u64 id)
{
	__u32 tgid = th->tgid;
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);

	if (!proc || (proc->units[0] != id && proc->units[1] != id))
		return NULL;
	return proc;
}

/*
 * One CPU of a close's scan (add_running_slices): a scope thread it runs has its running slice
 * so far handed over, and its pages charged. Returns the CPU time taken for the unit. A function
 * verified once, on its own: inlined in the scan, its body (with the baseline's unrolled waits)
 * was verified once for every possible CPU, and 5.10's verifier refused the programs at 64.
 */
__noinline __u64 close_take_cpu(__u64 id, __u64 now, __u64 start_ns, __u32 cpu, __u32 closer_tid)
{
	struct slice_look look = { .id = id, .now = now, .start_ns = start_ns, .slot = unit_slot(id) };
	__u64 seen;
	__u32 tid;
	struct um_thread *th;
	struct um_proc *proc;

	if (cpu >= UM_MAX_CPUS)
		return 0;
	seen = *(volatile __u64 *)&cpu_running[CPU_SLOT(cpu)];
	tid = seen >> 1;
	if (!(seen & 1) || tid == closer_tid)
		return 0;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (!th)
		return 0;
	proc = scope_proc(th, id);
	if (!proc)
		return 0;
	cpu_pending_charge(cpu, tid, proc);
	hand_over(&look, tid);
	return look.cpu_ns;
}

/*
 * Other scope threads still on a CPU when the unit closes: their running slices so far count
 * (handed over), and the pages their CPUs hold. What each CPU runs is in cpu_running, so the loop
 * is over CPUs (a handful) rather than every tracked thread. A thread switching in on a CPU after
 * its entry was read here arrives after the close's instant (thread_switch_in); one switching
 * out is still named by its CPU's entry until its adds are done.
 */
static __always_inline void add_running_slices(struct unit_edge *edge)
{
	for (__u32 cpu = 0; cpu < nr_possible_cpus && cpu < UM_MAX_CPUS; cpu++)
		edge->cpu_ns += close_take_cpu(edge->id, edge->now, edge->start_ns, cpu,
					       edge->closer_tid);
}

/*
 * Give back the claim of the unit in slot on tid's slice (model_pure.bpf.h) before the slot can
 * hold another unit, whose close would take it for its own.
 */
static __always_inline void unclaim_thread(__u32 slot, __u32 tid)
{
	struct um_thread *th = bpf_map_lookup_elem(&threads, &tid);
	__u64 word;

	if (!th)
		return;
	/* each failed swap is another close's claim or this slice's switch-out: a few at most */
	for (int i = 0; i < 4; i++) {
		word = *(volatile __u64 *)&th->slice;
		if (UM_SLICE_STATE(word) != UM_SLICE_RUNNING || !slice_claimed_by(word, slot))
			return;
		if (um_cas(&th->slice, word, slice_unclaimed(word, slot)) == word)
			return;
	}
	__sync_fetch_and_add(&handover_timeouts, 1);
}

/*
 * unclaim_thread for the thread a CPU runs (a claimed slice is still running, so its CPU still
 * names its thread). Verified once, as close_take_cpu.
 */
__noinline int close_unclaim_cpu(__u32 slot, __u32 cpu, __u32 closer_tid)
{
	__u64 seen;

	if (cpu >= UM_MAX_CPUS)
		return 0;
	seen = *(volatile __u64 *)&cpu_running[CPU_SLOT(cpu)];
	if ((seen & 1) && (__u32)(seen >> 1) != closer_tid)
		unclaim_thread(slot, seen >> 1);
	return 0;
}

static __always_inline void unclaim_running(struct unit_edge *edge)
{
	for (__u32 cpu = 0; cpu < nr_possible_cpus && cpu < UM_MAX_CPUS; cpu++)
		close_unclaim_cpu(edge->slot, cpu, edge->closer_tid);
}

/* Count an unseen switch-in against the untracked thread this CPU was last seen switching to. */
static long unseen_note(__u64 i, void *arg)
{
	__u32 tid = *(__u32 *)arg, slot = i & (UM_UNSEEN_SLOTS - 1);
	__u32 seen = unseen_after_tid[slot];

	/* a free slot is taken for this thread (or by another CPU for it); another's is passed */
	if (!seen) {
		seen = um_cas(&unseen_after_tid[slot], 0, tid);
		seen = seen ? seen : tid;
	}
	if (seen != tid)
		return 0;
	__sync_fetch_and_add(&unseen_after_count[slot], 1);
	return 1;
}
_Static_assert((UM_UNSEEN_SLOTS & (UM_UNSEEN_SLOTS - 1)) == 0, "UM_UNSEEN_SLOTS a power of two");

/*
 * The closing thread's switch-in was not seen: the kernel switched to it without the
 * sched_switch tracepoint (on these machines, every switch away from the sandbox agent's
 * threads: docs/limitations.md). Returns its CPU since its last seen switch-out, to the ns
 * (unseen_run_ns), or 0 when a clock is missing (the caller keeps the runtime as of the last
 * tick).
 */
static __always_inline __u64 unseen_slice(struct unit_edge *edge, struct um_thread *th)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 seen = cpu < UM_MAX_CPUS ? cpu_running[CPU_SLOT(cpu)] : 0, runtime;
	__u32 after = seen >> 1;

	__sync_fetch_and_add(&switch_in_misses, 1);
	if (!(seen & 1) && after)
		UM_LOOP(UM_UNSEEN_SLOTS, unseen_note, &after);
	runtime = unseen_run_ns(th, edge->now);
	if (runtime)
		__sync_fetch_and_add(&switch_in_misses_exact, 1);
	return runtime;
}

/*
 * The closing thread is on its CPU by definition. Its slice so far is the wall-clock span since
 * its switch-in, less the steal inside it; the close claims it like any other (a close that is
 * preempted switches its own thread out). A thread found not RUNNING here had its switch-in not
 * seen (unseen_slice); the scheduler's count as of the last tick is the floor in any case.
 */
static __always_inline __u64 closer_slice(struct unit_edge *edge)
{
	struct um_thread *th = bpf_map_lookup_elem(&threads, &edge->closer_tid);
	__u64 span = 0, runtime, inside, start_steal, word, next = 0, since = 0, unseen;
	bool running = false;

	if (!th)
		return 0;
	/* the unit's start, as seen on this thread's CPU (another CPU's steal is not comparable) */
	start_steal = edge->start_cpu == th->cpu ? edge->start_steal_ns : edge->closer_steal_ns;
	inside = edge->now > edge->start_ns ? edge->now - edge->start_ns : 0;
	inside = on_cpu_span(inside, start_steal, edge->closer_steal_ns);
	for (int i = 0; i < 4 && !running; i++) {
		word = *(volatile __u64 *)&th->slice;
		since = *(volatile __u64 *)&th->on_cpu_since_ns;
		if (slice_close_step(word, edge->slot, &next) != UM_SLICE_STEP_CLAIM)
			break;
		running = um_cas(&th->slice, word, next) == word;
	}
	runtime = CURRENT_READ(se.sum_exec_runtime);
	runtime = runtime > th->runtime_seen_ns ? runtime - th->runtime_seen_ns : 0;
	if (!running) {
		unseen = unseen_slice(edge, th);
		if (unseen > runtime)
			runtime = unseen;
	} else if (since >= edge->now) {
		/* preempted while its close fixed the instant: its switch-out fixed it, and added
		 * the slice before; this one began after */
		return 0;
	} else if (since > edge->start_ns) {
		span = edge->now > since ?
		       on_cpu_span(edge->now - since, th->steal_at_in_ns, edge->closer_steal_ns) : 0;
	} else {
		span = inside; /* on its CPU since before the unit began */
	}
	/* accounted up to a switch-out before the unit began: only the part inside counts */
	if (th->last_out_ns < edge->start_ns && runtime > inside)
		runtime = inside;
	return span > runtime ? span : runtime;
}

/* A tmp dir figure of group's: the bytes, or UM_TMP_UNKNOWN when the run names no tmp dir. A
 * function: the group's lookup off the stack of the closes that call it. */
__noinline __u64 group_tmp_output_bytes(__u32 group, __u64 bytes)
{
	struct um_group *g = group_get(group);

	return g && g->tmp_dir_ino ? bytes : UM_TMP_UNKNOWN;
}

/* Whether group's ring holds a batch of records for its reader to be woken for. */
__noinline int group_ring_batch_waits(__u32 group)
{
	__u32 slot = UM_GROUP_SLOT(group);
	void *ring = bpf_map_lookup_elem(&group_rings, &slot);

	return ring && bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) > UM_WAKEUP_BYTES;
}

/*
 * Emit an open unit's record and free its slot. Only the owner's own lists forget the id here:
 * other processes of its scope keep it until their next unit opens (units_push), and nothing is
 * charged to a closed unit meanwhile (unit_get).
 */
__noinline int unit_close_locked(__u32 tgid, __u64 id, __u32 status)
{
	struct unit_edge edge = { .id = id };
	struct um_unit_record *rec;
	struct um_proc *owner;
	struct um_unit *unit;
	__u64 peak_charge;
	bool others;

	unit = unit_get(id);
	if (!unit)
		return 0;
	edge.slot = unit_slot(id);
	/* the close's instant (model.bpf.h), before any slice is looked at: switch-outs count
	 * nothing past it (the exchange is a full barrier before the reads of cpu_running below) */
	um_xchg(&unit->end_ns, UM_EDGE_PENDING);
	/* the baseline's exchange is plain: the end out before any thread's word is read */
	um_exchange_fence();
	edge.now = unit_edge_fix(unit, UM_EDGE_END);
	peak_charge = charge_unit_close_locked(id);
	owner = bpf_map_lookup_elem(&procs, &tgid);
	/* the closing thread's pages so far belong to the unit (at exit, already charged) */
	if (owner && current_tgid() == tgid)
		cpu_pending_charge(bpf_get_smp_processor_id(), (__u32)bpf_get_current_pid_tgid(),
				   owner);
	edge.start_ns = unit_edge_settle(unit, UM_EDGE_START);
	edge.start_steal_ns = unit->start_steal_ns;
	edge.start_cpu = unit->start_cpu;
	edge.closer_tid = (__u32)bpf_get_current_pid_tgid();
	edge.closer_steal_ns = current_cpu_steal_ns();
	edge.cpu_ns = closer_slice(&edge);
	/* a single-threaded process that forked nothing inside the unit (most fits) has no other
	 * thread in scope that could be running */
	others = !owner || unit->processes != 1 || owner->live_threads != 1;
	if (others)
		add_running_slices(&edge);
	if (owner) {
		struct um_mm *mm = owner->mm ? bpf_map_lookup_elem(&mms, &owner->mm) : NULL;

		units_remove(owner->units, id);
		if (mm)
			units_remove(mm->units, id);
		/*
		 * Forget the unit only if no entry has opened the next one meanwhile: without the lock
		 * (builds with atomics), another thread can enter the moment the return lowers the
		 * depth.
		 * The depth is the return's (and exec's) to change: zeroing it here wiped that
		 * thread's entry, and its unit never closed.
		 */
		um_cas(&owner->own_unit, id, 0);
	}

	rec = record_reserve(unit->group, sizeof(*rec));
	if (rec) {
		rec->type = UM_REC_UNIT;
		rec->pid = unit->pid;
		rec->spec = unit->spec;
		rec->status = status;
		rec->id = id;
		rec->start_ns = edge.start_ns;
		rec->end_ns = edge.now;
		rec->cpu_ns = unit->cpu_ns + edge.cpu_ns;
		rec->start_rss_bytes = unit->start_rss_bytes;
		rec->peak_rss_bytes = unit->peak_rss_bytes;
		rec->n_rss_changes = unit->n_rss_changes;
		rec->page_alloc_bytes = unit->page_alloc_bytes;
		rec->output_bytes = unit->output_bytes;
		rec->tmp_output_bytes = group_tmp_output_bytes(unit->group, unit->tmp_output_bytes);
		rec->processes = unit->processes;
		rec->threads = unit->threads;
		rec->start_charge_bytes = unit->start_charge_bytes;
		rec->peak_charge_bytes = peak_charge;
		gpu_unit_close_locked(id, rec);
		/*
		 * Waking the reader for every unit costs more than a tiny unit itself: wake it only
		 * when a batch is waiting; its 100 ms poll picks up the rest.
		 */
		bpf_ringbuf_submit(rec, group_ring_batch_waits(unit->group) ? BPF_RB_FORCE_WAKEUP :
									      BPF_RB_NO_WAKEUP);
	}
	unclaim_thread(edge.slot, edge.closer_tid);
	/* the baseline claims other threads' slices by key, which the loader removes */
	if (others && UM_HAVE_FETCH_ATOMICS)
		unclaim_running(&edge);
	/* free the slot: charges still in flight on other CPUs no longer match its id */
	um_cas(&unit->id, id, 0);
	return 0;
}

/*
 * One CPU at a unit's open: what it holds for another running thread of process tgid goes to the
 * units before. Verified once, as close_take_cpu (inlined: once for every possible CPU).
 */
__noinline int open_charge_cpu(__u32 cpu, __u32 tgid)
{
	struct um_thread *th;
	struct um_proc *proc;
	__u64 seen;
	__u32 tid;

	if (cpu >= UM_MAX_CPUS)
		return 0;
	seen = cpu_running[CPU_SLOT(cpu)];
	tid = seen >> 1;
	if (!(seen & 1))
		return 0;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (!th || th->tgid != tgid)
		return 0;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (proc)
		cpu_pending_charge(cpu, tid, proc);
	return 0;
}

/* A unit opens: what CPUs hold for the process's other running threads goes to the units before. */
static __always_inline void charge_sibling_pages(__u32 tgid)
{
	for (__u32 cpu = 0; cpu < nr_possible_cpus && cpu < UM_MAX_CPUS; cpu++)
		open_charge_cpu(cpu, tgid);
}

struct slot_search {
	__u64 seq;
	int slot;
};

static long claim_one_slot(__u64 i, void *arg)
{
	struct slot_search *search = arg;
	__u32 slot = unit_slot(search->seq + i);
	struct um_unit *unit = bpf_map_lookup_elem(&units, &slot);

	if (unit && um_cas(&unit->id, 0, UM_UNIT_CLAIMING) == 0) {
		search->slot = slot;
		return 1;
	}
	return 0;
}

/*
 * Take a free slot for a new unit, from its sequence number's own onwards (it is almost always
 * free: a slot is busy only while a unit opened a multiple of UM_UNIT_SLOTS earlier is still
 * open), marked UM_UNIT_CLAIMING. Returns the slot, or -1 when UM_UNIT_SEARCH slots in a row are
 * open (counted as a full map).
 */
static __always_inline int unit_claim_slot(__u64 seq)
{
	struct slot_search search = { .seq = seq, .slot = -1 };

	UM_LOOP(UM_UNIT_SEARCH, claim_one_slot, &search);
	if (search.slot < 0)
		__sync_fetch_and_add(&map_full, 1);
	return search.slot;
}

/* The outermost call of a unit function: a unit opens. */
static __always_inline void unit_open_locked(struct um_proc *proc, __u32 tgid, __u32 spec)
{
	__u64 seq = um_fetch_add(&next_unit_id, 1) + 1, id, mm_key;
	__u32 live, active;
	struct um_unit *unit;
	struct um_mm *mm;
	__u32 slot;
	__s64 rss;
	int claimed;

	/* pages allocated before the unit are not the unit's: charge what CPUs hold for them */
	cpu_pending_charge(bpf_get_smp_processor_id(), (__u32)bpf_get_current_pid_tgid(), proc);
	if (proc->live_threads > 1)
		charge_sibling_pages(tgid);
	claimed = unit_claim_slot(seq);
	if (claimed < 0)
		return;
	slot = claimed;
	unit = bpf_map_lookup_elem(&units, &slot);
	if (!unit)
		return;
	id = unit_id(seq, slot);
	/* a unit starts from the kernel's figure, not from attach's /proc reading */
	if (!proc->mm)
		mm_adopt_current_locked();
	mm_key = proc->mm;
	mm = mm_key ? bpf_map_lookup_elem(&mms, &mm_key) : NULL;
	rss = mm ? mm->rss_bytes : 0;
	/* every field before the id: until the id is there, nothing is charged to the slot */
	unit->pid = tgid;
	unit->group = proc->group;
	unit->spec = spec;
	unit->start_ns = UM_EDGE_PENDING; /* fixed once the unit is listed, below */
	unit->start_steal_ns = current_cpu_steal_ns();
	unit->start_cpu = bpf_get_smp_processor_id();
	unit->rss_bytes = rss;
	unit->start_rss_bytes = rss;
	unit->peak_rss_bytes = rss;
	unit->cpu_ns = 0;
	unit->n_rss_changes = 0;
	unit->page_alloc_bytes = 0;
	unit->output_bytes = 0;
	unit->tmp_output_bytes = 0;
	unit->processes = 1;
	unit->end_ns = 0;
	/* not live_threads: a helper joined just before this call may not have switched out dead
	 * yet (seen in guests: one thread too many); never more than live_threads */
	live = proc->live_threads;
	active = proc->active_threads;
	unit->threads = active && active <= live ? active : live;
	/* the baseline's swap is plain: the fields out before the id (switches take no lock) */
	um_order_fence();
	um_cas(&unit->id, UM_UNIT_CLAIMING, id);
	/* after the id: from here on the charge reads raise its peak */
	charge_unit_open_locked(id);
	proc->own_unit = id;
	units_push(proc->units, id);
	if (mm)
		units_push(mm->units, id);
	/* listed: a switch-out that did not see it ended its slice before this instant */
	unit_edge_fix(unit, UM_EDGE_START);
}

/*
 * Entry of a unit function (or the begin marker) with its spec's index, for the run of group
 * (UM_ANY_GROUP: the only one). Recursion, or a second thread entering while the unit is open,
 * is part of the same unit. Runs that probe the same function each have their probe called: a
 * process is only its own run's.
 */
__noinline int unit_entry(__u32 spec, __u32 group)
{
	__u32 tgid = current_tgid();
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	bool held;

	if (!proc || (group != UM_ANY_GROUP && proc->group != group))
		return 0;
	held = um_lock();
	if (um_fetch_add(&proc->unit_depth, 1) == 0)
		unit_open_locked(proc, tgid, spec);
	um_unlock(held);
	return 0;
}

/*
 * The spec's index: the cookie's low half, or for the Python markers (UM_SPEC_FROM_ARG there)
 * the begin marker's first argument. One program for both: one verification fewer at load.
 */
SEC("uprobe")
int BPF_KPROBE(unit_enter)
{
	__u32 spec = (__u32)bpf_get_attach_cookie(ctx);

	if (spec == UM_SPEC_FROM_ARG)
		spec = (__u32)PT_REGS_PARM1(ctx);
	return unit_entry(spec, um_probe_group(ctx));
}

/* The markers' entry where there are no cookies (the baseline build). */
SEC("uprobe")
int BPF_KPROBE(unit_enter_marker)
{
	return unit_entry((__u32)PT_REGS_PARM1(ctx), um_probe_group(ctx));
}

/* One entry program per spec index, for kernels without attach cookies (before 5.15). */
#define UNIT_ENTER_AS(n)                                                                   \
	SEC("uprobe")                                                                      \
	int BPF_KPROBE(unit_enter_##n)                                                     \
	{                                                                                  \
		return unit_entry(n, UM_ANY_GROUP);                                        \
	}
#define UNIT_ENTER_AS_8(n0, n1, n2, n3, n4, n5, n6, n7)                                    \
	UNIT_ENTER_AS(n0) UNIT_ENTER_AS(n1) UNIT_ENTER_AS(n2) UNIT_ENTER_AS(n3)            \
	UNIT_ENTER_AS(n4) UNIT_ENTER_AS(n5) UNIT_ENTER_AS(n6) UNIT_ENTER_AS(n7)
UNIT_ENTER_AS_8(0, 1, 2, 3, 4, 5, 6, 7)
UNIT_ENTER_AS_8(8, 9, 10, 11, 12, 13, 14, 15)
UNIT_ENTER_AS_8(16, 17, 18, 19, 20, 21, 22, 23)
UNIT_ENTER_AS_8(24, 25, 26, 27, 28, 29, 30, 31)
_Static_assert(UM_MAX_SPECS == 32, "one unit_enter_N program per spec index");

SEC("uretprobe")
int BPF_KRETPROBE(unit_return)
{
	__u32 tgid = current_tgid(), group = um_probe_group(ctx);
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	bool held;
	__u64 id;

	/* depth 0: a call that began before attach, whose entry was never seen */
	if (!proc || !proc->unit_depth || (group != UM_ANY_GROUP && proc->group != group))
		return 0;
	held = um_lock();
	/* the unit this return may close, read before the depth drops: once it is 0 another
	 * thread's entry can open a new unit, which this return must not close */
	id = proc->own_unit;
	if (um_fetch_add(&proc->unit_depth, -1) == 1 && id)
		unit_close_locked(tgid, id, UM_UNIT_COMPLETE);
	um_unlock(held);
	return 0;
}
