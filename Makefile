# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# unitmeter: `make` builds, `make test`, `make demo`, `make bench`, `make deps`, `make install`,
# `make deb`, `make dist` (the portable tarballs).
# V=1 shows the commands; SAN=1 builds user code with AddressSanitizer + UBSan into .output-san/.
.DELETE_ON_ERROR:
.SUFFIXES:

# the kernel architecture as the anchors name it (x86, arm64), from this machine unless given
HOST_ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
ARCH ?= $(HOST_ARCH)
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
CXX ?= g++
STRIP ?= strip

ifeq ($(SAN),1)
OUTPUT := .output-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
OUTPUT := .output
SANFLAGS :=
endif

# Another architecture than this machine's (make ARCH=arm64): clang and lld against a sysroot of
# Debian's libraries for it (tools/cross/sysroot.sh: unpacked, never installed), into
# .output-ARCH: the programs, the test binary, the workloads and the demo (make ARCH=arm64 all),
# the SPANK plugin (make ARCH=arm64 spank: SLURM's headers are in the sysroot).
# override: a package build for another architecture (make deb DEB_ARCH=arm64) gets
# CC=aarch64-linux-gnu-gcc and its kin from debhelper; this build is clang's, whatever is passed.
# PORTABLE=1 (what make dist runs): the same cross build for either architecture, against the
# oldest glibc Debian's mirror serves, libbpf, libelf, zlib, jansson, simdjson and the C++
# runtime linked in (tools/dist/sysroot.sh), into .output-dist-ARCH.
ifeq ($(PORTABLE),1)
SYSROOT := $(shell tools/dist/sysroot.sh $(if $(filter arm64,$(ARCH)),arm64,amd64))
CROSS_OUTPUT := $(OUTPUT)-dist-$(ARCH)
else ifneq ($(ARCH),$(HOST_ARCH))
SYSROOT ?= $(shell tools/cross/sysroot.sh $(if $(filter arm64,$(ARCH)),arm64,amd64))
CROSS_OUTPUT := $(OUTPUT)-$(ARCH)
endif
ifdef CROSS_OUTPUT
CROSS_TRIPLE := $(if $(filter arm64,$(ARCH)),aarch64-linux-gnu,x86_64-linux-gnu)
# -fuse-ld on every command (some rules compile and link in one): unused when only compiling.
# --as-needed as Debian's gcc links by default: a library nothing calls is not a dependency
# (the arm64 package does not depend on zlib1g, which the amd64 one does not either).
CROSS_FLAGS := --target=$(CROSS_TRIPLE) --sysroot=$(SYSROOT) -fuse-ld=lld -Wl,--as-needed \
	-Wno-unused-command-line-argument
override CC := clang $(CROSS_FLAGS)
override CXX := clang++ $(CROSS_FLAGS)
override STRIP := llvm-strip
OUTPUT := $(CROSS_OUTPUT)
endif

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# clang -target bpf does not search the host's system include dirs (asm/types.h lives there on
# Debian), so pass them explicitly, after our own, as libbpf-bootstrap does.
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Ivmlinux/$(ARCH) -Ibpf $(CLANG_BPF_SYS_INCLUDES)
# What a packager passes (dpkg-buildflags: hardening), before the sanitizers are added: the
# libraries other programs load (the marker, the SPANK plugin) take these, never the sanitizers.
PKG_CFLAGS := $(CFLAGS)
PKG_LDFLAGS := $(LDFLAGS)
CFLAGS ?= -g -O2
CFLAGS += -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -MMD -MP -I$(OUTPUT) -Ibpf -Iuser $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
# C++ only in user/files/fastjson.cc, the C-callable wrapper of simdjson (the units stream
# reader's fast path): its runtime comes with -lstdc++.
CXXFLAGS ?= -g -O2
CXXFLAGS += -std=c++17 -Wall -Wextra -Werror -MMD -MP -Iuser $(SANFLAGS)
LDLIBS := -lbpf -lelf -lz -ljansson -lsimdjson -lstdc++ -lm -pthread
ifeq ($(PORTABLE),1)
PORTABLE_CFLAGS := -include tools/dist/glibc-floor.h
CFLAGS += $(PORTABLE_CFLAGS)
# every library but the C library's own linked in; dlopen (NVML) is libdl's before glibc 2.34
LDLIBS := -Wl,-Bstatic -lbpf -lelf -lz -ljansson -lsimdjson -lstdc++ -Wl,-Bdynamic -static-libgcc \
	-lm -ldl -pthread
endif

# maps.bpf.c first: libbpf's linker resolves the others' extern maps only to an earlier definition.
BPF_SRCS := bpf/maps.bpf.c $(filter-out bpf/maps.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_BASELINE_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf-baseline/%.bpf.o,$(BPF_SRCS))
BPF_THREAD_CACHE_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf-thread-cache/%.bpf.o,$(BPF_SRCS))
BPF_HDRS := $(wildcard bpf/*.h)
SKELS := $(OUTPUT)/unitmeter.skel.h $(OUTPUT)/unitmeter_thread_cache.skel.h \
	$(OUTPUT)/unitmeter_baseline.skel.h $(OUTPUT)/fault_hook.skel.h
# user/ by the pipeline's stage (CONTRIBUTING.md, Layout); user/marker/ is a library of its own, not linked.
USER_STAGES := common trace record files project page commands
USER_SRCS := $(filter-out user/commands/main.c,$(foreach d,$(USER_STAGES),$(wildcard user/$(d)/*.c)))
USER_CXX_SRCS := $(foreach d,$(USER_STAGES),$(wildcard user/$(d)/*.cc))
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS)) \
	$(patsubst user/%.cc,$(OUTPUT)/user/%.o,$(USER_CXX_SRCS))
# tests/bpf/: the white-box tier (the model's arithmetic on the host, the skeleton's state).
TEST_SRCS := $(wildcard tests/*.c tests/bpf/*.c)
TEST_OBJS := $(patsubst tests/%.c,$(OUTPUT)/tests/%.o,$(TEST_SRCS))
# One binary, so Criterion's closing line is the suite's.
TEST_BIN := $(OUTPUT)/tests/unitmeter_tests
WORKLOADS := $(patsubst tools/workloads/%.c,$(OUTPUT)/workloads/%,$(wildcard tools/workloads/*.c)) \
	$(OUTPUT)/workloads/libunitfit.so $(OUTPUT)/workloads/units-stripped \
	$(OUTPUT)/workloads/fakecuda/libcuda.so.1 $(OUTPUT)/workloads/gpu_driver \
	$(OUTPUT)/workloads/gpu_driver_late $(OUTPUT)/workloads/fakenvml/libnvidia-ml.so.1
DEMO := $(OUTPUT)/demo/fit_demo
# The SPANK plugin is loaded by slurmstepd, srun and sbatch, never sanitized: it lives in .output/
# for both builds, and the tests of either build load that one (another architecture's, in
# .output-ARCH/).
SPANK := $(if $(CROSS_TRIPLE),$(OUTPUT),.output)/unitmeter_spank.so

ifeq ($(ARCH),$(HOST_ARCH))
.PHONY: all
all: unitmeter
else
# no ./unitmeter link: it stays this machine's build
.PHONY: all
all: $(OUTPUT)/unitmeter $(OUTPUT)/libunitmeter_marker.so $(TEST_BIN) $(WORKLOADS) $(DEMO)
endif

unitmeter: $(OUTPUT)/unitmeter $(OUTPUT)/libunitmeter_marker.so
	$(Q)ln -sf $< $@

# what make install installs of the build, for this machine or another architecture
.PHONY: programs
programs: $(OUTPUT)/unitmeter $(OUTPUT)/libunitmeter_marker.so

# The markers the Python bootstrap calls; probed, never linked into unitmeter.
$(OUTPUT)/libunitmeter_marker.so: user/marker/marker.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O2 $(PKG_CFLAGS) $(CPPFLAGS) -Wall -Wextra -Werror -shared -fPIC $< \
		-o $@ $(PKG_LDFLAGS)

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/bpf-thread-cache $(OUTPUT)/bpf-baseline $(OUTPUT)/page $(OUTPUT)/tests $(OUTPUT)/workloads $(OUTPUT)/demo \
		$(OUTPUT)/screenshots:
	$(Q)mkdir -p $@

# The programs are built three times (bpf/compat.bpf.h, UM_BUILD): for kernels with per-CPU mm
# counters; for kernels before them with the BPF of 5.17 (the thread-cache build); and the
# baseline for what a 5.10 kernel offers. The loader picks one at start (user/trace/kernel.c).
$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bpf-thread-cache/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/bpf-thread-cache
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DUM_BUILD=UM_BUILD_THREAD_CACHE -c $< -o $@

$(OUTPUT)/bpf-baseline/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/bpf-baseline
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DUM_BUILD=UM_BUILD_BASELINE -c $< -o $@

# Link the per-concern objects into one; gen object also strips DWARF but keeps BTF.
$(OUTPUT)/unitmeter.bpf.o: $(BPF_OBJS)
	$(call msg,LINK-BPF,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

# Its kernels (before 6.2) have no kfunc bpf_rdonly_cast, which libbpf must resolve at load.
$(OUTPUT)/unitmeter_thread_cache.bpf.o: $(BPF_THREAD_CACHE_OBJS)
	$(call msg,LINK-BPF,$@)
	$(Q)$(BPFTOOL) gen object $@ $^
	$(Q)if llvm-readelf -s $@ | grep -w bpf_rdonly_cast; then \
		echo "$@: bpf_rdonly_cast (6.2) in the thread-cache build (ask UM_HAVE_RDONLY_CAST)"; \
		rm -f $@; exit 1; fi

# 5.10's verifier refuses every fetching atomic, even where it cannot be reached: none may be here.
$(OUTPUT)/unitmeter_baseline.bpf.o: $(BPF_BASELINE_OBJS)
	$(call msg,LINK-BPF,$@)
	$(Q)$(BPFTOOL) gen object $@ $^
	$(Q)if llvm-objdump -d $@ | grep -E 'atomic_fetch|xchg|cmpxchg'; then \
		echo "$@: fetching atomics in the baseline build (use um_fetch_add and friends)"; \
		rm -f $@; exit 1; fi

$(OUTPUT)/unitmeter.skel.h: $(OUTPUT)/unitmeter.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name unitmeter_bpf > $@

# The loader opens every object through the first skeleton's struct: the three must name the
# same programs, maps and globals at the same offsets, which the comparison of their structs
# proves.
$(OUTPUT)/unitmeter_thread_cache.skel.h: $(OUTPUT)/unitmeter_thread_cache.bpf.o $(OUTPUT)/unitmeter.skel.h
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name unitmeter_thread_cache_bpf > $@.tmp
	$(Q)tools/skel-layout.sh $(OUTPUT)/unitmeter.skel.h unitmeter_bpf $@.tmp unitmeter_thread_cache_bpf
	$(Q)mv $@.tmp $@

$(OUTPUT)/unitmeter_baseline.skel.h: $(OUTPUT)/unitmeter_baseline.bpf.o $(OUTPUT)/unitmeter.skel.h
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name unitmeter_baseline_bpf > $@.tmp
	$(Q)tools/skel-layout.sh $(OUTPUT)/unitmeter.skel.h unitmeter_bpf $@.tmp unitmeter_baseline_bpf
	$(Q)mv $@.tmp $@

# The fault hooks' trial (user/trace/fault_hook.c): an object of its own, outside the programs.
$(OUTPUT)/probe/fault_hook.bpf.o: bpf/probe/fault_hook.bpf.c vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/fault_hook.skel.h: $(OUTPUT)/probe/fault_hook.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name fault_hook_bpf > $@

$(OUTPUT)/user/%.o: user/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(OUTPUT)/user/%.o: user/%.cc
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

# The page's stylesheet and script (user/page/report.css, report.js) as C arrays in html.o. The
# files keep a rule or a statement a line for reading; the page has always carried each on one
# line, so newlines are dropped (neither holds one that means anything) before xxd -i.
$(OUTPUT)/page/report_%.h: user/page/report.% | $(OUTPUT)/page
	$(call msg,EMBED,$@)
	$(Q)tr -d '\n' < $< > $@.bin
	$(Q)xxd -i -n um_report_$* $@.bin | sed 's/^unsigned/static const unsigned/' > $@.tmp
	$(Q)rm -f $@.bin && mv $@.tmp $@

$(OUTPUT)/user/page/html.o: $(OUTPUT)/page/report_css.h $(OUTPUT)/page/report_js.h

$(OUTPUT)/unitmeter: $(OUTPUT)/user/commands/main.o $(USER_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# SLURM's spank.h; the plugin's symbols are resolved in the SLURM process that loads it.
# SLURM_PREFIX=DIR: a site's SLURM (DIR/include/slurm/spank.h) rather than the distribution's;
# SLURM loads only a plugin built against its own release's headers.
.PHONY: spank
spank: $(SPANK)

$(SPANK): spank/unitmeter_spank.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -g -O2 $(PKG_CFLAGS) $(CPPFLAGS) $(if $(SLURM_PREFIX),-I$(SLURM_PREFIX)/include) \
		-D_GNU_SOURCE -Wall -Wextra -Werror -shared -fPIC $< -o $@ $(PKG_LDFLAGS)

# Tests link the user objects (pure functions are tested directly) and run the binary.
$(OUTPUT)/tests/%.o: tests/%.c | $(OUTPUT)/tests $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -c $< -o $@

$(TEST_BIN): $(TEST_OBJS) $(USER_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -lcriterion -o $@

# Ground-truth workloads are plain programs: no sanitizer, so their own memory is what they say.
$(OUTPUT)/workloads/%: tools/workloads/%.c tools/workloads/truth.h | $(OUTPUT)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -g -O2 -Wall -Wextra -Werror -pthread $< -o $@ -lm

$(OUTPUT)/workloads/dlopen_driver: tools/workloads/dlopen_driver.c | $(OUTPUT)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -g -O2 -Wall -Wextra -Werror $< -o $@ -ldl

$(OUTPUT)/workloads/libunitfit.so: tools/workloads/lib/libunitfit.c | $(OUTPUT)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -g -O2 -Wall -Wextra -Werror -shared -fPIC $< -o $@

# The fake CUDA driver (no GPU in CI): the real SONAME, and its exports bound to themselves, so
# cuGetProcAddress hands out the addresses dlsym gives, as the real driver does.
$(OUTPUT)/workloads/fakecuda/libcuda.so.1: tools/workloads/gpu/fake_libcuda.c \
		tools/workloads/gpu/fake_cuda.h | $(OUTPUT)/workloads
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -g -O2 -Wall -Wextra -Werror -shared -fPIC -pthread \
		-Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic-functions $< -o $@

# The fake NVML, in its own folder: a test puts it on LD_LIBRARY_PATH only when it wants NVML.
$(OUTPUT)/workloads/fakenvml/libnvidia-ml.so.1: tools/workloads/gpu/fake_nvml.c \
		tools/workloads/gpu/fake_cuda.h | $(OUTPUT)/workloads
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -g -O2 -Wall -Wextra -Werror -shared -fPIC \
		-Wl,-soname,libnvidia-ml.so.1 $< -o $@

$(OUTPUT)/workloads/gpu_driver: tools/workloads/gpu/gpu_driver.c tools/workloads/gpu/fake_cuda.h \
		$(OUTPUT)/workloads/fakecuda/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -g -O2 -Wall -Wextra -Werror -pthread $< -o $@ \
		-L$(OUTPUT)/workloads/fakecuda -l:libcuda.so.1 -ldl

$(OUTPUT)/workloads/gpu_driver_late: tools/workloads/gpu/gpu_driver.c tools/workloads/gpu/fake_cuda.h \
		| $(OUTPUT)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -g -O2 -Wall -Wextra -Werror -pthread -DGPU_LATE_DLOPEN $< -o $@ -ldl

# A stripped copy, for the error a stripped binary gets.
$(OUTPUT)/workloads/units-stripped: $(OUTPUT)/workloads/units
	$(call msg,STRIP,$@)
	$(Q)$(STRIP) -s -o $@ $<

$(DEMO): tools/demo/fit_demo.c | $(OUTPUT)/demo
	$(call msg,CC,$@)
	$(Q)$(CC) $(PORTABLE_CFLAGS) -std=gnu11 -g -O2 -Wall -Wextra -Werror $< -o $@ -lm

# --- make dist: the portable tarballs ------------------------------------------------------
# One self-contained unitmeter per architecture for every glibc distribution from RHEL 8 (glibc
# 2.28) on: a sub-make with PORTABLE=1 builds it (the cross build against tools/dist/sysroot.sh),
# installs it into a staging tree as make install lays it out (PREFIX empty: bin/, lib/unitmeter/,
# share/) with the demo, the SPANK plugin's source and install.sh, checks every binary with
# tools/dist/glibc-floor.sh, and packs dist/unitmeter-VERSION-MACHINE-linux.tar.gz.
UM_VERSION := $(shell sed -n 's/^\#define UM_VERSION "\(.*\)"/\1/p' user/common/version.h)
DIST_ARCHES ?= x86 arm64
DIST_NAME := unitmeter-$(UM_VERSION)-$(if $(filter arm64,$(ARCH)),aarch64,x86_64)-linux
# the tarball's times: the last commit's, so the same tree packs the same bytes
DIST_EPOCH = $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
DIST_X86_TARBALL := dist/unitmeter-$(UM_VERSION)-x86_64-linux.tar.gz
.PHONY: dist dist-tarball
dist: build-deps
	$(call install_missing,clang lld llvm)
	$(Q)for a in $(DIST_ARCHES); do $(MAKE) --no-print-directory PORTABLE=1 ARCH=$$a dist-tarball || exit 1; done

# Where the tarballs are proven (as root; minutes): the SPANK plugin built from the tarball's
# source against Debian's two SLURM releases; the x86-64 tarball in fresh roots of Debian 11, 12
# and 13 on this machine's kernel; the arm64 one in a guest of Debian 12's arm64 kernel.
DIST_TEST_RELEASES ?= bullseye bookworm trixie
DIST_ARM64_KERNEL ?= 6.12.118+deb12-arm64
.PHONY: dist-test
dist-test: dist
	@# the check itself fails where it should: this machine's dynamic build asks a newer glibc
	@$(MAKE) --no-print-directory unitmeter
	@! tools/dist/glibc-floor.sh .output/unitmeter >/dev/null 2>&1 || \
		{ echo "dist-test: glibc-floor.sh passed the dynamic build, which asks glibc 2.34+"; exit 1; }
	@tools/dist/spank-releases.sh $(DIST_X86_TARBALL)
	@for r in $(DIST_TEST_RELEASES); do \
		FRESH_ROOT_COPY=$(abspath $(DIST_X86_TARBALL)) tools/vm/fresh-root.sh $$r \
			"tests/dist/tarball-in-root.sh /root/$(notdir $(DIST_X86_TARBALL))" || exit 1; done
	@$(if $(filter arm64,$(DIST_ARCHES)),$(MAKE) --no-print-directory vm-deps && \
		tests/dist/tarball-guest.sh dist/unitmeter-$(UM_VERSION)-aarch64-linux.tar.gz $(DIST_ARM64_KERNEL),true)

ifeq ($(PORTABLE),1)
DIST_STAGE := $(OUTPUT)/stage/$(DIST_NAME)
dist-tarball: programs $(OUTPUT)/unitmeter.1.gz $(DEMO)
	$(call msg,DIST,dist/$(DIST_NAME).tar.gz)
	$(Q)rm -rf $(OUTPUT)/stage
	$(Q)$(MAKE) --no-print-directory PORTABLE=1 ARCH=$(ARCH) install PREFIX= \
		DESTDIR=$(abspath $(DIST_STAGE)) INSTALL_SPANK=0
	$(Q)$(INSTALL) -d $(DIST_STAGE)/share/unitmeter/demo $(DIST_STAGE)/share/unitmeter/spank
	$(Q)$(INSTALL) -m 755 $(DEMO) tools/demo/run-demo.sh tools/demo/run-demo-python.sh \
		$(DIST_STAGE)/share/unitmeter/demo/
	$(Q)$(INSTALL) -m 644 tools/demo/fit_gmm.py $(DIST_STAGE)/share/unitmeter/demo/
	$(Q)$(INSTALL) -m 644 spank/unitmeter_spank.c $(DIST_STAGE)/share/unitmeter/spank/
	$(Q)$(INSTALL) -m 644 tools/dist/spank.mk $(DIST_STAGE)/share/unitmeter/spank/Makefile
	$(Q)$(INSTALL) -m 755 tools/dist/install.sh $(DIST_STAGE)/install.sh
	$(Q)$(STRIP) --strip-unneeded $(DIST_STAGE)/bin/unitmeter \
		$(DIST_STAGE)/lib/unitmeter/libunitmeter_marker.so
	$(Q)# the demo keeps its symbol table: its units are found by name
	$(Q)$(STRIP) --strip-debug $(DIST_STAGE)/share/unitmeter/demo/fit_demo
	$(Q)tools/dist/glibc-floor.sh $(DIST_STAGE)/bin/unitmeter \
		$(DIST_STAGE)/lib/unitmeter/libunitmeter_marker.so $(DIST_STAGE)/share/unitmeter/demo/fit_demo
	$(Q)mkdir -p dist
	$(Q)tar -C $(OUTPUT)/stage --owner=0 --group=0 --numeric-owner --sort=name \
		--mtime=@$(DIST_EPOCH) -czf dist/$(DIST_NAME).tar.gz $(DIST_NAME)
endif

# --- make install [PREFIX=/usr/local] [DESTDIR=] ---------------------------------------------
# unitmeter finds the marker library and the Python bootstrap relative to its own binary
# (user/trace/python.c): BINDIR/../lib/unitmeter/, so both directories follow PREFIX and are not set
# apart. The SPANK plugin goes where a SLURM built with the same prefix looks for plugins
# (Debian's: SLURM_PLUGINDIR=/usr/lib/TRIPLE/slurm-wlm, TRIPLE x86_64-linux-gnu or
# aarch64-linux-gnu: dpkg-architecture -qDEB_HOST_MULTIARCH), its plugstack.conf snippet
# in SYSCONFDIR/slurm/plugstack.conf.d/ (Debian's plugstack.conf includes /etc/slurm's).
# INSTALL_SPANK=0 leaves the plugin out (no libslurm-dev).
PREFIX ?= /usr/local
SYSCONFDIR ?= $(PREFIX)/etc
SLURM_PLUGINDIR ?= $(PREFIX)/lib/slurm
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL_SPANK ?= 1
BINDIR := $(PREFIX)/bin
UM_LIBDIR := $(PREFIX)/lib/unitmeter
BOOT_FILES := $(wildcard python/unitmeter_boot/*.py)
PLUGSTACK_SNIPPET := $(SYSCONFDIR)/slurm/plugstack.conf.d/unitmeter.conf
INSTALL ?= install

# The man page, compressed as Debian installs man pages (-n: no name or time in the header, so
# the file is the same at every build).
$(OUTPUT)/unitmeter.1.gz: man/unitmeter.1 | $(OUTPUT)
	$(call msg,GZIP,$@)
	$(Q)gzip -9n -c $< > $@

# optional, not required: if the plugin cannot be loaded (a SLURM upgrade), jobs still run.
$(OUTPUT)/plugstack-unitmeter.conf: FORCE | $(OUTPUT)
	$(Q)printf '%s\n' '# unitmeter: sbatch/srun --unitmeter=SPEC[,SPEC...] traces the tasks of a job (man unitmeter)' \
		'optional $(SLURM_PLUGINDIR)/unitmeter_spank.so unitmeter=$(BINDIR)/unitmeter' > $@

.PHONY: install uninstall man-lint install-test FORCE
FORCE:
install: programs $(OUTPUT)/unitmeter.1.gz $(if $(filter 1,$(INSTALL_SPANK)),$(SPANK) $(OUTPUT)/plugstack-unitmeter.conf)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UM_LIBDIR)/python/unitmeter_boot \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	$(Q)$(INSTALL) -m 755 $(OUTPUT)/unitmeter $(DESTDIR)$(BINDIR)/unitmeter
	$(Q)$(INSTALL) -m 644 $(OUTPUT)/libunitmeter_marker.so $(DESTDIR)$(UM_LIBDIR)/
	$(Q)$(INSTALL) -m 644 $(BOOT_FILES) $(DESTDIR)$(UM_LIBDIR)/python/unitmeter_boot/
	$(Q)$(INSTALL) -m 644 $(OUTPUT)/unitmeter.1.gz $(DESTDIR)$(MANDIR)/man1/
	$(Q)$(INSTALL) -m 644 completion/unitmeter $(DESTDIR)$(BASHCOMPDIR)/unitmeter
ifeq ($(INSTALL_SPANK),1)
	$(Q)$(INSTALL) -d $(DESTDIR)$(SLURM_PLUGINDIR) $(DESTDIR)$(dir $(PLUGSTACK_SNIPPET))
	$(Q)$(INSTALL) -m 644 $(SPANK) $(DESTDIR)$(SLURM_PLUGINDIR)/unitmeter_spank.so
	$(Q)$(INSTALL) -m 644 $(OUTPUT)/plugstack-unitmeter.conf $(DESTDIR)$(PLUGSTACK_SNIPPET)
endif

# Every file install puts, and the directories that are unitmeter's own; __pycache__ is what a
# Python run as root compiled from the bootstrap.
uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(BINDIR)/unitmeter $(DESTDIR)$(UM_LIBDIR)/libunitmeter_marker.so \
		$(addprefix $(DESTDIR)$(UM_LIBDIR)/python/unitmeter_boot/,$(notdir $(BOOT_FILES))) \
		$(DESTDIR)$(MANDIR)/man1/unitmeter.1.gz $(DESTDIR)$(BASHCOMPDIR)/unitmeter \
		$(DESTDIR)$(SLURM_PLUGINDIR)/unitmeter_spank.so $(DESTDIR)$(PLUGSTACK_SNIPPET)
	$(Q)rm -rf $(DESTDIR)$(UM_LIBDIR)/python/unitmeter_boot/__pycache__
	$(Q)for d in $(UM_LIBDIR)/python/unitmeter_boot $(UM_LIBDIR)/python $(UM_LIBDIR); do \
		[ ! -d $(DESTDIR)$$d ] || rmdir $(DESTDIR)$$d; done

# The man page as man(1) and lintian read it: no warning from mandoc's lint nor from groff.
man-lint:
	$(Q)mandoc -T lint -W warning man/unitmeter.1
	$(Q)groff -ww -z -man man/unitmeter.1 2>&1 | { ! grep .; }

# In a copy of the tree: make install to a prefix, the copy deleted, the installed unitmeter
# traces python: units; a DESTDIR install lists what it should and uninstall removes it all;
# the installed man page renders and the installed completion completes (needs root: BPF).
install-test: man-lint $(DEMO)
	@tests/install/test-install.sh $(CURDIR) $(abspath $(DEMO))

# --- make deb: the Debian packages, built from a copy of the tree --------------------------
# dpkg-buildpackage writes into the source's parent directory, so the tree is copied under
# .output/deb/ and what it builds (the .debs, their -dbgsym, .buildinfo, .changes) stays there.
# lintian fails the target on any error.
# DEB_ARCH=arm64 on an amd64 machine builds the arm64 packages into .output/deb-arm64/
# (dpkg-buildpackage -a arm64; debian/rules cross-builds with clang and lld against the sysroot,
# and dh_strip takes the cross binutils, installed here: they replace nothing of this machine's).
DEB_VERSION = $(shell awk 'NR == 1 { gsub(/[^0-9A-Za-z.+~:-]/, "", $$2); print $$2 }' debian/changelog)
DEB_BUILD_ARCH := $(shell dpkg --print-architecture)
DEB_ARCH ?= $(DEB_BUILD_ARCH)
DEB_CROSS := $(filter-out $(DEB_BUILD_ARCH),$(DEB_ARCH))
DEB_OUT := .output/deb$(if $(DEB_CROSS),-$(DEB_ARCH))
DEB_TOOLS := debhelper dpkg-dev fakeroot lintian $(if $(DEB_CROSS),lld \
	binutils-$(shell dpkg-architecture -a$(DEB_ARCH) -qDEB_HOST_GNU_TYPE 2>/dev/null | tr _ -))
# -d: the other architecture's Build-Depends are unpacked in the sysroot, where dpkg does not look
# for them (tools/cross/sysroot.sh lists them); the build tools are this machine's (make deps)
DEB_BUILDPACKAGE_FLAGS := -us -uc -b $(if $(DEB_CROSS),-a$(DEB_ARCH) -d)

.PHONY: deb deb-deps deb-test
deb-deps: deps
	$(call install_missing,$(DEB_TOOLS))

deb: deb-deps
	@grep -q 'UM_VERSION "$(DEB_VERSION)"' user/common/version.h && grep -q '"unitmeter $(DEB_VERSION)"' man/unitmeter.1 \
		|| { echo "deb: debian/changelog says $(DEB_VERSION); user/common/version.h and man/unitmeter.1 must too"; exit 1; }
	$(Q)rm -rf $(DEB_OUT) && mkdir -p $(DEB_OUT)/src/unitmeter-$(DEB_VERSION)
	$(Q)tar --exclude=./.git --exclude='./.output*' --exclude=./unitmeter --exclude=./demo-output -cf - . \
		| tar -C $(DEB_OUT)/src/unitmeter-$(DEB_VERSION) -xf -
	$(call msg,DEB,$(DEB_OUT))
	$(Q)cd $(DEB_OUT)/src/unitmeter-$(DEB_VERSION) && dpkg-buildpackage $(DEB_BUILDPACKAGE_FLAGS) >../build.log 2>&1 \
		|| { tail -40 ../build.log; echo "deb: dpkg-buildpackage failed (log: $(DEB_OUT)/src/build.log)"; exit 1; }
	$(Q)mv $(DEB_OUT)/src/*.deb $(DEB_OUT)/src/*.buildinfo $(DEB_OUT)/src/*.changes $(DEB_OUT)/src/build.log $(DEB_OUT)/
	$(Q)rm -rf $(DEB_OUT)/src
	$(call msg,LINTIAN,$(DEB_OUT)/unitmeter_$(DEB_VERSION)_$(DEB_ARCH).changes)
	$(Q)lintian --fail-on error $(DEB_OUT)/unitmeter_$(DEB_VERSION)_$(DEB_ARCH).changes
	@ls $(DEB_OUT)/*.deb

# The packages unpacked in a scratch root, their dependencies resolved by apt (simulated), then
# the unpacked unitmeter runs the demo and python: units (needs root: BPF). Another DEB_ARCH's
# cannot run here: apt resolves them for that architecture, and their files are checked.
deb-test: deb $(if $(DEB_CROSS),,tracefs $(DEMO))
	@tests/install/test-deb.sh $(DEB_OUT) $(DEB_ARCH) $(if $(DEB_CROSS),,$(abspath $(DEMO)))

# Another DEB_ARCH's packages run in a guest of it (tools/vm/vm-boot.sh; arm64 under TCG: under a
# minute once the kernel and the guest's root are cached): unitmeter check, the demo with that
# architecture's fit_demo, python: units. Not in CI, which would fetch the arm64 kernel and
# build the guest's root first: make deb-test checks what it can without a guest.
DEB_VMTEST_RELEASE ?= $(if $(filter arm64,$(DEB_ARCH)),6.12.118+deb12-arm64,6.1.0-57-amd64)
DEB_KARCH := $(patsubst amd64,x86,$(DEB_ARCH))
DEB_DEMO := .output$(if $(DEB_CROSS),-$(DEB_KARCH))/demo/fit_demo
.PHONY: deb-vmtest
deb-vmtest: deb vm-deps
	$(MAKE) ARCH=$(DEB_KARCH) $(DEB_DEMO)
	@tests/install/test-deb-guest.sh $(DEB_OUT) $(DEB_ARCH) $(DEB_DEMO) $(DEB_VMTEST_RELEASE)

# --- install what the build and the tests need (Debian 12 and 13), then mount tracefs -------
# Packages by what they are, never by a version one release alone has: clang, llvm and
# libclang-rt-dev are the release's default LLVM (14 on Debian 12, 19 on 13; the compiler-rt of
# that clang: the sanitizers and libFuzzer), gcc and g++ the C compiler and the one C++ file's
# (user/files/fastjson.cc), python3 the release's Python (3.11, 3.13).
# What the programs need to build, and all the demo needs; the tests, the SPANK plugin, the
# man page's lint and the page's browser check need the rest (a laptop that only wants the demo
# gets no SLURM, munge or Chromium). llvm: llvm-objdump checks the BPF objects.
BUILD_PACKAGES := gcc g++ clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libjansson-dev \
	libsimdjson-dev xxd pkg-config
DEMO_PYTHON_PACKAGES := python3 python3-numpy python3-sklearn
DEB_PACKAGES := $(BUILD_PACKAGES) $(DEMO_PYTHON_PACKAGES) libclang-rt-dev libcriterion-dev \
	python3-joblib slurm-wlm munge libslurm-dev mandoc man-db bash-completion chromium xz-utils

.PHONY: deps build-deps tracefs
# Install those of the named Debian packages that are missing; nothing when all are there.
define install_missing
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "$@: installing $$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

deps:
	$(call install_missing,$(DEB_PACKAGES))

build-deps:
	$(call install_missing,$(BUILD_PACKAGES))

tracefs:
	@[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing

# The build choice (UM_BUILD) is read only by the kernel shims: a new difference between kernels
# becomes a shim in bpf/compat.bpf.h, citing the change it follows, and code asks for a feature.
.PHONY: bpf-layout-check
bpf-layout-check:
	$(Q)if grep -nE 'UM_BUILD|UM_BPF_OF_5_10' $(filter-out bpf/compat.bpf.h,$(wildcard bpf/*.c bpf/*.h bpf/probe/*.c)); then \
		echo "$@: the build choice outside bpf/compat.bpf.h: ask for a feature of it"; \
		exit 1; fi

# user/'s stages include only their own and earlier stages' headers (tools/layer-check.sh).
.PHONY: layer-check
layer-check:
	$(Q)tools/layer-check.sh $(USER_STAGES)

.PHONY: build-test
build-test: bpf-layout-check layer-check unitmeter $(OUTPUT)/libunitmeter_marker.so $(TEST_BIN) $(WORKLOADS) \
	$(DEMO) $(SPANK) | $(OUTPUT)/screenshots

# The suite: every Criterion binary, against the real BPF programs. UNITMETER and WORKLOADS tell
# the integration tests which builds to run; SPANK_PLUGIN and SLURM_TOOLS serve the SLURM tests,
# TOOLS the holds suite (tools/bench/project_holds.py).
.PHONY: test
test: deps tracefs
	$(MAKE) build-test
	@LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) \
		UNITMETER=$(abspath $(OUTPUT)/unitmeter) WORKLOADS=$(abspath $(OUTPUT)/workloads) \
		DEMO=$(abspath $(DEMO)) FIXTURES=$(abspath tests/fixtures) TOOLS=$(abspath tools) \
		SPANK_PLUGIN=$(abspath $(SPANK)) SLURM_TOOLS=$(abspath tools/slurm) \
		BROWSER_CHECK=$(abspath tools/browser-check) SCREENSHOT_DIR=$(abspath $(OUTPUT)/screenshots) \
		tools/run-tests.sh $(TEST_BIN)
	@# the fuzz harnesses replay their corpus: already sanitized, so once, in the plain build
	@[ "$(SAN)" = 1 ] || $(MAKE) --no-print-directory fuzz-corpus
	@# make install from a copy of the tree, as a user would: once, in the plain build
	@[ "$(SAN)" = 1 ] || $(MAKE) --no-print-directory install-test

.PHONY: demo
demo: build-deps tracefs
	$(MAKE) unitmeter $(OUTPUT)/libunitmeter_marker.so $(DEMO)
	@tools/demo/run-demo.sh $(abspath $(OUTPUT)/unitmeter) $(abspath $(DEMO))

.PHONY: demo-python
demo-python: build-deps tracefs
	$(call install_missing,$(DEMO_PYTHON_PACKAGES))
	$(MAKE) unitmeter $(OUTPUT)/libunitmeter_marker.so
	@tools/demo/run-demo-python.sh $(abspath $(OUTPUT)/unitmeter)

# The output blocks of README.md and docs/*.md, regenerated from what the binary prints
# (tools/readme-output.py; tests/test_readme.c fails when one is stale). The run blocks trace the
# demo, so root; the others read docs/example/.
.PHONY: readme-output
readme-output: tracefs
	$(MAKE) unitmeter $(OUTPUT)/libunitmeter_marker.so $(DEMO)
	@UNITMETER=$(abspath $(OUTPUT)/unitmeter) DEMO=$(abspath $(DEMO)) /usr/bin/python3 tools/readme-output.py

# Benchmarks: accuracy and overhead against time -v, the seed's poller and a bpftrace script.
# Never a timing failure; a crash or a lost event fails loudly.
BENCH_PACKAGES := bpftrace python3-psutil time
.PHONY: bench bench-quick bench-deps
bench-deps: deps
	$(call install_missing,$(BENCH_PACKAGES))

bench: bench-deps tracefs
	$(MAKE) unitmeter $(OUTPUT)/libunitmeter_marker.so $(WORKLOADS) $(DEMO)
	@/usr/bin/python3 tools/bench/bench.py $(addprefix --only ,$(BENCH_ONLY))

bench-quick: bench-deps tracefs
	$(MAKE) unitmeter $(OUTPUT)/libunitmeter_marker.so $(WORKLOADS) $(DEMO)
	@/usr/bin/python3 tools/bench/bench.py --quick $(addprefix --only ,$(BENCH_ONLY))

# The kernel matrix (tools/vm/): Debian 11, 12 and 13's kernels booted under qemu with this
# machine's root inside, cgroup v1 and v2, plus this machine's own kernel; the kernel-sensitive
# tests run in each. VMTEST_CELLS picks cells (RELEASE:v1, RELEASE:v2, host); default all.
# qemu-system-arm has qemu-system-aarch64, for the arm64 cells
VM_PACKAGES := qemu-system-x86 qemu-system-arm busybox-static cpio kmod
VMTEST_CELLS ?=
.PHONY: vmtest vm-deps
vm-deps: deps
	$(call install_missing,$(VM_PACKAGES))

# the arm64 cells (all cells by default, or those named) run the arm64 build, cross-built here
VMTEST_ARM64 := $(if $(VMTEST_CELLS),$(findstring -arm64,$(VMTEST_CELLS)),yes)
vmtest: vm-deps tracefs
	$(MAKE) build-test
	$(if $(VMTEST_ARM64),$(MAKE) ARCH=arm64 all)
	@UNITMETER=$(abspath $(OUTPUT)/unitmeter) WORKLOADS=$(abspath $(OUTPUT)/workloads) \
		DEMO=$(abspath $(DEMO)) FIXTURES=$(abspath tests/fixtures) TEST_BIN=$(abspath $(TEST_BIN)) \
		tools/vm/vmtest.sh $(VMTEST_CELLS)

# The matrix again with the BPF objects another release's clang builds (CHECK_CLANG: Debian 13's
# clang 19, which Debian 12 offers beside its 14), the whole build in .output-CHECK_CLANG/: a
# compiler's change to what the verifier is handed fails here, not on a user's machine. The
# host's kernel sees the same objects in Debian 13's make test (tools/vm/fresh-root.sh).
# The suites of the accounting programs (the Python and GPU suites add 5 of a cell's 10 minutes;
# clang 19's GPU programs run in Debian 13's make test).
CHECK_CLANG ?= clang-19
CHECK_CLANG_CELLS ?= 5.10.0-46-amd64:v1 6.1.0-57-amd64:v2
CHECK_CLANG_FILTER ?= @(run/*|units/*|charge/*|timeline/*|bpf_skel/*|kernel/check_*)
.PHONY: vmtest-clang
vmtest-clang: vm-deps tracefs
	$(call install_missing,$(CHECK_CLANG))
	$(MAKE) OUTPUT=.output-$(CHECK_CLANG) CLANG=$(CHECK_CLANG) VMTEST_CELLS="$(CHECK_CLANG_CELLS)" \
		VMTEST_FILTER='$(CHECK_CLANG_FILTER)' VMTEST_OUT=/var/tmp/unitmeter-vm/results-$(CHECK_CLANG) vmtest

# The SLURM cell: the SLURM suite's limits array (tests/test_slurm.c, h) on a one-node SLURM with
# CgroupPlugin=cgroup/v2 inside a guest booted with cgroup v2 (slurmd refuses cgroup/v2 on this
# machine's hybrid v1 layout): the step's cgroup, memory.max as the limit, the tracer's move out
# of the job. VMTEST_SLURM_CELLS as VMTEST_CELLS; logs in /var/tmp/unitmeter-vm/results-slurm.
VMTEST_SLURM_CELLS ?= 6.1.0-57-amd64:v2
.PHONY: vmtest-slurm
vmtest-slurm: vm-deps tracefs
	$(MAKE) build-test
	@UNITMETER=$(abspath $(OUTPUT)/unitmeter) WORKLOADS=$(abspath $(OUTPUT)/workloads) \
		DEMO=$(abspath $(DEMO)) FIXTURES=$(abspath tests/fixtures) TEST_BIN=$(abspath $(TEST_BIN)) \
		SPANK_PLUGIN=$(abspath $(SPANK)) SLURM_TOOLS=$(abspath tools/slurm) VMTEST_SLURM=1 \
		VMTEST_FILTER='slurm/*' VMTEST_OUT=$${VMTEST_OUT:-/var/tmp/unitmeter-vm/results-slurm} \
		tools/vm/vmtest.sh $(VMTEST_SLURM_CELLS)

# Fuzzing the parsers of untrusted JSON (summary, project) with libFuzzer. `make fuzz` runs each
# harness FUZZ_SECONDS and keeps what it finds new in fuzz/corpus/; `make test` replays the corpus.
FUZZ_SECONDS ?= 180
FUZZ_TARGETS := summary project
FUZZ_BINS := $(patsubst %,.output-fuzz/fuzz_%,$(FUZZ_TARGETS))
FUZZ_CFLAGS := -std=gnu11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -Iuser -Ibpf -Ifuzz \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

.output-fuzz:
	$(Q)mkdir -p $@

# The parsers and the projection, compiled straight into each harness with the fuzzer's flags.
FUZZ_USER_SRCS := user/common/summary.c user/common/text.c user/files/summary.c \
	user/files/units_file.c user/files/manifest_scan.c user/project/derive.c \
	user/project/input.c user/project/print.c user/project/project_time.c

# The fast path (simdjson, C++) too, so the fuzzer reaches both parsers of a line; linked by the C
# driver, which has no C++ UBSan runtime: no vptr checks (it holds no classes of ours).
.output-fuzz/fastjson.o: user/files/fastjson.cc user/files/fastjson.h user/files/units_file.h \
		user/common/unit_keys.h | .output-fuzz
	$(call msg,FUZZ-CXX,$@)
	$(Q)$(CLANG)++ -std=c++17 -g -O1 -Wall -Wextra -Werror -Iuser \
		-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr \
		-fno-sanitize-recover=undefined -c $< -o $@

.output-fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_input.h $(FUZZ_USER_SRCS) user/files/summary.h \
		user/common/summary.h user/files/units_file.h user/common/unit_keys.h user/files/fastjson.h \
		user/project/project.h .output-fuzz/fastjson.o | .output-fuzz
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(FUZZ_USER_SRCS) .output-fuzz/fastjson.o -o $@ \
		-ljansson -lsimdjson -lstdc++ -lm

.PHONY: fuzz fuzz-corpus
fuzz-corpus: $(FUZZ_BINS)
	@for t in $(FUZZ_TARGETS); do \
		.output-fuzz/fuzz_$$t -runs=0 fuzz/corpus/$$t 2>.output-fuzz/$$t.log \
			|| { tail -40 .output-fuzz/$$t.log; echo "fuzz corpus $$t: FAILED"; exit 1; }; \
		echo "fuzz corpus $$t: $$(ls fuzz/corpus/$$t | wc -l) inputs replayed, no finding"; \
	done

fuzz: deps $(FUZZ_BINS)
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzzing $$t for $(FUZZ_SECONDS) s"; \
		.output-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix=.output-fuzz/$$t- fuzz/corpus/$$t || exit 1; \
	done

.PHONY: clean
clean:
	rm -rf .output .output-san .output-fuzz .output-arm64 .output-san-arm64 .output-clang-* unitmeter

-include $(wildcard $(OUTPUT)/user/*/*.d $(OUTPUT)/tests/*.d $(OUTPUT)/tests/bpf/*.d)
