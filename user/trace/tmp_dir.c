// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "trace/tmp_dir.h"

/* Largest environment read from /proc/PID/environ: a job's is a few KiB. */
#define ENVIRON_MAX (1 << 20)

uint64_t tmp_dir_kernel_dev(dev_t dev)
{
	/* the kernel's MINORBITS is 20 (include/linux/kdev_t.h) */
	return ((uint64_t)major(dev) << 20) | minor(dev);
}

/* The value of TMPDIR in process pid's environment, into buf; 0, or -1 when it has none. */
static int target_tmpdir(pid_t pid, char *buf, size_t len)
{
	char path[64], *env;
	ssize_t n;
	int fd, rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	env = malloc(ENVIRON_MAX);
	n = env ? read(fd, env, ENVIRON_MAX - 1) : -1;
	close(fd);
	if (n > 0) {
		env[n] = '\0';
		for (char *e = env; e < env + n; e += strlen(e) + 1) {
			if (!strncmp(e, "TMPDIR=", 7) && e[7]) {
				snprintf(buf, len, "%s", e + 7);
				rc = 0;
				break;
			}
		}
	}
	free(env);
	return rc;
}

/* Which directory: --tmp-dir, else TMPDIR (the target's, or ours), else /tmp. */
static void choose(struct tmp_dir *t, const char *given, pid_t pid)
{
	const char *ours = getenv("TMPDIR");

	if (given) {
		snprintf(t->path, sizeof(t->path), "%s", given);
		t->source = "--tmp-dir";
	} else if (pid ? !target_tmpdir(pid, t->path, sizeof(t->path)) : ours && *ours) {
		if (!pid)
			snprintf(t->path, sizeof(t->path), "%s", ours);
		t->source = "TMPDIR";
	} else {
		snprintf(t->path, sizeof(t->path), "/tmp");
		t->source = "default";
	}
}

void tmp_dir_resolve(struct tmp_dir *t, const char *given, pid_t pid)
{
	char seen[PATH_MAX + 64];
	struct stat st;

	memset(t, 0, sizeof(*t));
	choose(t, given, pid);
	/* the target's view: its root (a private /tmp), and its working directory for a relative
	 * name */
	if (!pid)
		snprintf(seen, sizeof(seen), "%s", t->path);
	else if (t->path[0] == '/')
		snprintf(seen, sizeof(seen), "/proc/%d/root%s", (int)pid, t->path);
	else
		snprintf(seen, sizeof(seen), "/proc/%d/cwd/%s", (int)pid, t->path);
	if (stat(seen, &st)) {
		snprintf(t->reason, sizeof(t->reason), "the tmp dir %s (from %s) cannot be read: %s",
			 t->path, t->source, strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(t->reason, sizeof(t->reason), "the tmp dir %s (from %s) is not a directory",
			 t->path, t->source);
		return;
	}
	t->kernel_dev = tmp_dir_kernel_dev(st.st_dev);
	t->ino = st.st_ino;
}
