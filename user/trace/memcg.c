// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/fileio.h"
#include "common/log.h"
#include "common/text.h"
#include "trace/memcg.h"

#define RUN_PREFIX "unitmeter-"

void memcg_mounts(char *v1_memory, char *v2, size_t len)
{
	char *info = um_read_text("/proc/self/mountinfo"), *line, *save = NULL;

	v1_memory[0] = v2[0] = '\0';
	if (!info)
		return;
	for (line = strtok_r(info, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char point[PATH_MAX], fstype[64], opts[1024];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(dash + 3, "%63s %*s %1023s", fstype, opts) != 2)
			continue;
		if (!strcmp(fstype, "cgroup2") && !v2[0]) {
			um_say(v2, len, "%s", point);
		} else if (!strcmp(fstype, "cgroup") && !v1_memory[0]) {
			char *o, *osave = NULL;

			for (o = strtok_r(opts, ",", &osave); o; o = strtok_r(NULL, ",", &osave))
				if (!strcmp(o, "memory"))
					um_say(v1_memory, len, "%s", point);
		}
	}
	free(info);
}

/*
 * Where the hierarchy that holds the memory controller is mounted: a v1 "cgroup" mount with the
 * memory option wins (the controller is then not in v2), else the "cgroup2" mount.
 */
static int memory_mount(char *mnt, size_t len, int *version)
{
	char v1[PATH_MAX], v2[PATH_MAX];

	memcg_mounts(v1, v2, sizeof(v1));
	if (!v1[0] && !v2[0])
		return -ENOENT;
	*version = v1[0] ? 1 : 2;
	um_say(mnt, len, "%s", v1[0] ? v1 : v2);
	return 0;
}

/* Whether a comma-separated list names `name` (not as part of another name). */
static bool list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *c = list; c; c = strchr(c, ',')) {
		c += *c == ',';
		if (!strncmp(c, name, n) && (c[n] == ',' || !c[n]))
			return true;
	}
	return false;
}

/* The path of pid's cgroup in that hierarchy, from /proc/PID/cgroup. */
static int pid_cgroup_path(pid_t pid, int version, char *path, size_t len)
{
	char file[64], *text, *line, *save = NULL;
	int err = -ENOENT;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", pid);
	text = um_read_text(file);
	if (!text)
		return -errno;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *controllers = strchr(line, ':'), *where;

		if (!controllers || !(where = strchr(controllers + 1, ':')))
			continue;
		*where++ = '\0';
		*controllers++ = '\0';
		if (version == 2 ? strcmp(line, "0") || *controllers : !list_has(controllers, "memory"))
			continue;
		um_say(path, len, "%s", where);
		err = 0;
		break;
	}
	free(text);
	return err;
}

static bool file_has_word(const char *path, const char *word)
{
	char *text = um_read_text(path);
	bool has = false;

	if (!text)
		return false;
	for (char *w = strtok(text, " \n"); w; w = strtok(NULL, " \n"))
		if (!strcmp(w, word))
			has = true;
	free(text);
	return has;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static uint64_t dir_id(const char *dir)
{
	struct stat st;

	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? (uint64_t)st.st_ino : 0;
}

/* Directories an earlier unitmeter made and could not remove (killed): empty ones go. */
static void remove_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end, path[PATH_MAX];
		long pid;

		if (strncmp(e->d_name, RUN_PREFIX, strlen(RUN_PREFIX)))
			continue;
		pid = strtol(e->d_name + strlen(RUN_PREFIX), &end, 10);
		if (*end || pid <= 0 || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", base, e->d_name) < (int)sizeof(path))
			rmdir(path);
	}
	closedir(d);
}

/*
 * v2: a cgroup with processes cannot give its children a controller (the "no internal
 * processes" rule, root excepted). unitmeter's own cgroup holds unitmeter: the new one goes
 * under it only when it is the root or already delegates memory, else beside it.
 */
static int v2_parent(const char *mnt, const char *own, char *base, size_t len, char *why,
		     size_t whylen)
{
	char file[PATH_MAX + 32];
	int err;

	um_say(base, len, "%s%s", mnt, strcmp(own, "/") ? own : "");
	um_say(file, sizeof(file), "%s/cgroup.subtree_control", base);
	if (file_has_word(file, "memory"))
		return 0;
	err = write_text(file, "+memory");
	if (!err)
		return 0;
	if (!strcmp(own, "/")) {
		um_say(why, whylen, "cannot enable the memory controller in %s: %s", file,
			    strerror(-err));
		return err;
	}
	/* the parent: a sibling of unitmeter's own cgroup */
	*strrchr(base, '/') = '\0';
	if (strlen(base) < strlen(mnt))
		um_say(base, len, "%s", mnt);
	um_say(file, sizeof(file), "%s/cgroup.subtree_control", base);
	if (file_has_word(file, "memory"))
		return 0;
	um_say(why, whylen, "the memory controller is not delegated to %s (no memory in %s)",
		    base, file);
	return -ENOTSUP;
}

void memcg_make_for_run(struct memcg *m)
{
	char mnt[PATH_MAX], own[PATH_MAX], base[PATH_MAX];
	int err;

	memset(m, 0, sizeof(*m));
	if (memory_mount(mnt, sizeof(mnt), &m->version)) {
		um_say(m->reason, sizeof(m->reason),
			    "no memory cgroup hierarchy is mounted (neither cgroup v1 memory nor cgroup2)");
		return;
	}
	if (pid_cgroup_path(getpid(), m->version, own, sizeof(own))) {
		um_say(m->reason, sizeof(m->reason), "/proc/self/cgroup names no memory cgroup");
		return;
	}
	if (m->version == 2) {
		if (v2_parent(mnt, own, base, sizeof(base), m->reason, sizeof(m->reason)))
			return;
	} else {
		um_say(base, sizeof(base), "%s%s", mnt, strcmp(own, "/") ? own : "");
	}
	remove_stale(base);
	if (snprintf(m->dir, sizeof(m->dir), "%s/" RUN_PREFIX "%d", base, (int)getpid()) >=
	    (int)sizeof(m->dir)) {
		um_say(m->reason, sizeof(m->reason), "the cgroup path under %s is too long", base);
		return;
	}
	if (mkdir(m->dir, 0755) && errno != EEXIST) {
		err = errno;
		um_say(m->reason, sizeof(m->reason), "cannot make the memory cgroup %s: %s", m->dir,
			    strerror(err));
		m->dir[0] = '\0';
		return;
	}
	m->made_for_run = true;
	m->id = dir_id(m->dir);
	um_say(m->name, sizeof(m->name), "%s", m->dir + strlen(mnt));
	if (!m->id)
		um_say(m->reason, sizeof(m->reason), "cannot read the id of %s", m->dir);
	um_info("memory charge: cgroup v%d %s (id %llu)", m->version, m->dir,
		(unsigned long long)m->id);
}

void memcg_procs_file(const struct memcg *m, char *path, size_t len)
{
	um_say(path, len, "%s/cgroup.procs", m->dir);
}

void memcg_entry_failed(struct memcg *m, int err)
{
	um_say(m->reason, sizeof(m->reason), "cannot move the command into %s: %s", m->dir,
	       strerror(-err));
	m->id = 0;
}

void memcg_remove(struct memcg *m)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };

	if (!m->made_for_run || !m->dir[0])
		return;
	/* a process reaped a moment ago may still be leaving it */
	for (int i = 0; i < 50; i++) {
		if (rmdir(m->dir) == 0 || errno == ENOENT) {
			m->made_for_run = false;
			return;
		}
		if (errno != EBUSY)
			break;
		nanosleep(&pause, NULL);
	}
	um_warn("cannot remove the memory cgroup %s: %s (processes the command left running are "
		"in it; the next unitmeter run removes it once it is empty)", m->dir, strerror(errno));
}

void memcg_of_pid(struct memcg *m, pid_t pid)
{
	char mnt[PATH_MAX], file[PATH_MAX + 32];

	memset(m, 0, sizeof(*m));
	if (memory_mount(mnt, sizeof(mnt), &m->version)) {
		um_say(m->reason, sizeof(m->reason),
			    "no memory cgroup hierarchy is mounted (neither cgroup v1 memory nor cgroup2)");
		return;
	}
	if (pid_cgroup_path(pid, m->version, m->name, sizeof(m->name))) {
		um_say(m->reason, sizeof(m->reason), "/proc/%d/cgroup names no memory cgroup", pid);
		return;
	}
	if (!strcmp(m->name, "/")) {
		um_say(m->reason, sizeof(m->reason),
			    "process %d is in the root memory cgroup, which the kernel does not charge", pid);
		return;
	}
	um_say(m->dir, sizeof(m->dir), "%s%s", mnt, m->name);
	um_say(file, sizeof(file), "%s/%s", m->dir,
		    m->version == 1 ? "memory.usage_in_bytes" : "memory.current");
	if (access(file, F_OK)) {
		um_say(m->reason, sizeof(m->reason),
			    "the cgroup %s of process %d has no memory controller", m->name, pid);
		return;
	}
	m->id = dir_id(m->dir);
	if (!m->id)
		um_say(m->reason, sizeof(m->reason), "cannot read the id of %s", m->dir);
}

void memcg_of_cgroup(struct memcg *m, const char *dir, const char *name)
{
	char mnt[PATH_MAX], file[PATH_MAX + 32];
	int version;

	memset(m, 0, sizeof(*m));
	um_say(m->name, sizeof(m->name), "%s", name);
	/* the cgroup itself, when its hierarchy holds the memory controller (v2, or v1 memory) */
	for (version = 1; version <= 2; version++) {
		um_say(file, sizeof(file), "%s/%s", dir,
		       version == 1 ? "memory.usage_in_bytes" : "memory.current");
		if (!access(file, F_OK)) {
			m->version = version;
			um_say(m->dir, sizeof(m->dir), "%s", dir);
			break;
		}
	}
	/* else the cgroup of the same path in the memory hierarchy (v1: slurmd makes one in each) */
	if (!m->dir[0] && !memory_mount(mnt, sizeof(mnt), &version) && strcmp(name, "/")) {
		um_say(m->dir, sizeof(m->dir), "%s%s", mnt, name);
		um_say(file, sizeof(file), "%s/%s", m->dir,
		       version == 1 ? "memory.usage_in_bytes" : "memory.current");
		if (access(file, F_OK))
			m->dir[0] = '\0';
		else
			m->version = version;
	}
	if (!m->dir[0]) {
		um_say(m->reason, sizeof(m->reason),
		       "the cgroup %s has no memory controller, nor a cgroup of that path in the memory "
		       "hierarchy", dir);
		return;
	}
	m->id = dir_id(m->dir);
	if (!m->id)
		um_say(m->reason, sizeof(m->reason), "cannot read the id of %s", m->dir);
}
