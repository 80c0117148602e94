// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/clock.h"
#include "common/fileio.h"
#include "common/log.h"

/* /proc files report size 0, so read until EOF instead of trusting stat. */
char *um_read_text(const char *path)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int fd, saved;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger)
				goto fail;
			buf = bigger;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = saved;
	return NULL;
}

int um_proc_stat_field(pid_t pid, int field, unsigned long long *value)
{
	char path[64], *text, *at;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	text = um_read_text(path);
	if (!text)
		return -errno;
	/* fields 1 and 2 are the pid and "(name)": from the name's last ')' on, field 3 first */
	at = strrchr(text, ')');
	for (int f = 2; at && f < field; f++)
		at = strchr(at + 1, ' ');
	if (at && field >= 3)
		*value = strtoull(at + 1, NULL, 10);
	else
		err = -EINVAL;
	free(text);
	return err;
}

char *um_read_text_at(const char *root, const char *path)
{
	char full[4096];

	if (snprintf(full, sizeof(full), "%s%s", root, path) >= (int)sizeof(full)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return um_read_text(full);
}

FILE *um_create_output(const char *path, uid_t uid, gid_t gid)
{
	/* O_NOFOLLOW: a symlink planted in a shared directory must not redirect a root write */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *f;

	if (fd < 0)
		return NULL;
	um_hand_over(fd, path, uid, gid);
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

void um_hand_over(int fd, const char *path, uid_t uid, gid_t gid)
{
	if (geteuid() == 0 && uid != 0 && fchown(fd, uid, gid))
		um_warn("cannot hand %s to uid %u: %s", path, uid, strerror(errno));
}

int um_atomic_open(struct um_atomic_file *a, const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char dir[PATH_MAX];
	const char *in;

	a->path = path;
	a->fd = -1;
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	in = dirname(dir);
	/* a name nobody can guess, as mkstemp makes, but created with mode as open(2) applies it */
	for (int tries = 0; tries < 100; tries++) {
		uint64_t r;
		char name[7];

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = um_monotonic_ns() * 6364136223846793005ULL + (uint64_t)getpid() + tries;
		for (int i = 0; i < 6; i++, r /= sizeof(letters) - 1)
			name[i] = letters[r % (sizeof(letters) - 1)];
		name[6] = '\0';
		if (snprintf(a->tmp, sizeof(a->tmp), "%s/.unitmeter-%s", in, name) >=
		    (int)sizeof(a->tmp)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		a->fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (a->fd >= 0) {
			um_hand_over(a->fd, path, uid, gid);
			return 0;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

int um_atomic_commit(struct um_atomic_file *a)
{
	int saved;

	if (!rename(a->tmp, a->path))
		return 0;
	saved = errno;
	unlink(a->tmp);
	errno = saved;
	return -1;
}

void um_atomic_abort(struct um_atomic_file *a)
{
	unlink(a->tmp);
}

/*
 * The directory of path must exist, and path must not be a directory, before anything starts:
 * a run must not end unwritable.
 */
int um_output_path_check(const char *what, const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	const char *slash = strrchr(path, '/');

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		um_err("%s %s is a directory: name a file", what, path);
		return -EISDIR;
	}
	if (!slash)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (!*dir)
		return 0;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		um_err("%s %s: directory %s does not exist", what, path, dir);
		return -ENOENT;
	}
	return 0;
}

/* Whether two output paths name one file: same directory (resolved) and same name. */
bool um_same_output(const char *a, const char *b)
{
	char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
	const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');

	snprintf(da, sizeof(da), "%.*s", na ? (int)(na - a) + 1 : 1, na ? a : ".");
	snprintf(db, sizeof(db), "%.*s", nb ? (int)(nb - b) + 1 : 1, nb ? b : ".");
	if (!realpath(da, ra) || !realpath(db, rb))
		return false;
	return !strcmp(ra, rb) && !strcmp(na ? na + 1 : a, nb ? nb + 1 : b);
}

char *um_default_units_path(const char *manifest)
{
	size_t len = strlen(manifest);
	char *path = malloc(len + sizeof(".units.jsonl"));

	if (!path)
		return NULL;
	memcpy(path, manifest, len + 1);
	if (len > 5 && !strcmp(path + len - 5, ".json"))
		path[len - 5] = '\0';
	strcat(path, ".units.jsonl");
	return path;
}
