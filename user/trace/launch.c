// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "trace/launch.h"
#include "common/log.h"

static bool is_executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *launch_resolve(const char *argv0)
{
	const char *path = getenv("PATH");
	char candidate[PATH_MAX];

	if (strchr(argv0, '/')) {
		if (is_executable_file(argv0))
			return strdup(argv0);
		if (errno == 0)
			errno = EACCES;
		return NULL;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");

		if (snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)len, len ? path : ".",
			     argv0) < (int)sizeof(candidate) &&
		    is_executable_file(candidate))
			return strdup(candidate);
		path += len;
		if (*path == ':')
			path++;
	}
	errno = ENOENT;
	return NULL;
}

static int parse_id(const char *text, unsigned long *id)
{
	char *end;

	errno = 0;
	*id = strtoul(text, &end, 10);
	return (errno || end == text || *end) ? -1 : 0;
}

int launch_target_ids(bool as_root, uid_t *uid, gid_t *gid)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long u, g;

	*uid = getuid();
	*gid = getgid();
	if (as_root || !su || !sg)
		return 0;
	if (parse_id(su, &u) || parse_id(sg, &g))
		return -EINVAL;
	*uid = u;
	*gid = g;
	return 0;
}

/* In the child: become the invoking user, with that user's supplementary groups. */
static int drop_privileges(uid_t uid, gid_t gid)
{
	struct passwd *pw;

	if (uid == getuid() && gid == getgid())
		return 0;
	pw = getpwuid(uid);
	if (pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL))
		return -1;
	if (setgid(gid) || setuid(uid))
		return -1;
	return 0;
}

/* In the child: write its own pid to cgroup_procs; the errno (0: done) goes up the pipe. */
static void enter_cgroup(const char *cgroup_procs, int result_fd)
{
	char text[24];
	int fd = open(cgroup_procs, O_WRONLY | O_CLOEXEC), err = 0;

	snprintf(text, sizeof(text), "%d\n", (int)getpid());
	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	if (write(result_fd, &err, sizeof(err)) != sizeof(err))
		_exit(126);
	close(result_fd);
}

int launch__cgroup_result(struct launch *l)
{
	int err = 0;
	ssize_t n;

	if (l->cgroup_fd < 0)
		return -ENOENT;
	do
		n = read(l->cgroup_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(l->cgroup_fd);
	l->cgroup_fd = -1;
	return n == sizeof(err) ? -err : -EPIPE;
}

/* The signals unitmeter handles (session.c): the command gets them with their default action. */
static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE };

/* In the child, signals still blocked: unitmeter's handlers and its ignored SIGPIPE are not the
 * command's (an ignored signal stays ignored across exec). A signal that came meanwhile then
 * takes its default action here, as it would have on the command. */
static void restore_default_signals(const sigset_t *mask)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++)
		sigaction(handled_signals[i], &dfl, NULL);
	pthread_sigmask(SIG_SETMASK, mask, NULL);
}

int launch__start(struct launch *l, const char *path, char *const argv[], bool as_root,
		  const char *cgroup_procs)
{
	int barrier[2], cgroup_word[2] = { -1, -1 };
	sigset_t all, before;
	uid_t uid;
	gid_t gid;
	char go;

	if (launch_target_ids(as_root, &uid, &gid)) {
		um_err("SUDO_UID/SUDO_GID are not numbers: cannot tell whom to run the command as "
		       "(use --as-root to keep root)");
		return -EINVAL;
	}
	l->cgroup_fd = -1;
	if (pipe2(barrier, O_CLOEXEC))
		return -errno;
	if (cgroup_procs && pipe2(cgroup_word, O_CLOEXEC)) {
		int err = -errno;

		close(barrier[0]);
		close(barrier[1]);
		return err;
	}
	/* no handler of unitmeter's may run in the child between fork and its reset */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &before);
	l->pid = fork();
	if (l->pid != 0)
		pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (l->pid < 0) {
		int err = -errno;

		close(barrier[0]);
		close(barrier[1]);
		if (cgroup_procs) {
			close(cgroup_word[0]);
			close(cgroup_word[1]);
		}
		return err;
	}
	if (l->pid == 0) {
		restore_default_signals(&before);
		close(barrier[1]);
		if (cgroup_procs) {
			close(cgroup_word[0]);
			enter_cgroup(cgroup_procs, cgroup_word[1]);
		}
		if (drop_privileges(uid, gid)) {
			fprintf(stderr, "unitmeter: cannot switch to uid %u gid %u: %s\n", uid, gid,
				strerror(errno));
			_exit(126);
		}
		/* EOF instead of the byte: unitmeter gave up, so never run the command untraced */
		if (read(barrier[0], &go, 1) != 1)
			_exit(126);
		close(barrier[0]);
		execv(path, argv);
		fprintf(stderr, "unitmeter: cannot run %s: %s\n", path, strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(barrier[0]);
	l->release_fd = barrier[1];
	if (cgroup_procs) {
		close(cgroup_word[1]);
		l->cgroup_fd = cgroup_word[0];
	}
	return 0;
}

int launch__release(struct launch *l)
{
	ssize_t n = write(l->release_fd, "x", 1);

	close(l->release_fd);
	l->release_fd = -1;
	return n == 1 ? 0 : -EPIPE;
}

void launch__abort(struct launch *l)
{
	if (l->cgroup_fd >= 0) {
		close(l->cgroup_fd);
		l->cgroup_fd = -1;
	}
	if (l->pid <= 0)
		return;
	if (l->release_fd >= 0) {
		close(l->release_fd); /* the child sees EOF and exits without exec */
		l->release_fd = -1;
	}
	while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
		;
	l->pid = -1;
}
