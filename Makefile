# unitmeter: `make` builds, `make test`, `make demo`, `make bench`, `make deps`.
# V=1 shows the commands; SAN=1 builds user code with AddressSanitizer + UBSan into .output-san/.
.DELETE_ON_ERROR:
.SUFFIXES:

ARCH ?= x86
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc

ifeq ($(SAN),1)
OUTPUT := .output-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
OUTPUT := .output
SANFLAGS :=
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
CFLAGS ?= -g -O2
CFLAGS += -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -MMD -MP -I$(OUTPUT) -Ibpf -Iuser $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
LDLIBS := -lbpf -lelf -lz -ljansson -lm -pthread

# maps.bpf.c first: libbpf's linker resolves the others' extern maps only to an earlier definition.
BPF_SRCS := bpf/maps.bpf.c $(filter-out bpf/maps.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_BASELINE_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf-baseline/%.bpf.o,$(BPF_SRCS))
SKELS := $(OUTPUT)/unitmeter.skel.h $(OUTPUT)/unitmeter_baseline.skel.h
USER_SRCS := $(filter-out user/main.c,$(wildcard user/*.c))
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
TEST_SRCS := $(wildcard tests/*.c)
TEST_OBJS := $(patsubst tests/%.c,$(OUTPUT)/tests/%.o,$(TEST_SRCS))
# One binary, so Criterion's closing line is the suite's.
TEST_BIN := $(OUTPUT)/tests/unitmeter_tests
WORKLOADS := $(patsubst tools/workloads/%.c,$(OUTPUT)/workloads/%,$(wildcard tools/workloads/*.c)) \
	$(OUTPUT)/workloads/libunitfit.so $(OUTPUT)/workloads/units-stripped
DEMO := $(OUTPUT)/demo/fit_demo
# The SPANK plugin is loaded by slurmstepd, srun and sbatch, never sanitized: it lives in .output/
# for both builds, and the tests of either build load that one.
SPANK := .output/unitmeter_spank.so

.PHONY: all
all: unitmeter

unitmeter: $(OUTPUT)/unitmeter $(OUTPUT)/libunitmeter_marker.so
	$(Q)ln -sf $< $@

# The markers the Python bootstrap calls; probed, never linked into unitmeter.
$(OUTPUT)/libunitmeter_marker.so: user/marker/marker.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -shared -fPIC $< -o $@

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/bpf-baseline $(OUTPUT)/user $(OUTPUT)/tests $(OUTPUT)/workloads $(OUTPUT)/demo \
		$(OUTPUT)/screenshots:
	$(Q)mkdir -p $@

# The programs are built twice (bpf/state.bpf.h): for kernels with per-CPU mm counters, and the
# baseline for what a 5.10 kernel offers. The loader picks one at start (user/kernel.c).
$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c bpf/state.bpf.h bpf/rss_cache.bpf.h bpf/charge.bpf.h bpf/unitmeter.h vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bpf-baseline/%.bpf.o: bpf/%.bpf.c bpf/state.bpf.h bpf/rss_cache.bpf.h bpf/charge.bpf.h bpf/unitmeter.h vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/bpf-baseline
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DUM_BASELINE=1 -c $< -o $@

# Link the per-concern objects into one; gen object also strips DWARF but keeps BTF.
$(OUTPUT)/unitmeter.bpf.o: $(BPF_OBJS)
	$(call msg,LINK-BPF,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

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

# The loader opens either object through the first skeleton's struct: the two must name the same
# programs, maps and globals at the same offsets, which the comparison of their structs proves.
$(OUTPUT)/unitmeter_baseline.skel.h: $(OUTPUT)/unitmeter_baseline.bpf.o $(OUTPUT)/unitmeter.skel.h
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name unitmeter_baseline_bpf > $@.tmp
	$(Q)tools/skel-layout.sh $(OUTPUT)/unitmeter.skel.h unitmeter_bpf $@.tmp unitmeter_baseline_bpf
	$(Q)mv $@.tmp $@

$(OUTPUT)/user/%.o: user/%.c | $(OUTPUT)/user $(SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUTPUT)/unitmeter: $(OUTPUT)/user/main.o $(USER_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# SLURM's spank.h; the plugin's symbols are resolved in the SLURM process that loads it.
.PHONY: spank
spank: $(SPANK)

$(SPANK): spank/unitmeter_spank.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -g -O2 -D_GNU_SOURCE -Wall -Wextra -Werror -shared -fPIC $< -o $@

# Tests link the user objects (pure functions are tested directly) and run the binary.
$(OUTPUT)/tests/%.o: tests/%.c | $(OUTPUT)/tests $(SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests -c $< -o $@

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

# A stripped copy, for the error a stripped binary gets.
$(OUTPUT)/workloads/units-stripped: $(OUTPUT)/workloads/units
	$(call msg,STRIP,$@)
	$(Q)strip -s -o $@ $<

$(DEMO): tools/demo/fit_demo.c | $(OUTPUT)/demo
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -g -O2 -Wall -Wextra -Werror $< -o $@ -lm

# --- install what the build and the tests need (Debian 12), then mount tracefs -------------
DEB_PACKAGES := clang libclang-rt-14-dev llvm libbpf-dev bpftool libelf-dev zlib1g-dev libjansson-dev \
	libcriterion-dev pkg-config python3 python3-numpy python3-sklearn python3-joblib \
	slurm-wlm munge libslurm-dev chromium

.PHONY: deps tracefs
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

tracefs:
	@[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing

.PHONY: build-test
build-test: unitmeter $(OUTPUT)/libunitmeter_marker.so $(TEST_BIN) $(WORKLOADS) $(DEMO) $(SPANK) \
	| $(OUTPUT)/screenshots

# The suite: every Criterion binary, against the real BPF programs. UNITMETER and WORKLOADS tell
# the integration tests which builds to run; SPANK_PLUGIN and SLURM_TOOLS serve the SLURM tests.
.PHONY: test
test: deps tracefs
	$(MAKE) build-test
	@LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) \
		UNITMETER=$(abspath $(OUTPUT)/unitmeter) WORKLOADS=$(abspath $(OUTPUT)/workloads) \
		DEMO=$(abspath $(DEMO)) FIXTURES=$(abspath tests/fixtures) \
		SPANK_PLUGIN=$(abspath $(SPANK)) SLURM_TOOLS=$(abspath tools/slurm) \
		BROWSER_CHECK=$(abspath tools/browser-check) SCREENSHOT_DIR=$(abspath $(OUTPUT)/screenshots) \
		tools/run-tests.sh $(TEST_BIN)
	@# the fuzz harnesses replay their corpus: already sanitized, so once, in the plain build
	@[ "$(SAN)" = 1 ] || $(MAKE) --no-print-directory fuzz-corpus

.PHONY: demo
demo: deps tracefs
	$(MAKE) unitmeter $(OUTPUT)/libunitmeter_marker.so $(DEMO)
	@tools/demo/run-demo.sh $(abspath $(OUTPUT)/unitmeter) $(abspath $(DEMO))

.PHONY: demo-python
demo-python: deps tracefs
	$(MAKE) unitmeter $(OUTPUT)/libunitmeter_marker.so
	@tools/demo/run-demo-python.sh $(abspath $(OUTPUT)/unitmeter)

# Benchmarks: accuracy and overhead against time -v, the seed's poller and a bpftrace script.
# Never a timing failure; a crash or a lost event fails loudly.
BENCH_PACKAGES := bpftrace python3-psutil time
.PHONY: bench bench-quick bench-deps
bench-deps: deps
	$(call install_missing,$(BENCH_PACKAGES))

bench: bench-deps tracefs
	$(MAKE) unitmeter $(OUTPUT)/libunitmeter_marker.so $(WORKLOADS) $(DEMO)
	@/usr/bin/python3 tools/bench/bench.py

bench-quick: bench-deps tracefs
	$(MAKE) unitmeter $(OUTPUT)/libunitmeter_marker.so $(WORKLOADS) $(DEMO)
	@/usr/bin/python3 tools/bench/bench.py --quick

# The kernel matrix (tools/vm/): Debian 11, 12 and 13's kernels booted under qemu with this
# machine's root inside, cgroup v1 and v2, plus this machine's own kernel; the kernel-sensitive
# tests run in each. VMTEST_CELLS picks cells (RELEASE:v1, RELEASE:v2, host); default all.
VM_PACKAGES := qemu-system-x86 busybox-static cpio kmod
VMTEST_CELLS ?=
.PHONY: vmtest vm-deps
vm-deps: deps
	$(call install_missing,$(VM_PACKAGES))

vmtest: vm-deps tracefs
	$(MAKE) build-test
	@UNITMETER=$(abspath $(OUTPUT)/unitmeter) WORKLOADS=$(abspath $(OUTPUT)/workloads) \
		DEMO=$(abspath $(DEMO)) FIXTURES=$(abspath tests/fixtures) TEST_BIN=$(abspath $(TEST_BIN)) \
		tools/vm/vmtest.sh $(VMTEST_CELLS)

# Fuzzing the parsers of untrusted JSON (summary, project) with libFuzzer. `make fuzz` runs each
# harness FUZZ_SECONDS and keeps what it finds new in fuzz/corpus/; `make test` replays the corpus.
FUZZ_SECONDS ?= 180
FUZZ_TARGETS := summary project
FUZZ_BINS := $(patsubst %,.output-fuzz/fuzz_%,$(FUZZ_TARGETS))
FUZZ_CFLAGS := -std=gnu11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -Iuser -Ibpf -Ifuzz \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

.output-fuzz:
	$(Q)mkdir -p $@

.output-fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_input.h user/summary.c user/summary.h user/project.c \
		user/project.h | .output-fuzz
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< user/summary.c user/project.c -o $@ -ljansson -lm

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
	rm -rf .output .output-san .output-fuzz unitmeter

-include $(wildcard $(OUTPUT)/user/*.d $(OUTPUT)/tests/*.d)
