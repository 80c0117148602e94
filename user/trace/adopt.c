// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "common/fileio.h"
#include "common/grow.h"
#include "trace/adopt.h"
#include "trace/tracer.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* A walk that keeps finding newcomers (a fork bomb) stops here; the fork program goes on. */
#define ADOPT_MAX_WALKS 64

/* Whether the comma-separated list has every name of want (also comma-separated). */
static bool list_covers(const char *list, const char *want)
{
	char copy[1024], *w, *save = NULL;

	snprintf(copy, sizeof(copy), "%s", want);
	for (w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t n = strlen(w);
		bool found = false;

		for (const char *c = list; c && !found; c = strchr(c, ',')) {
			c += *c == ',';
			found = !strncmp(c, w, n) && (c[n] == ',' || !c[n]);
		}
		if (!found)
			return false;
	}
	return true;
}

/*
 * The v1 hierarchy dir is in: its mount (the longest cgroup mount point above dir), whose
 * options name its controllers, matched with a line "N:controllers:path" of /proc/self/cgroup.
 */
static int v1_hierarchy(struct cgroup_target *c)
{
	char *info = um_read_text("/proc/self/mountinfo"), *line, *save = NULL;
	char best[PATH_MAX] = "", best_opts[1024] = "";
	char *own;
	int err = -ENOENT;

	if (!info)
		return -errno;
	for (line = strtok_r(info, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char point[PATH_MAX], fstype[64], opts[1024];
		const char *dash = strstr(line, " - ");
		size_t n;

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(dash + 3, "%63s %*s %1023s", fstype, opts) != 2 || strcmp(fstype, "cgroup"))
			continue;
		n = strlen(point);
		if (strncmp(c->dir, point, n) || (c->dir[n] && c->dir[n] != '/') ||
		    n <= strlen(best))
			continue;
		snprintf(best, sizeof(best), "%s", point);
		snprintf(best_opts, sizeof(best_opts), "%s", opts);
	}
	free(info);
	if (!best[0])
		return -ENOENT;
	snprintf(c->name, sizeof(c->name), "%s", c->dir[strlen(best)] ? c->dir + strlen(best) : "/");
	own = um_read_text("/proc/self/cgroup");
	if (!own)
		return -errno;
	save = NULL;
	for (line = strtok_r(own, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *controllers = strchr(line, ':'), *end;

		if (!controllers || !(end = strchr(controllers + 1, ':')))
			continue;
		*end = '\0';
		controllers++;
		if (*controllers && list_covers(best_opts, controllers)) {
			c->hierarchy_id = (uint32_t)strtoul(line, NULL, 10);
			err = 0;
			break;
		}
	}
	free(own);
	return err;
}

/* The path of dir below the cgroup2 mount it is on (the longest cgroup2 mount above it). */
static int v2_name(struct cgroup_target *c)
{
	char *info = um_read_text("/proc/self/mountinfo"), *line, *save = NULL;
	size_t best = 0;
	bool found = false;

	if (!info)
		return -errno;
	for (line = strtok_r(info, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char point[PATH_MAX], fstype[64];
		const char *dash = strstr(line, " - ");
		size_t n;

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(dash + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		n = strlen(point);
		if (!strncmp(c->dir, point, n) && (!c->dir[n] || c->dir[n] == '/') &&
		    (!found || n > best)) {
			best = n;
			found = true;
		}
	}
	free(info);
	if (!found)
		return -ENOENT;
	snprintf(c->name, sizeof(c->name), "%s", c->dir[best] ? c->dir + best : "/");
	return 0;
}

int cgroup_target_open(struct cgroup_target *c, const char *path, char *why, size_t len)
{
	struct statfs fs;
	struct stat st;
	int err;

	memset(c, 0, sizeof(*c));
	if (!realpath(path, c->dir) || stat(c->dir, &st) || statfs(c->dir, &fs)) {
		err = -errno;
		snprintf(why, len, "cannot open the cgroup %s: %s (give its directory, such as "
			 "/sys/fs/cgroup/system.slice/NAME.service)", path, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode) ||
	    (fs.f_type != CGROUP_SUPER_MAGIC && fs.f_type != CGROUP2_SUPER_MAGIC)) {
		snprintf(why, len, "%s is not a cgroup directory (one under a cgroup or cgroup2 "
			 "mount, such as /sys/fs/cgroup/...)", path);
		return -EINVAL;
	}
	c->id = st.st_ino;
	c->version = fs.f_type == CGROUP2_SUPER_MAGIC ? 2 : 1;
	err = c->version == 2 ? v2_name(c) : v1_hierarchy(c);
	if (err) {
		snprintf(why, len, "cannot tell which cgroup hierarchy %s is in (/proc/self/mountinfo, "
			 "/proc/self/cgroup): %s", c->dir, strerror(-err));
		return err;
	}
	/* the hierarchy's root holds every process, the kernel's threads too: not a job */
	if (!strcmp(c->name, "/")) {
		snprintf(why, len, "%s is the root of its cgroup hierarchy, which holds every process "
			 "of the machine: name a cgroup below it", c->dir);
		return -EINVAL;
	}
	return 0;
}

struct pid_list {
	pid_t *pids;
	size_t n, cap;
};

static int pid_list_add(struct pid_list *l, pid_t pid)
{
	pid_t *bigger = um_grow(l->pids, &l->cap, l->n + 1, sizeof(*bigger), 64);

	if (!bigger)
		return -ENOMEM;
	l->pids = bigger;
	l->pids[l->n++] = pid;
	return 0;
}

/* cgroup.procs of dir and of every cgroup below it (depth-bounded as the BPF side is). */
static int read_procs(const char *dir, int depth, struct pid_list *l)
{
	char path[PATH_MAX + 16], *text, *line, *save = NULL;
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	text = um_read_text(path);
	if (!text)
		return -errno;
	for (line = strtok_r(text, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save))
		err = pid_list_add(l, (pid_t)strtol(line, NULL, 10));
	free(text);
	if (err || depth >= 16)
		return err;
	d = opendir(dir);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		err = read_procs(path, depth + 1, l);
		/* a child cgroup removed while read is no loss: its processes left it first */
		if (err == -ENOENT)
			err = 0;
	}
	closedir(d);
	return err;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int cgroup_target_pids(const struct cgroup_target *c, pid_t **pids, size_t *n)
{
	struct pid_list l = { 0 };
	size_t out = 0;
	int err = read_procs(c->dir, 0, &l);

	if (err) {
		free(l.pids);
		*pids = NULL;
		*n = 0;
		return err;
	}
	if (l.n)
		qsort(l.pids, l.n, sizeof(*l.pids), pid_cmp);
	for (size_t i = 0; i < l.n; i++)
		if (!out || l.pids[out - 1] != l.pids[i])
			l.pids[out++] = l.pids[i];
	*pids = l.pids;
	*n = out;
	return 0;
}

/* The parent of pid (/proc/PID/stat's 4th field); 0 when it is gone. */
static pid_t parent_of(pid_t pid)
{
	unsigned long long ppid = 0;

	return um_proc_stat_field(pid, 4, &ppid) ? 0 : (pid_t)ppid;
}

/* One walk of /proc: how many it took, or a negative errno. */
static int walk_once(struct tracer *t, bool children, const pid_t *members, size_t n_members)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int taken = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		pid_t pid = (pid_t)v, ppid;
		bool member;

		if (*end || v <= 0 || tracer__tracked(t, pid))
			continue;
		member = members && bsearch(&pid, members, n_members, sizeof(*members), pid_cmp);
		ppid = parent_of(pid);
		if (!member && !(children && ppid > 0 && tracer__tracked(t, ppid)))
			continue;
		/* gone meanwhile (-ENOENT, -ESRCH): nothing to take; its exit is no loss */
		if (tracer__adopt(t, pid, ppid) > 0)
			taken++;
	}
	closedir(d);
	return taken;
}

int adopt_walk(struct tracer *t, bool children, const struct cgroup_target *c)
{
	int total = 0;

	for (int walk = 0; walk < ADOPT_MAX_WALKS; walk++) {
		pid_t *members = NULL;
		size_t n_members = 0;
		int taken;

		/* a cgroup removed is no error here: the session ends on it */
		if (c && cgroup_target_pids(c, &members, &n_members) == -ENOMEM)
			return -ENOMEM;
		taken = walk_once(t, children, members, n_members);
		free(members);
		if (taken < 0)
			return taken;
		total += taken;
		/* nobody new: every process is tracked, or a child of a tracked one (the fork program
		 * takes it), or in the cgroup since this walk (the cgroup program reports it) */
		if (taken == 0)
			return total;
	}
	return total;
}
