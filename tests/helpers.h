/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Test helpers: run the real unitmeter binary on a real workload and collect what both said:
 * the manifest, the units stream, the workload's own truth (its stdout) and unitmeter's stderr.
 */
#ifndef UM_TEST_HELPERS_H
#define UM_TEST_HELPERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <jansson.h>
#include <sys/types.h>

struct um_result {
	int status;          /* unitmeter's exit status (128+sig when killed) */
	char dir[64];        /* private temp dir of this run */
	char manifest_path[128];
	char units_path[128];
	json_t *manifest;    /* NULL when none was written */
	json_t *units;       /* array, from the JSONL stream */
	json_t *truth;       /* the workload's last stdout line, parsed; NULL if none */
	char *out;           /* the workload's whole stdout */
	char *err;           /* unitmeter's and the workload's stderr */
};

/* Skip unless this test can load BPF programs (root, tracefs). */
void require_tracing(void);
/* Whether this kernel and boot have a memory controller (Debian 13's kernel has none in v1). */
bool memory_controller(void);
/* Path of a built workload, the unitmeter binary, a fixture. */
const char *workload(const char *name);
/* The units workload in slow mode (--units N --sleep-ms S), its stdout on *out, returned once it
 * has printed "ready": it runs its own image, not this binary's. The caller closes *out after
 * the workload is gone (its later lines must not meet a closed pipe). */
pid_t slow_units_started(const char *units, const char *sleep_ms, int *out);
const char *unitmeter_bin(void);
const char *fixture(const char *rel);

/*
 * Run `unitmeter <args...> -o DIR/run.json --units-jsonl DIR/run.units.jsonl` when
 * add_outputs, else exactly args; NULL-terminated. Returns 0 when it ran.
 */
int um_run(struct um_result *r, bool add_outputs, const char *const *args);
/* um_run, calling child_setup in unitmeter's process just before its exec (NULL: nothing). */
int um_run_with(struct um_result *r, bool add_outputs, const char *const *args,
		void (*child_setup)(void));
void um_result_free(struct um_result *r);

/*
 * unitmeter attach in the background (args end with "--ready-fd", a->fd_text): attach_start
 * returns once it says every probe is attached and the processes walked (units before are not
 * reported, and set-up takes seconds in a slow guest), so the target can be told to go;
 * pthread_join(th) waits for its end, with a->r filled.
 */
struct attach_run {
	struct um_result r;
	const char *const *args;
	char fd_text[16];
	int ready_w; /* the write end unitmeter inherits: closed here once it has ended */
};
void attach_start(struct attach_run *a, pthread_t *th);
/* The whole stdout of a shell command (malloc'd); *status gets its exit status (-1: killed). */
char *sh_out(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A whole file as a string (malloc'd), or NULL when it cannot be opened. */
char *slurp_file(const char *path);
/* `unitmeter <args...>` that must exit 0 and print one JSON document: the document. */
json_t *um_run_json(const char *const *args);

/* tools/browser-check (BROWSER_CHECK) and where its screenshots go (SCREENSHOT_DIR). */
const char *browser_check(void);
const char *screenshot_dir(void);
/* browser-check on page, a screenshot to shot, each "name=selector" of counts counted: its JSON
 * (console_errors, counts); the test fails when it cannot run. */
json_t *render(const char *page, const char *shot, const char *const *counts);
/* Each console error of render's JSON a failure. */
void expect_no_console_errors(const json_t *j);

/* Figures out of JSON, failing the test when the key is missing. */
double jnum(const json_t *obj, const char *key);
json_t *jget(const json_t *obj, const char *key);
/* The per_process record of pid in a manifest. */
json_t *proc_record(const json_t *manifest, long pid);

/*
 * Wait until a child of parent runs the program named comm (the traced command has exec'd, so
 * every probe is attached): its pid, or 0 after timeout_s. Waits, not tolerances, carry the
 * slowness of an emulated machine (make vmtest): they are generous.
 */
pid_t wait_for_child_running(pid_t parent, const char *comm, int timeout_s);

/*
 * A suite's guard against a hung test: generous enough for an emulated guest of the kernel
 * matrix (make vmtest), where everything runs ~10x slower. Criterion takes the smaller of this
 * and its --timeout, and tools/run-tests.sh passes 120 s on real machines.
 */
#define UM_SUITE_TIMEOUT_S 900

/* The BPF programs, links and maps a process holds (bpf_ids_collect), by their kernel ids. */
struct bpf_ids {
	unsigned id[3][1024]; /* prog, link, map */
	int n[3];
};

void bpf_ids_add(struct bpf_ids *ids, int kind, unsigned id);
/*
 * The programs, links and maps pid holds, from /proc/PID/fdinfo: this bpftool is built without
 * the "pids" feature, and other unitmeter instances (other tests) may load the same programs.
 */
void bpf_ids_collect(pid_t pid, struct bpf_ids *ids);
/*
 * Whether the kernel has let go of all of ids (`bpftool KIND show -j` lists none), waiting up
 * to 3 s: it frees an object after its last reference drops, which may trail the close by an
 * RCU grace period. When not, which names those left (" prog 12 map 40").
 */
bool bpf_ids_gone(const struct bpf_ids *ids, char *which, size_t len);

/* |a-b| <= max(rel*|truth|, abs) */
bool within(double value, double truth, double rel, double abs);

#define MIB_F (1024.0 * 1024.0)

/* unitmeter's own failure: 125 for run (whose status is otherwise its command's), else 2 */
#define RUN_FAILED 125
#define COMMAND_FAILED 2
#define FAILED_STATUS(command) (strcmp((command), "run") ? COMMAND_FAILED : RUN_FAILED)
/*
 * n pages of this kernel in bytes: tolerances are stated in pages, so that they hold on 16K and
 * 64K page kernels as on 4K ones.
 */
double pages_f(double n);

/*
 * A job array's units streams for the readers at scale: files x units lines, in the writer's keys
 * and formats (as tools/bench/make_array.py), into dir/task-N.units.jsonl, paths[i] naming each
 * (freed by the caller). The truth is taken from the text as written, by strtod and strtoll,
 * not by a JSON parser: the figures over every unit and over the complete ones.
 */
struct array_truth {
	size_t n, n_complete;
	double wall_sum;                        /* every unit, in file order */
	double wall_max_complete, peak_rss_max; /* complete units; every unit */
	long long output_sum;
};
void write_array(const char *dir, int files, int units, char **paths, struct array_truth *t);
/* The files and dir of write_array, removed; paths freed. */
void remove_array(const char *dir, int files, char **paths);
/* The highest peak RSS of any child this process waited for, in MiB (RUSAGE_CHILDREN). */
double children_maxrss_mib(void);
/* The bound a reader of 100,000 units (20 files) must stay under; BENCHMARKS.md has the
 * measurement: 10 to 18 MiB (summary, project, report), 280 MiB before they streamed. */
#define ARRAY_RSS_BOUND_MIB 64.0
/* 100,000 units in 20 streams (write_array) in a directory of its own. */
#define ARRAY_FILES 20
struct um_array {
	char dir[32];
	char *paths[ARRAY_FILES];
	struct array_truth t;
};
void array_make(struct um_array *a);
/* a's units as manifests (one per stream, the units indented in its "units"), in m->dir */
void array_make_manifests(struct um_array *m, const struct um_array *a);
/* `unitmeter LEAD... FILES...` (lead NULL-terminated), which must exit 0 and stay under
 * ARRAY_RSS_BOUND_MIB (not bounded in an AddressSanitizer build, logged instead). */
void array_run(struct um_result *r, const struct um_array *a, const char *const *lead);
/* The last waited-for child's peak RSS (children_maxrss_mib) under ARRAY_RSS_BOUND_MIB;
 * logged, not bounded, in an AddressSanitizer build. */
void expect_array_rss_bounded(const char *what);
void array_remove(struct um_array *a);

#endif
