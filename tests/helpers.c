// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

void require_tracing(void)
{
	if (geteuid() != 0)
		cr_skip_test("tracing tests need root (run 'sudo make test')");
	if (access("/sys/kernel/tracing/events/kmem/rss_stat", F_OK))
		cr_skip_test("tracefs is not mounted at /sys/kernel/tracing ('make test' mounts it)");
}

/* Whether this kernel and boot have a memory controller (Debian 13's kernel has none in v1). */
bool memory_controller(void)
{
	char *text;
	bool has;

	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
		text = slurp_file("/sys/fs/cgroup/cgroup.controllers");
		has = text && strstr(text, "memory");
	} else {
		text = slurp_file("/proc/self/cgroup");
		has = text && strstr(text, ":memory:");
	}
	free(text);
	return has;
}

const char *workload(const char *name)
{
	static __thread char path[512];

	snprintf(path, sizeof(path), "%s/%s", env_or("WORKLOADS", ".output/workloads"), name);
	return path;
}

const char *unitmeter_bin(void)
{
	return env_or("UNITMETER", ".output/unitmeter");
}

const char *fixture(const char *rel)
{
	static __thread char path[512];

	snprintf(path, sizeof(path), "%s/%s", env_or("FIXTURES", "tests/fixtures"), rel);
	return path;
}

static char *slurp_fd(int fd)
{
	size_t cap = 8192, len = 0;
	char *buf = malloc(cap);
	ssize_t n;

	while (buf && (n = read(fd, buf + len, cap - len - 1)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len += n;
		if (len + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

char *slurp_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *text;

	if (fd < 0)
		return NULL;
	text = slurp_fd(fd);
	close(fd);
	return text;
}

static json_t *load_jsonl_array(const char *path)
{
	json_t *arr = json_array();
	char line[65536];
	FILE *f = fopen(path, "r");

	if (!f)
		return arr;
	while (fgets(line, sizeof(line), f)) {
		json_error_t e;
		json_t *v = json_loads(line, 0, &e);

		cr_assert_not_null(v, "units stream line is not valid JSON: %s (%s)", line, e.text);
		json_array_append_new(arr, v);
	}
	fclose(f);
	return arr;
}

/* The last non-empty line of the workload's stdout that parses as a JSON object. */
static json_t *last_json_line(const char *out)
{
	const char *end = out + strlen(out);

	while (end > out) {
		const char *start = end - 1;
		json_t *v;

		while (start > out && start[-1] != '\n')
			start--;
		v = json_loadb(start, end - start, 0, NULL);
		if (v && json_is_object(v))
			return v;
		json_decref(v);
		end = start > out ? start - 1 : out;
	}
	return NULL;
}

int um_run(struct um_result *r, bool add_outputs, const char *const *args)
{
	return um_run_with(r, add_outputs, args, NULL);
}

json_t *um_run_json(const char *const *args)
{
	struct um_result r;
	json_t *j;

	um_run(&r, false, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	j = json_loads(r.out, 0, NULL);
	cr_assert_not_null(j, "no JSON on stdout: %s", r.out);
	um_result_free(&r);
	return j;
}

int um_run_with(struct um_result *r, bool add_outputs, const char *const *args,
		void (*child_setup)(void))
{
	const char *argv[64];
	int out_pipe[2], n = 0, status;
	char err_path[160];
	pid_t pid;
	int errfd;

	memset(r, 0, sizeof(*r));
	snprintf(r->dir, sizeof(r->dir), "/tmp/um-test-XXXXXX");
	cr_assert_not_null(mkdtemp(r->dir));
	chmod(r->dir, 0755);
	snprintf(r->manifest_path, sizeof(r->manifest_path), "%s/run.json", r->dir);
	snprintf(r->units_path, sizeof(r->units_path), "%s/run.units.jsonl", r->dir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", r->dir);

	argv[n++] = unitmeter_bin();
	for (int i = 0; args[i] && n < 50; i++) {
		/* outputs go right after the subcommand, before the traced command */
		argv[n++] = args[i];
		if (i == 0 && add_outputs) {
			argv[n++] = "-o";
			argv[n++] = r->manifest_path;
			argv[n++] = "--units-jsonl";
			argv[n++] = r->units_path;
		}
	}
	argv[n] = NULL;
	cr_assert_eq(pipe(out_pipe), 0);
	errfd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert(errfd >= 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		dup2(out_pipe[1], 1);
		dup2(errfd, 2);
		close(out_pipe[0]);
		if (child_setup)
			child_setup();
		execv(argv[0], (char *const *)argv);
		_exit(99);
	}
	close(out_pipe[1]);
	close(errfd);
	r->out = slurp_fd(out_pipe[0]);
	close(out_pipe[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	errfd = open(err_path, O_RDONLY);
	r->err = slurp_fd(errfd);
	close(errfd);
	r->manifest = json_load_file(r->manifest_path, 0, NULL);
	r->units = load_jsonl_array(r->units_path);
	r->truth = last_json_line(r->out);
	return 0;
}

void um_result_free(struct um_result *r)
{
	char cmd[128];

	json_decref(r->manifest);
	json_decref(r->units);
	json_decref(r->truth);
	free(r->out);
	free(r->err);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
	if (r->dir[0] && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", r->dir);
}

json_t *jget(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	cr_assert_not_null(v, "no key \"%s\"", key);
	return v;
}

double jnum(const json_t *obj, const char *key)
{
	json_t *v = jget(obj, key);

	cr_assert(json_is_number(v), "\"%s\" is not a number", key);
	return json_number_value(v);
}

json_t *proc_record(const json_t *manifest, long pid)
{
	json_t *table = jget(jget(manifest, "run"), "per_process"), *p;
	size_t i;

	json_array_foreach(table, i, p)
		if (json_integer_value(json_object_get(p, "pid")) == pid)
			return p;
	cr_assert_fail("no per_process record for pid %ld", pid);
	return NULL;
}

bool within(double value, double truth, double rel, double abs)
{
	double tol = fmax(rel * fabs(truth), abs);

	return fabs(value - truth) <= tol;
}

double pages_f(double n)
{
	return n * (double)sysconf(_SC_PAGESIZE);
}

pid_t wait_for_child_running(pid_t parent, const char *comm, int timeout_s)
{
	char path[64];

	for (int tick = 0; tick < timeout_s * 20; tick++) {
		struct timespec ts = { 0, 50000000L };
		char *children;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", parent, parent);
		f = fopen(path, "re");
		children = NULL;
		if (f) {
			size_t n = 0;

			if (getline(&children, &n, f) < 0) {
				free(children);
				children = NULL;
			}
			fclose(f);
		}
		for (char *tok = children ? strtok(children, " \n") : NULL; tok;
		     tok = strtok(NULL, " \n")) {
			char name[32] = "";
			pid_t child = (pid_t)strtol(tok, NULL, 10);

			snprintf(path, sizeof(path), "/proc/%d/comm", child);
			f = fopen(path, "re");
			if (f) {
				if (!fgets(name, sizeof(name), f))
					name[0] = '\0';
				fclose(f);
			}
			name[strcspn(name, "\n")] = '\0';
			if (!strcmp(name, comm)) {
				free(children);
				return child;
			}
		}
		free(children);
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* ---- BPF objects a process holds, and whether the kernel still has them ------------------- */

static const char *const bpf_kinds[3] = { "prog", "link", "map" };
static const char *const fdinfo_keys[3] = { "prog_id:", "link_id:", "map_id:" };

void bpf_ids_add(struct bpf_ids *ids, int kind, unsigned id)
{
	for (int i = 0; i < ids->n[kind]; i++)
		if (ids->id[kind][i] == id)
			return;
	if (ids->n[kind] < (int)(sizeof(ids->id[kind]) / sizeof(ids->id[kind][0])))
		ids->id[kind][ids->n[kind]++] = id;
}

void bpf_ids_collect(pid_t pid, struct bpf_ids *ids)
{
	char dir[64], path[320];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char info[1024];
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, info, sizeof(info) - 1);
		close(fd);
		info[n > 0 ? n : 0] = '\0';
		/* a link's fdinfo names its program too: the first kind found, in this order, wins */
		for (int k = 1; k < 4; k++) {
			const char *key = fdinfo_keys[k % 3], *at = strstr(info, key);

			if (at) {
				bpf_ids_add(ids, k % 3, (unsigned)strtoul(at + strlen(key), NULL, 10));
				break;
			}
		}
	}
	closedir(d);
}

/*
 * What the unitmeter processes alive now hold: a node's set of programs (issue #34) lives while
 * any run holds it, so a run's programs outliving it in another run's hands are not left over.
 */
static void held_by_unitmeters(struct bpf_ids *held)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	memset(held, 0, sizeof(*held));
	while (d && (de = readdir(d))) {
		char path[300], comm[32] = "";
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (!strcmp(comm, "unitmeter\n"))
			bpf_ids_collect(pid, held);
	}
	if (d)
		closedir(d);
}

static bool id_in(const struct bpf_ids *ids, int kind, unsigned id)
{
	for (int j = 0; j < ids->n[kind]; j++)
		if (ids->id[kind][j] == id)
			return true;
	return false;
}

/* Which of ids `bpftool KIND show -j` still lists, held by no unitmeter process; 0 when none. */
static int still_loaded(const struct bpf_ids *ids, char *which, size_t len)
{
	struct bpf_ids *held = calloc(1, sizeof(*held));
	int left = 0;

	cr_assert_not_null(held);
	held_by_unitmeters(held);
	which[0] = '\0';
	for (int k = 0; k < 3; k++) {
		char cmd[64];
		json_t *list, *obj;
		size_t i;
		FILE *p;

		snprintf(cmd, sizeof(cmd), "bpftool %s show -j 2>/dev/null", bpf_kinds[k]);
		p = popen(cmd, "r");
		cr_assert_not_null(p);
		list = json_loadf(p, 0, NULL);
		pclose(p);
		cr_assert(json_is_array(list), "bpftool %s show -j gave no JSON list", bpf_kinds[k]);
		json_array_foreach(list, i, obj) {
			unsigned id = (unsigned)json_integer_value(json_object_get(obj, "id"));

			if (id_in(ids, k, id) && !id_in(held, k, id)) {
				size_t used = strlen(which);

				snprintf(which + used, len - used, " %s %u", bpf_kinds[k], id);
				left++;
			}
		}
		json_decref(list);
	}
	free(held);
	return left;
}

bool bpf_ids_gone(const struct bpf_ids *ids, char *which, size_t len)
{
	for (int i = 0; i < 60; i++) {
		struct timespec ts = { 0, 50 * 1000000L };

		if (!still_loaded(ids, which, len))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

void write_array(const char *dir, int files, int units, char **paths, struct array_truth *t)
{
	uint64_t state = 23;

	memset(t, 0, sizeof(*t));
	for (int f = 0; f < files; f++) {
		char path[256], line[1024];
		FILE *out;

		snprintf(path, sizeof(path), "%s/task-%d.units.jsonl", dir, f);
		paths[f] = strdup(path);
		out = fopen(path, "w");
		cr_assert_not_null(out, "%s: %s", path, strerror(errno));
		for (int i = 0; i < units; i++) {
			/* xorshift: the same files on every run */
			uint64_t r1, r2;
			double wall, cpu;
			long long rss, start_rss, out_bytes;
			bool complete;
			char *at;

			state ^= state << 13, state ^= state >> 7, state ^= state << 17;
			r1 = state;
			state ^= state << 13, state ^= state >> 7, state ^= state << 17;
			r2 = state;
			wall = 0.001 + (double)(r1 % 4000000) / 1e6;
			cpu = wall * (0.85 + (double)(r2 % 1000) / 7000.0);
			start_rss = 1800000 + (long long)(r2 % 300) * 4096;
			rss = start_rss + (long long)(r1 % 30000) * 4096;
			out_bytes = 150 + (long long)(r2 % 100);
			complete = r1 % 500 != 0;
			snprintf(line, sizeof(line),
				 "{\"index\": %d, \"spec\": \"fit_unit\", \"pid\": %d, \"start_ns\": %lld, "
				 "\"wall_s\": %.6f, \"cpu_s\": %.6f, \"cpu_utilisation\": %.3f, "
				 "\"peak_rss_bytes\": %lld, \"peak_rss_delta_bytes\": %lld, "
				 "\"start_rss_bytes\": %lld, \"n_samples\": %d, \"output_bytes\": %lld, "
				 "\"page_alloc_bytes\": %lld, \"start_charge_bytes\": 520192, "
				 "\"peak_charge_bytes\": %lld, \"processes\": 1, \"threads\": 1, "
				 "\"status\": %s}\n",
				 i, 4000 + f * 16 + i % 4, 50000000LL + (long long)(i / 4) * 4100000000LL, wall,
				 cpu, cpu / wall, rss, rss - start_rss, start_rss, (int)(wall * 3500),
				 out_bytes, rss - start_rss + 20480, 520192 + rss - start_rss,
				 complete ? "\"complete\""
					  : "\"incomplete\", \"incomplete_reason\": \"exit\"");
			fputs(line, out);
			/* the truth, from the text */
			wall = strtod(strstr(line, "\"wall_s\": ") + 10, NULL);
			rss = strtoll(strstr(line, "\"peak_rss_bytes\": ") + 18, NULL, 10);
			at = strstr(line, "\"output_bytes\": ") + 16;
			t->n++;
			t->wall_sum += wall;
			t->output_sum += strtoll(at, NULL, 10);
			if (rss > t->peak_rss_max)
				t->peak_rss_max = (double)rss;
			if (complete) {
				t->n_complete++;
				if (wall > t->wall_max_complete)
					t->wall_max_complete = wall;
			}
		}
		cr_assert_eq(fclose(out), 0);
	}
}

double children_maxrss_mib(void)
{
	struct rusage ru;

	cr_assert_eq(getrusage(RUSAGE_CHILDREN, &ru), 0);
	return ru.ru_maxrss / 1024.0; /* kilobytes on Linux */
}

void remove_array(const char *dir, int files, char **paths)
{
	for (int f = 0; f < files; f++) {
		unlink(paths[f]);
		free(paths[f]);
	}
	rmdir(dir);
}

void array_make(struct um_array *a)
{
	snprintf(a->dir, sizeof(a->dir), "/tmp/um-array-XXXXXX");
	cr_assert_not_null(mkdtemp(a->dir));
	write_array(a->dir, ARRAY_FILES, 5000, a->paths, &a->t);
	cr_assert_eq(a->t.n, 100000);
}

void array_make_manifests(struct um_array *m, const struct um_array *a)
{
	snprintf(m->dir, sizeof(m->dir), "/tmp/um-manifests-XXXXXX");
	cr_assert_not_null(mkdtemp(m->dir));
	m->t = a->t;
	for (int f = 0; f < ARRAY_FILES; f++) {
		char path[256], *line = NULL;
		size_t cap = 0;
		ssize_t len;
		FILE *in = fopen(a->paths[f], "r"), *out;
		bool first = true;

		snprintf(path, sizeof(path), "%s/task-%d.json", m->dir, f);
		m->paths[f] = strdup(path);
		out = fopen(path, "w");
		cr_assert(in && out, "%s: %s", path, strerror(errno));
		/* indented as record/manifest.c writes one: the units after the run */
		fprintf(out, "{\n  \"schema\": \"unitmeter.run/1\",\n  \"command\": [\"fit\", \"%d\"],\n"
			     "  \"run\": {\"wall_s\": 1, \"exit_status\": 0},\n  \"units\": [",
			f);
		while ((len = getline(&line, &cap, in)) > 0) {
			line[len - 1] = 0;
			fprintf(out, "%s\n    %s", first ? "" : ",", line);
			first = false;
		}
		fputs("\n  ]\n}\n", out);
		free(line);
		fclose(in);
		fclose(out);
	}
}

void array_run(struct um_result *r, const struct um_array *a, const char *const *lead)
{
	const char *args[32] = { 0 };
	int n = 0;

	while (lead[n] && n < 32 - ARRAY_FILES - 1) {
		args[n] = lead[n];
		n++;
	}
	for (int i = 0; i < ARRAY_FILES; i++)
		args[n++] = a->paths[i];
	um_run(r, false, args);
	cr_assert_eq(r->status, 0, "%s", r->err);
	expect_array_rss_bounded(args[0]);
}

void expect_array_rss_bounded(const char *what)
{
	double rss = children_maxrss_mib();

#ifndef __SANITIZE_ADDRESS__
	cr_expect_lt(rss, ARRAY_RSS_BOUND_MIB, "%s of 100,000 units: peak RSS %.1f MiB", what, rss);
#else
	/* ASan's redzones and quarantine hold freed memory: the bound is the release build's */
	cr_log_info("AddressSanitizer build: %s peak RSS %.1f MiB, not bounded", what, rss);
#endif
}

void array_remove(struct um_array *a)
{
	remove_array(a->dir, ARRAY_FILES, a->paths);
}

/* --- the page in a browser (tools/browser-check) ------------------------------------------- */

const char *browser_check(void)
{
	const char *v = getenv("BROWSER_CHECK");

	return v && *v ? v : "tools/browser-check";
}

/* Where screenshots go for a person to look at: kept after the suite. */
const char *screenshot_dir(void)
{
	const char *v = getenv("SCREENSHOT_DIR");

	return v && *v ? v : "/tmp";
}

/* tools/browser-check on page: its JSON (console errors, counts, the screenshot). */
json_t *render(const char *page, const char *shot, const char *const *counts)
{
	char cmd[2048];
	size_t len;
	FILE *p;
	char *out = NULL;
	size_t cap = 0;
	json_t *j;
	json_error_t e;

	len = (size_t)snprintf(cmd, sizeof(cmd), "%s '%s' --screenshot '%s' --height full",
			       browser_check(), page, shot);
	for (; counts && *counts; counts++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " --count '%s'", *counts);
	cr_assert_lt(len, sizeof(cmd));
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	{
		FILE *mem = open_memstream(&out, &cap);
		char buf[4096];
		size_t got;

		while ((got = fread(buf, 1, sizeof(buf), p)) > 0)
			fwrite(buf, 1, got, mem);
		fclose(mem);
	}
	cr_assert_eq(pclose(p), 0, "browser-check failed on %s (is chromium installed? 'make test' "
		     "installs it): %s", page, out);
	j = json_loads(out, 0, &e);
	cr_assert_not_null(j, "browser-check printed no JSON: %s", out);
	free(out);
	return j;
}

void expect_no_console_errors(const json_t *j)
{
	const json_t *errors = jget(j, "console_errors");
	size_t i;
	const json_t *e;

	json_array_foreach(errors, i, e)
		cr_expect_fail("console: %s", json_string_value(e));
}

pid_t slow_units_started(const char *units, const char *sleep_ms, int *out)
{
	char ready[64] = "";
	int fds[2];
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		execl(workload("units"), "units", "--mode", "slow", "--units", units, "--sleep-ms",
		      sleep_ms, (char *)NULL);
		_exit(99);
	}
	close(fds[1]);
	cr_assert_gt(read(fds[0], ready, sizeof(ready) - 1), 0);
	cr_assert_not_null(strstr(ready, "ready"), "the workload said: %s", ready);
	*out = fds[0];
	return pid;
}

/* The whole stdout of a shell command; *status gets its exit status. */
char *sh_out(int *status, const char *fmt, ...)
{
	char cmd[4096], *buf = NULL;
	size_t cap = 0, len = 0, n;
	va_list ap;
	FILE *p;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "popen %s: %s", cmd, strerror(errno));
	do {
		if (len + 4096 + 1 > cap)
			buf = realloc(buf, cap = cap * 2 + 8192);
		cr_assert_not_null(buf);
		n = fread(buf + len, 1, cap - len - 1, p);
		len += n;
	} while (n > 0);
	buf[len] = '\0';
	rc = pclose(p);
	*status = rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
	return buf;
}

static void *attach_thread(void *arg)
{
	struct attach_run *a = arg;

	um_run(&a->r, true, a->args);
	/* a unitmeter that failed before saying ok: the caller's read sees the end, not a hang */
	close(a->ready_w);
	return NULL;
}

void attach_start(struct attach_run *a, pthread_t *th)
{
	int fds[2];
	char ok[8] = "";

	cr_assert_eq(pipe(fds), 0);
	snprintf(a->fd_text, sizeof(a->fd_text), "%d", fds[1]);
	a->ready_w = fds[1];
	cr_assert_eq(pthread_create(th, NULL, attach_thread, a), 0);
	if (read(fds[0], ok, sizeof(ok) - 1) <= 0) {
		pthread_join(*th, NULL);
		cr_assert_fail("attach did not say ready: status %d: %s", a->r.status,
			       a->r.err ? a->r.err : "");
	}
	cr_assert_str_eq(ok, "ok\n");
	close(fds[0]);
}
