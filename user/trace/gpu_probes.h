/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Device memory through the CUDA driver API: the libcuda.so.1 a traced command would load, the
 * probes on its allocation entry points (bpf/gpu.bpf.c), and the run's figures read back.
 */
#ifndef UM_GPU_PROBES_H
#define UM_GPU_PROBES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "unitmeter.h"

struct unitmeter_bpf;
struct uprobe_link;

/* The run's device memory, as the probes left it at the end. */
struct gpu_counters {
	char library[PATH_MAX]; /* the libcuda.so.1 probed; "" when none was found */
	bool seen;              /* a traced process returned from a probed call */
	uint64_t peak_device_bytes[UM_GPU_SLOTS]; /* the last slot: device not known */
	uint64_t peak_bytes;
	uint64_t peak_managed_bytes;
	uint64_t calls;
	uint64_t failed_calls;
	uint64_t unknown_frees;
};

/*
 * The libcuda.so.1 to probe: the one process mapped_by (attach's target; 0: none) has mapped,
 * else the one the dynamic loader would give a command started now with this process's
 * environment: LD_LIBRARY_PATH, then the loader's cache (/etc/ld.so.cache), then the default
 * directories; never a toolkit's stubs/ copy. False when there is none (no GPU driver).
 */
bool gpu_library_find(pid_t mapped_by, char *path, size_t len);

/* The programs of the probes (bpf/gpu.bpf.c): an entry program per signature, one return. */
enum gpu_program {
	GPU_ALLOC_ENTER,
	GPU_MANAGED_ENTER,
	GPU_PITCH_ENTER,
	GPU_CREATE_ENTER,
	GPU_FREE_ENTER,
	GPU_RELEASE_ENTER,
	GPU_CTX_RETAIN_ENTER,
	GPU_CTX_CREATE_ENTER,
	GPU_CTX_SET_ENTER,
	GPU_RETURN,
	GPU_PROGRAMS
};
/* their names in the skeleton and in the node's registry */
extern const char *const gpu_program_names[GPU_PROGRAMS];

/*
 * Attach one probe: program at symbol (offset, where multi links need it) of path, its return
 * where ret; the caller's way (its own loaded program, or the node's set's by descriptor, with
 * its group's cookie). 0 or a negative errno (-ENOENT, -ESRCH: no such symbol).
 */
typedef int (*gpu_attach_fn)(void *ctx, struct uprobe_link *out, enum gpu_program program,
			     const char *path, const char *symbol, uint64_t offset, bool ret);

/*
 * Attach the probes to every entry point the library at path exports, with pid -1: they fire
 * in any process that maps the file, now or after a dlopen, and the BPF side keeps only the
 * tracked ones of the run's group (its tag in the cookie's high half, um_probe_group); multi:
 * offsets for multi-uprobe links (uprobe_link.h). Each link is handed to keep (which owns it
 * from then on). Returns the number of entry points probed, or a negative errno.
 */
int gpu_probes_attach(const char *path, bool multi, gpu_attach_fn attach,
		      int (*keep)(void *ctx, struct uprobe_link *link), void *ctx);

/* The run's figures, from its group. */
void gpu_counters_read(const struct um_group *group, struct gpu_counters *out);

#endif
