// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/log.h"
#include "trace/node_programs.h"
#include "unitmeter.h"
#include "unitmeter.skel.h"

const char *node_programs_refusal(const struct kernel_features *k)
{
	const char *forced = getenv("UNITMETER_PROGRAMS");

	if (forced && !strcmp(forced, "own"))
		return "UNITMETER_PROGRAMS=own";
	if (k->build == KERNEL_BUILD_BASELINE)
		return "this kernel's BPF has no attach cookies, which tell one run's unit probes from "
		       "another's";
	return NULL;
}

/* FNV-1a, 64 bits: a name for the set, not a defence (the pins are root's alone). */
static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

void node_programs_name(struct node_programs *np, const struct unitmeter_bpf *skel,
			const struct kernel_features *k, bool uprobe_multi, bool gpu)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	/* what the load depends on beyond the bytes: the build's choices and the machine's */
	uint64_t choices[] = { k->build, k->thread_rss_caches, k->fault_hook, k->syscall_hooks,
			       uprobe_multi, gpu,
			       (uint64_t)libbpf_num_possible_cpus(), (uint64_t)sysconf(_SC_PAGESIZE),
			       sizeof(struct um_group), UM_MAX_GROUPS };

	memset(np, 0, sizeof(*np));
	np->lock_fd = -1;
	h = fnv(h, skel->skeleton->data, skel->skeleton->data_sz);
	h = fnv(h, choices, sizeof(choices));
	snprintf(np->registry, sizeof(np->registry), "%s/programs-%016llx", NODE_PROGRAMS_DIR,
		 (unsigned long long)h);
}

int node_programs_lock(struct node_programs *np)
{
	char lock_path[128];

	if (mkdir(NODE_PROGRAMS_DIR, 0700) && errno != EEXIST)
		return -errno;
	snprintf(lock_path, sizeof(lock_path), "%s/programs.lock", NODE_PROGRAMS_DIR);
	np->lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (np->lock_fd < 0)
		return -errno;
	while (flock(np->lock_fd, LOCK_EX))
		if (errno != EINTR) {
			int err = -errno;

			close(np->lock_fd);
			np->lock_fd = -1;
			return err;
		}
	return 0;
}

void node_programs_unlock(struct node_programs *np)
{
	if (np->lock_fd >= 0)
		close(np->lock_fd); /* the flock goes with the last descriptor */
	np->lock_fd = -1;
}

/* The skeleton's globals (.bss, .rodata) mapped onto the set's maps, where a load would have. */
static int node_programs_map_globals(struct unitmeter_bpf *skel)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct bpf_map *map;

	bpf_object__for_each_map(map, skel->obj) {
		size_t size, bytes;
		void *area = (void *)bpf_map__initial_value(map, &size);
		__u32 flags = bpf_map__map_flags(map);

		if (!area || !(flags & BPF_F_MMAPABLE))
			continue;
		/* the area libbpf made at open, its size as libbpf maps it at a load */
		bytes = ((size + 7) & ~(size_t)7) * bpf_map__max_entries(map);
		bytes = (bytes + page - 1) / page * page;
		if (mmap(area, bytes, flags & BPF_F_RDONLY_PROG ? PROT_READ : PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, bpf_map__fd(map), 0) == MAP_FAILED)
			return -errno;
	}
	return 0;
}

static int hold(struct node_programs *np, int fd, bool link)
{
	int *bigger = realloc(np->fds, (np->n_fds + 1) * sizeof(*bigger));

	if (!bigger)
		return -ENOMEM;
	np->fds = bigger;
	np->fds[np->n_fds++] = fd;
	if (link) {
		bigger = realloc(np->link_fds, (np->n_links + 1) * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		np->link_fds = bigger;
		np->link_fds[np->n_links++] = fd;
	}
	return 0;
}

/* Whether a map of the kernel's is the skeleton's map (its shape as the load made it). */
static bool map_matches(int fd, const struct bpf_map *map)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return !bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == bpf_map__type(map) &&
	       info.value_size == bpf_map__value_size(map) &&
	       info.max_entries == bpf_map__max_entries(map);
}

int node_programs_open(struct node_programs *np, struct unitmeter_bpf *skel)
{
	FILE *f = fopen(np->registry, "re");
	char kind[8], name[64];
	struct bpf_map *map;
	unsigned int id;
	size_t maps = 0;
	int err = 0;

	if (!f)
		return -ENOENT;
	while (!err && fscanf(f, "%7s %63s %u", kind, name, &id) == 3) {
		int fd;

		if (!strcmp(kind, "map")) {
			map = bpf_object__find_map_by_name(skel->obj, name);
			fd = bpf_map_get_fd_by_id(id);
			if (!map || fd < 0 || !map_matches(fd, map)) {
				err = -ENOENT; /* gone with its last run, or another build's */
			} else {
				err = bpf_map__reuse_fd(map, fd);
				maps++;
			}
			if (fd >= 0)
				close(fd);
		} else if (!strcmp(kind, "prog") || !strcmp(kind, "link")) {
			fd = kind[0] == 'p' ? bpf_prog_get_fd_by_id(id) : bpf_link_get_fd_by_id(id);
			if (fd < 0)
				err = -ENOENT;
			else
				err = hold(np, fd, kind[0] == 'l');
		}
	}
	fclose(f);
	/* every map of the skeleton the set's, or the set is not this one */
	bpf_object__for_each_map(map, skel->obj)
		if (!err && maps-- == 0)
			err = -ENOENT;
	if (!err)
		err = node_programs_map_globals(skel);
	return err;
}

int node_programs_prog_fd(const struct node_programs *np, const char *name)
{
	for (size_t i = 0; i < np->n_fds; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		/* the kernel keeps 15 bytes of a name */
		if (!bpf_obj_get_info_by_fd(np->fds[i], &info, &len) &&
		    !strncmp(info.name, name, sizeof(info.name) - 1) && info.type != 0) {
			int fd = dup(np->fds[i]);

			return fd < 0 ? -errno : fd;
		}
	}
	return -ENOENT;
}

/* The kernel's id of an object by its descriptor. */
static unsigned int id_of(int fd, bool link)
{
	union {
		struct bpf_map_info map;
		struct bpf_link_info link;
	} info = {};
	__u32 len = link ? sizeof(info.link) : sizeof(info.map);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return link ? info.link.id : info.map.id;
}

int node_programs_publish(struct node_programs *np, const struct unitmeter_bpf *skel)
{
	char tmp[300];
	struct bpf_map *map;
	struct bpf_program *prog;
	FILE *f;
	int err = 0;

	snprintf(tmp, sizeof(tmp), "%s.%d", np->registry, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	bpf_object__for_each_map(map, skel->obj)
		fprintf(f, "map %s %u\n", bpf_map__name(map), id_of(bpf_map__fd(map), false));
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || (fd = dup(fd)) < 0) {
			err = -errno;
			break;
		}
		fprintf(f, "prog %s %u\n", bpf_program__name(prog), info.id);
		err = hold(np, fd, false);
		if (err) {
			close(fd);
			break;
		}
	}
	for (int i = 0; !err && i < skel->skeleton->prog_cnt; i++) {
		struct bpf_link *link = *skel->skeleton->progs[i].link;
		int fd;

		if (!link)
			continue;
		fd = dup(bpf_link__fd(link));
		if (fd < 0) {
			err = -errno;
			break;
		}
		fprintf(f, "link %s %u\n", skel->skeleton->progs[i].name, id_of(fd, true));
		err = hold(np, fd, true);
		if (err)
			close(fd);
	}
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, np->registry))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

void node_programs_forget(const struct node_programs *np)
{
	if (unlink(np->registry) && errno != ENOENT)
		um_warn("cannot remove %s: %s", np->registry, strerror(errno));
}

void node_programs_release(struct node_programs *np)
{
	for (size_t i = 0; i < np->n_fds; i++)
		close(np->fds[i]);
	free(np->fds);
	free(np->link_fds);
	np->fds = np->link_fds = NULL;
	np->n_fds = np->n_links = 0;
	node_programs_unlock(np);
}
