// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>
#include "trace/spec.h"
#include "trace/uprobe_link.h"

/* The kernel's values (uapi 6.6); Debian 12's headers predate them. */
#define UM_BPF_TRACE_UPROBE_MULTI 48
#define UM_BPF_F_UPROBE_MULTI_RETURN 1U

/* libbpf makes multi-uprobe links from 1.3 on */
#define UM_LIBBPF_UPROBE_MULTI \
	(LIBBPF_MAJOR_VERSION > 1 || (LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION >= 3))

#if !UM_LIBBPF_UPROBE_MULTI
/*
 * BPF_LINK_CREATE's attributes for a multi-uprobe link, laid out as the kernel's union bpf_attr
 * has them (link_create: four u32, then the uprobe_multi member at byte 16). The kernel reads
 * only what it knows and wants the rest zero.
 */
struct uprobe_multi_link_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
	uint32_t pad;
};
_Static_assert(offsetof(struct uprobe_multi_link_attr, path) == 16, "link_create layout");
_Static_assert(offsetof(struct uprobe_multi_link_attr, pid) == 56, "uprobe_multi layout");
#endif

/* One multi-uprobe link of one offset: its fd, or a negative errno. */
static int multi_link_create(int prog_fd, const char *path, unsigned long offset, bool retprobe,
			     uint64_t cookie)
{
#if UM_LIBBPF_UPROBE_MULTI
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	__u64 cookie64 = cookie;
	int fd;

	opts.uprobe_multi.path = path;
	opts.uprobe_multi.offsets = &offset;
	opts.uprobe_multi.cookies = &cookie64;
	opts.uprobe_multi.cnt = 1;
	opts.uprobe_multi.flags = retprobe ? UM_BPF_F_UPROBE_MULTI_RETURN : 0;
	fd = bpf_link_create(prog_fd, 0, UM_BPF_TRACE_UPROBE_MULTI, &opts);
	return fd < 0 ? -errno : fd;
#else
	struct uprobe_multi_link_attr attr;
	uint64_t offset64 = offset;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (uint32_t)prog_fd;
	attr.attach_type = UM_BPF_TRACE_UPROBE_MULTI;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)&offset64;
	attr.cookies = (uint64_t)(uintptr_t)&cookie;
	attr.cnt = 1;
	attr.multi_flags = retprobe ? UM_BPF_F_UPROBE_MULTI_RETURN : 0;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
#endif
}

bool uprobe_multi_supported(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, load,
		    .expected_attach_type = (enum bpf_attach_type)UM_BPF_TRACE_UPROBE_MULTI);
	int prog_fd, link_fd;

	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &load);
	if (prog_fd < 0)
		return false;
	link_fd = multi_link_create(prog_fd, "/", 0, false, 0);
	close(prog_fd);
	if (link_fd >= 0) {
		close(link_fd);
		return false;
	}
	return link_fd == -EBADF;
}

void uprobe_link_prepare(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		const char *section = bpf_program__section_name(prog);

		if (!strncmp(section, "uprobe", 6) || !strncmp(section, "uretprobe", 9))
			bpf_program__set_expected_attach_type(
				prog, (enum bpf_attach_type)UM_BPF_TRACE_UPROBE_MULTI);
	}
}

int uprobe_link_offset(const char *path, const char *symbol, bool multi, uint64_t *offset)
{
	char why[256];

	*offset = 0;
	return multi ? elf_function_offset(path, symbol, NULL, offset, why, sizeof(why)) : 0;
}

int uprobe_link_attach(struct uprobe_link *out, const struct bpf_program *prog, const char *path,
		       const char *symbol, uint64_t offset, bool retprobe, uint64_t cookie,
		       bool multi)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = cookie);
	int err;

	out->link = NULL;
	out->fd = out->perf_fd = -1;
	if (!multi) {
		opts.func_name = offset ? NULL : symbol;
		out->link = bpf_program__attach_uprobe_opts(prog, -1, path, offset, &opts);
		return out->link ? 0 : -errno;
	}
	if (!offset) {
		err = uprobe_link_offset(path, symbol, true, &offset);
		if (err)
			return err;
	}
	err = multi_link_create(bpf_program__fd(prog), path, offset, retprobe, cookie);
	if (err < 0)
		return err;
	out->fd = err;
	return 0;
}

/* The uprobe PMU's type, and the bit of its config that makes a return probe; -errno. */
static int uprobe_pmu(int *retprobe_bit)
{
	char text[64];
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	int type = -1;

	if (!f)
		return -errno;
	if (fscanf(f, "%d", &type) != 1)
		type = -EINVAL;
	fclose(f);
	*retprobe_bit = 0;
	f = fopen("/sys/bus/event_source/devices/uprobe/format/retprobe", "re");
	if (f) {
		/* "config:0" */
		if (fgets(text, sizeof(text), f) && !strncmp(text, "config:", 7))
			*retprobe_bit = atoi(text + 7);
		fclose(f);
	}
	return type;
}

/*
 * A uprobe perf event for every process at path's offset, its program linked with cookie
 * (BPF_LINK_CREATE of BPF_PERF_EVENT, 5.15): as libbpf attaches one, from a program's
 * descriptor (the node's programs, which this run did not load).
 */
static int perf_link_create(struct uprobe_link *out, int prog_fd, const char *path,
			    uint64_t offset, bool retprobe, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .perf_event.bpf_cookie = cookie);
	struct perf_event_attr attr = { .size = sizeof(attr) };
	int bit = 0, type = uprobe_pmu(&bit), fd;

	if (type < 0)
		return type;
	attr.type = (uint32_t)type;
	attr.config = retprobe ? 1ULL << bit : 0;
	attr.config1 = (uint64_t)(uintptr_t)path; /* uprobe_path */
	attr.config2 = offset;                    /* probe_offset */
	/* every process: cpu 0 with pid -1, as libbpf asks */
	out->perf_fd = (int)syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (out->perf_fd < 0)
		return -errno;
	fd = bpf_link_create(prog_fd, out->perf_fd, BPF_PERF_EVENT, &opts);
	if (fd < 0) {
		int err = -errno;

		close(out->perf_fd);
		out->perf_fd = -1;
		return err;
	}
	out->fd = fd;
	return 0;
}

int uprobe_link_attach_fd(struct uprobe_link *out, int prog_fd, const char *path,
			  const char *symbol, uint64_t offset, bool retprobe, uint64_t cookie,
			  bool multi)
{
	int err;

	out->link = NULL;
	out->fd = out->perf_fd = -1;
	if (!offset) {
		err = uprobe_link_offset(path, symbol, true, &offset);
		if (err)
			return err;
	}
	if (!multi)
		return perf_link_create(out, prog_fd, path, offset, retprobe, cookie);
	err = multi_link_create(prog_fd, path, offset, retprobe, cookie);
	if (err < 0)
		return err;
	out->fd = err;
	return 0;
}

void uprobe_link_destroy(struct uprobe_link *link)
{
	bpf_link__destroy(link->link);
	if (link->fd >= 0)
		close(link->fd);
	if (link->perf_fd >= 0)
		close(link->perf_fd);
	link->link = NULL;
	link->fd = link->perf_fd = -1;
}
