// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracer's probes: each unit target's entry and return, now or at the exec of a program
 * that holds it (--lookup-at-exec), and the CUDA driver's entry points; released in parallel.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/fileio.h"
#include "common/grow.h"
#include "common/log.h"
#include "trace/bpf_words.h"
#include "trace/tracer_internal.h"

bool has_exec_targets(const struct tracer_config *cfg)
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
void exec_lookup(struct tracer *t, __u32 pid, const struct um_program_id *program)
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
int hold_queue(struct tracer *t, __u32 pid, const struct um_program_id *program)
{
	struct held_exec *bigger = um_grow(t->held, &t->cap_held, t->n_held + 1, sizeof(*bigger), 16);

	if (!bigger)
		return -ENOMEM;
	t->held = bigger;
	t->held[t->n_held++] = (struct held_exec){ .pid = pid, .program = *program };
	return 0;
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
int attach_gpu_probes(struct tracer *t)
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

int attach_unit_target(struct tracer *t, const struct unit_target *target, const char *path)
{
	bool cookies = kernel_build_has_bpf_of_5_17(t->kernel.build);
	struct bpf_program *entry;
	struct uprobe_link *links;
	uint64_t cookie = 0;
	int err;

	/* the spec's index: the cookie (for a marker, UM_SPEC_FROM_ARG: its argument), else the
	 * marker's argument or the entry program itself */
	if (cookies)
		entry = t->skel->progs.unit_enter;
	else if (target->spec_from_arg)
		entry = t->skel->progs.unit_enter_marker;
	else
		entry = spec_entry_program(t, target->cookie);
	/* with cookies, the run's group in the high half (um_probe_group) */
	if (cookies)
		cookie = (uint64_t)t->group.tag << 32 |
			 (target->spec_from_arg ? UM_SPEC_FROM_ARG : target->cookie);

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
				t->unit_prog_fd[end ? UNIT_RETURN : UNIT_ENTER],
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
void warn_uretprobe_seccomp(void)
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
void destroy_links_in_parallel(struct uprobe_link *links, size_t n)
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
