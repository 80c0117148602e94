/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One loaded set of programs per node (issue #34, docs/ARCHITECTURE.md "One tracer per node").
 * The first run loads the programs and attaches the tracepoints; it writes the kernel ids of
 * the set's maps, programs and links in a registry file in /run/unitmeter, named by what the load
 * depends on (the objects' bytes, the build, the kernel's choices). A run after it opens those
 * ids instead of loading, and holds every one of them: the set lives while any run holds it
 * and is gone with the last, however that run ends (nothing is pinned). Each run is a group of
 * the programs (struct um_group). Joining, registering a group and the last run's removal of
 * the registry happen under one lock file, so two runs starting at once load once.
 */
#ifndef UM_NODE_PROGRAMS_H
#define UM_NODE_PROGRAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/kernel.h"

struct unitmeter_bpf;

/* Where the registry and the lock live (root-only). */
#define NODE_PROGRAMS_DIR "/run/unitmeter"

struct node_programs {
	char registry[256]; /* NODE_PROGRAMS_DIR/programs-<key> */
	int lock_fd;        /* held: the lock file, flock'd; -1 */
	int *fds;           /* the set's programs and links, held */
	size_t n_fds;
	int *link_fds;      /* of those, the links (read for the programs' figures) */
	size_t n_links;
};

/*
 * Why this run cannot use a node's set (the line -v prints), or NULL: a build without attach
 * cookies (a probe's run is its cookie), or UNITMETER_PROGRAMS=own.
 */
const char *node_programs_refusal(const struct kernel_features *k);

/* Name the set for this skeleton (opened, not loaded) and the kernel's choices; gpu: with the
 * device-memory programs (a driver library was found to probe), a set of its own. */
void node_programs_name(struct node_programs *np, const struct unitmeter_bpf *skel,
			const struct kernel_features *k, bool uprobe_multi, bool gpu);
/* Take the node's lock (waiting for it); give it back. */
int node_programs_lock(struct node_programs *np);
void node_programs_unlock(struct node_programs *np);

/*
 * Open the set the registry names, under the lock: every map of the skeleton pointed at the
 * set's (its globals mapped where a load would have), every program and link held. -ENOENT
 * when there is no registry or its set is gone (its last run ended without removing it).
 */
int node_programs_open(struct node_programs *np, struct unitmeter_bpf *skel);

/* A program of the set by name ("unit_return"), a descriptor of its own; -errno. */
int node_programs_prog_fd(const struct node_programs *np, const char *name);

/* Write the registry of a set this run loaded and attached; hold its programs and links. */
int node_programs_publish(struct node_programs *np, const struct unitmeter_bpf *skel);

/* Remove the registry (its set is gone, or its last run is leaving). */
void node_programs_forget(const struct node_programs *np);

/* Close what the run holds, and the lock. */
void node_programs_release(struct node_programs *np);

#endif
