// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * writer: write exactly --bytes B to --file through write, pwrite, writev and pwritev, plus some
 * bytes to stdout and /dev/null, which are not regular files and must not count.
 * Truth: the file's size afterwards.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "truth.h"

int main(int argc, char **argv)
{
	long total = arg_long(argc, argv, "--bytes", 1000000);
	const char *path = arg_str(argc, argv, "--file", "writer.out");
	static char chunk[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), null = open("/dev/null", O_WRONLY);
	long done = 0;
	int turn = 0;
	struct stat st;

	if (fd < 0 || null < 0)
		return 1;
	memset(chunk, 'u', sizeof(chunk));
	while (done < total) {
		size_t n = (size_t)(total - done) < 10007 ? (size_t)(total - done) : 10007;
		struct iovec iov[2] = { { chunk, n / 2 }, { chunk, n - n / 2 } };
		ssize_t w;

		switch (turn++ % 4) {
		case 0:
			w = write(fd, chunk, n);
			break;
		case 1:
			w = pwrite(fd, chunk, n, done);
			lseek(fd, done + n, SEEK_SET);
			break;
		case 2:
			w = writev(fd, iov, 2);
			break;
		default:
			w = pwritev(fd, iov, 2, done);
			lseek(fd, done + n, SEEK_SET);
			break;
		}
		if (w <= 0)
			return 1;
		done += w;
		if (write(null, chunk, 4096) < 0)
			return 1;
	}
	close(fd);
	stat(path, &st);
	printf("{\"bytes\": %ld, \"file_size\": %lld}\n", done, (long long)st.st_size);
	return 0;
}
