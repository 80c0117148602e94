/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One uprobe's link, made the cheapest way the kernel offers:
 * - a multi-uprobe link (BPF_TRACE_UPROBE_MULTI, 6.6) where the kernel has it. It registers
 *   the probe directly, without the uprobe perf event, whose creation and release take the
 *   kernel's event_mutex: a release holds it through an RCU tasks-trace grace period per probe,
 *   and a run starting while another's probes are released waited behind all of them (up to 2 s
 *   on a loaded machine, issue #34);
 * - a perf event, as libbpf attaches a uprobe, elsewhere.
 * The programs attached through multi-uprobe links must be loaded for them
 * (uprobe_link_prepare). libbpf makes the link where it can (1.3 on); with an older libbpf
 * (Debian 12's 1.1) the BPF_LINK_CREATE call is made here.
 */
#ifndef UM_UPROBE_LINK_H
#define UM_UPROBE_LINK_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_link;
struct bpf_object;
struct bpf_program;

struct uprobe_link {
	struct bpf_link *link; /* libbpf's, or NULL */
	int fd;                /* a link made without libbpf; -1 when none */
	int perf_fd;           /* the perf event of such a link, made without libbpf; -1 */
};

/* Whether the kernel makes multi-uprobe links: the probe libbpf uses (a link on "/" is refused
 * with EBADF by a kernel that has them, EINVAL by one that has not). */
bool uprobe_multi_supported(void);

/* Load every uprobe program of obj (sections uprobe and uretprobe) for multi-uprobe links.
 * Before the object's load. */
void uprobe_link_prepare(struct bpf_object *obj);

/*
 * Attach prog to path's function at offset (0: the function named symbol, looked up here for a
 * multi link and by libbpf otherwise), at its entry or its return, for every process (the
 * programs filter), with cookie. multi: as a multi-uprobe link (the programs prepared), else as
 * a perf event. 0 or a negative errno (-ENOENT: no such function).
 */
int uprobe_link_attach(struct uprobe_link *out, const struct bpf_program *prog, const char *path,
		       const char *symbol, uint64_t offset, bool retprobe, uint64_t cookie,
		       bool multi);

/*
 * The same from a program's descriptor (a program of the node's set, not loaded by this run),
 * where the kernel has attach cookies (5.15): the perf event is made here, not by libbpf.
 */
int uprobe_link_attach_fd(struct uprobe_link *out, int prog_fd, const char *path,
			  const char *symbol, uint64_t offset, bool retprobe, uint64_t cookie,
			  bool multi);

/*
 * Where symbol is in path, into *offset, when multi links need it (0 left for perf events:
 * libbpf finds it by name): one lookup for both probes of a function. 0 or -ENOENT (no such
 * function) or another negative errno.
 */
int uprobe_link_offset(const char *path, const char *symbol, bool multi, uint64_t *offset);

/* Close the link: the probe is gone once the kernel's grace period ends. */
void uprobe_link_destroy(struct uprobe_link *link);

#endif
