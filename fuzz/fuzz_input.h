/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The loaders read files by name, as the CLI does: hand them the fuzzer's bytes as an
 * anonymous in-memory file, named through /proc/self/fd, so the code under test is the real path.
 */
#ifndef UM_FUZZ_INPUT_H
#define UM_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static int fuzz_file(const uint8_t *data, size_t size, char *path, size_t pathlen)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	snprintf(path, pathlen, "/proc/self/fd/%d", fd);
	return fd;
}

#endif
