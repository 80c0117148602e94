// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "report.h"
#include "memcg.h"
#include "summary.h"
#include "unitmeter.h"

#define UM_SCHEMA "unitmeter.run/1"
#define UM_VERSION "0.1.0"
/* Progress lines per second at most. */
#define UM_PROGRESS_LINES 20
/* Units listed in the closing table; the manifest has them all. */
#define UM_TABLE_ROWS 40

struct proc_row {
	pid_t pid, ppid;
	char comm[UM_COMM_LEN];
	uint64_t start_ns, end_ns;
	bool finished, is_root, alive_at_end;
	uint64_t cpu_ns, peak_rss_bytes, page_alloc_bytes, output_bytes;
	int32_t exit_code;
	uint32_t threads;
};

/* The units stream's stdio buffer: larger than any line, so a line is never split by it. */
#define UNITS_STREAM_BUFFER (64 * 1024)
/* A unit's line: its figures take under 600 bytes; its spec, escaped, at most 6 bytes a byte. */
#define UNIT_LINE_MAX (1024 + 6 * UM_SPEC_TEXT_MAX)

struct report {
	const struct report_config *cfg;
	struct proc_row *procs;
	size_t n_procs, cap_procs;
	/* finished units as the kernel sent them: 96 bytes each, JSON is made when written */
	struct um_unit_record *units;
	size_t n_units, cap_units;
	char *spec_json[UM_MAX_SPECS]; /* each spec as a JSON string, escaped once */
	uint64_t progress_second_ns;
	size_t progress_lines, progress_skipped;
	FILE *stream;
	int stream_err;
	off_t stream_good;    /* bytes of the stream on disk that end with a complete line */
	off_t stream_pending; /* complete lines handed to stdio since the last flush */
	uint64_t t0_ns, stop_ns;
	bool have_exit;
	int wait_status;
	json_t *hardware;
	char *stream_buf;
	json_t *summary; /* computed once, for the manifest and the table: sorting a storm's units is not free */
	struct tracer_counters counters;
	struct memcg memcg;
};

FILE *um_create_output(const char *path, uid_t uid, gid_t gid)
{
	/* O_NOFOLLOW: a symlink planted in a shared directory must not redirect a root write */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (geteuid() == 0 && uid != 0 && fchown(fd, uid, gid))
		um_warn("cannot hand %s to uid %u: %s", path, uid, strerror(errno));
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

struct report *report__new(const struct report_config *cfg, char *err, size_t errlen)
{
	struct report *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->cfg = cfg;
	for (size_t i = 0; i < cfg->n_specs && i < UM_MAX_SPECS; i++) {
		json_t *text = json_string(cfg->specs[i].text);

		r->spec_json[i] = text ? json_dumps(text, JSON_ENCODE_ANY) : NULL;
		json_decref(text);
		if (!r->spec_json[i]) {
			snprintf(err, errlen, "out of memory");
			report__free(r);
			return NULL;
		}
	}
	if (cfg->units_jsonl) {
		r->stream = um_create_output(cfg->units_jsonl, cfg->owner_uid, cfg->owner_gid);
		if (!r->stream) {
			snprintf(err, errlen, "cannot write the units stream %s: %s", cfg->units_jsonl,
				 strerror(errno));
			report__free(r);
			return NULL;
		}
		/* fully buffered, flushed after each ring batch: one write per batch, not per unit.
		 * The buffer is ours: glibc takes a size only together with a buffer, and the
		 * flush-before-split rule below counts on this size */
		r->stream_buf = malloc(UNITS_STREAM_BUFFER);
		if (!r->stream_buf || setvbuf(r->stream, r->stream_buf, _IOFBF, UNITS_STREAM_BUFFER)) {
			snprintf(err, errlen, "cannot buffer the units stream: out of memory");
			report__free(r);
			return NULL;
		}
	}
	return r;
}

void report__set_origin(struct report *r, uint64_t t0_ns)
{
	r->t0_ns = t0_ns;
}

void report__set_stop(struct report *r, uint64_t stop_ns)
{
	r->stop_ns = stop_ns;
}

static struct proc_row *proc_find(const struct report *r, pid_t pid)
{
	/* newest first: a recycled pid belongs to the latest process */
	for (size_t i = r->n_procs; i-- > 0;)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}

static struct proc_row *proc_add(struct report *r, pid_t pid, pid_t ppid)
{
	struct proc_row *row;

	if (r->n_procs == r->cap_procs) {
		size_t cap = r->cap_procs ? r->cap_procs * 2 : 64;
		struct proc_row *bigger = realloc(r->procs, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		r->procs = bigger;
		r->cap_procs = cap;
	}
	row = &r->procs[r->n_procs++];
	memset(row, 0, sizeof(*row));
	row->pid = pid;
	row->ppid = ppid;
	return row;
}

void report__add_root(struct report *r, pid_t pid, pid_t ppid, const char *comm)
{
	struct proc_row *row = proc_add(r, pid, ppid);

	if (!row)
		return;
	row->is_root = true;
	row->start_ns = r->t0_ns;
	snprintf(row->comm, sizeof(row->comm), "%s", comm);
}

/* A spec as short as a table column wants it: "/usr/lib/libfit.so:fit" -> "libfit.so:fit". */
static const char *spec_label(const char *spec)
{
	const char *slash = spec ? strrchr(spec, '/') : NULL;

	return !spec ? "?" : slash ? slash + 1 : spec;
}

static double seconds(uint64_t ns)
{
	return ns / 1e9;
}

static double unit_wall_s(const struct um_unit_record *u)
{
	return seconds(u->end_ns - u->start_ns);
}

/* Nanoseconds to whole microseconds, half up: the 6 decimals a unit's seconds are written with. */
static uint64_t round_us(uint64_t ns)
{
	return (ns + 500) / 1000;
}

/*
 * A unit's seconds as written in its JSON, and as the summary reads them: the decimal
 * "S.UUUUUU" parses to the double nearest us / 1e6, which is what this division gives.
 */
static double unit_seconds(uint64_t ns)
{
	return (double)round_us(ns) / 1e6;
}

/* cpu / wall in thousandths, half up; 0 for a zero-length unit (the seed's property). */
static uint64_t utilisation_milli(uint64_t cpu_ns, uint64_t wall_ns)
{
	/* 128 bits: a unit of months of CPU times 1000 passes 64 */
	return wall_ns ? (uint64_t)(((unsigned __int128)cpu_ns * 1000 + wall_ns / 2) / wall_ns) : 0;
}

/* Appending to a line without printf: a storm of tiny units formats hundreds of thousands. */
struct line {
	char *buf;
	size_t len, cap;
};


static void put_mem(struct line *l, const char *s, size_t n)
{
	if (l->len + n < l->cap) {
		memcpy(l->buf + l->len, s, n);
		l->len += n;
	}
	l->buf[l->len < l->cap ? l->len : l->cap - 1] = '\0';
}

static void put_str(struct line *l, const char *s)
{
	put_mem(l, s, strlen(s));
}

/* A string literal, its length known at compile time. */
#define put_lit(l, lit) put_mem((l), (lit), sizeof(lit) - 1)

static void put_u64(struct line *l, uint64_t v)
{
	char digits[24];
	int i = sizeof(digits) - 1;

	do {
		digits[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_mem(l, digits + i, sizeof(digits) - 1 - i);
}

/* v / 10^decimals with exactly that many decimals: 1234, 3 -> "1.234". */
static void put_fixed(struct line *l, uint64_t v, int decimals)
{
	uint64_t scale = 1;
	char frac[24];

	for (int i = 0; i < decimals; i++)
		scale *= 10;
	put_u64(l, v / scale);
	v %= scale;
	frac[0] = '.';
	for (int i = decimals; i >= 1; i--) {
		frac[i] = (char)('0' + v % 10);
		v /= 10;
	}
	put_mem(l, frac, decimals + 1);
}

/* The next integer member of a unit's object: `, "key": value`. */
#define put_u64_member(l, key, v)                   \
	do {                                        \
		put_lit(l, ", \"" key "\": ");     \
		put_u64(l, v);                      \
	} while (0)

/*
 * One unit as a JSON object on one line. Formatted directly: a storm of tiny units must not
 * cost a JSON tree, or a printf, each (the spec strings were escaped once, by jansson, in
 * report__new). Returns the length.
 */
static size_t unit_line(const struct report *r, const struct um_unit_record *u, size_t index,
			char *buf, size_t len)
{
	uint64_t wall_ns = u->end_ns > u->start_ns ? u->end_ns - u->start_ns : 0;
	uint64_t delta = u->peak_rss_bytes > u->start_rss_bytes ? u->peak_rss_bytes - u->start_rss_bytes : 0;
	struct line l = { .buf = buf, .cap = len };

	put_lit(&l, "{\"index\": ");
	put_u64(&l, index);
	put_lit(&l, ", \"spec\": ");
	put_str(&l, u->spec < r->cfg->n_specs ? r->spec_json[u->spec] : "null");
	put_u64_member(&l, "pid", u->pid);
	put_u64_member(&l, "start_ns", u->start_ns > r->t0_ns ? u->start_ns - r->t0_ns : 0);
	put_lit(&l, ", \"wall_s\": ");
	put_fixed(&l, round_us(wall_ns), 6);
	put_lit(&l, ", \"cpu_s\": ");
	put_fixed(&l, round_us(u->cpu_ns), 6);
	put_lit(&l, ", \"cpu_utilisation\": ");
	put_fixed(&l, utilisation_milli(u->cpu_ns, wall_ns), 3);
	put_u64_member(&l, "peak_rss_bytes", u->peak_rss_bytes);
	put_u64_member(&l, "peak_rss_delta_bytes", delta);
	put_u64_member(&l, "start_rss_bytes", u->start_rss_bytes);
	put_u64_member(&l, "n_samples", u->n_rss_changes);
	put_u64_member(&l, "output_bytes", u->output_bytes);
	put_u64_member(&l, "page_alloc_bytes", u->page_alloc_bytes);
	if (u->peak_charge_bytes == UM_CHARGE_UNKNOWN || u->start_charge_bytes == UM_CHARGE_UNKNOWN) {
		put_lit(&l, ", \"start_charge_bytes\": null, \"peak_charge_bytes\": null");
	} else {
		put_u64_member(&l, "start_charge_bytes", u->start_charge_bytes);
		put_u64_member(&l, "peak_charge_bytes", u->peak_charge_bytes);
	}
	put_u64_member(&l, "processes", u->processes);
	put_u64_member(&l, "threads", u->threads);
	put_str(&l, u->status == UM_UNIT_COMPLETE ? ", \"status\": \"complete\"}"
		    : u->status == UM_UNIT_INCOMPLETE_EXEC
			    ? ", \"status\": \"incomplete\", \"incomplete_reason\": \"exec\"}"
			    : ", \"status\": \"incomplete\", \"incomplete_reason\": \"exit\"}");
	return l.len;
}

/*
 * One progress line per unit, but no more than UM_PROGRESS_LINES a second: a storm of tiny
 * units gets a count per second instead of a flood.
 */
/*
 * The stream could not take a line (a full disk, a quota): say so once, stop appending, and cut
 * the file back to its last complete line. A short write leaves half a line, and stdio would
 * retry what it still buffers at fclose; either would end the stream with a line that is not JSON.
 */
static void stream_failed(struct report *r, int err, const char *what)
{
	r->stream_err = -(err ? err : EIO);
	um_err("cannot %s the units stream %s: %s", what, r->cfg->units_jsonl, strerror(-r->stream_err));
	__fpurge(r->stream);
	if (ftruncate(fileno(r->stream), r->stream_good))
		um_warn("cannot cut the units stream %s back to its last complete line: %s",
			r->cfg->units_jsonl, strerror(errno));
}

/* Write out the complete lines stdio holds; only then do they count as on disk. */
static void stream_flush(struct report *r)
{
	if (fflush(r->stream)) {
		stream_failed(r, errno, "write");
		return;
	}
	r->stream_good += r->stream_pending;
	r->stream_pending = 0;
}

static bool progress_line_due(struct report *r, uint64_t now_ns)
{
	if (now_ns - r->progress_second_ns >= 1000000000ULL) {
		if (r->progress_skipped)
			fprintf(stderr, "... and %zu more units in that second\n", r->progress_skipped);
		r->progress_second_ns = now_ns;
		r->progress_lines = 0;
		r->progress_skipped = 0;
	}
	if (r->progress_lines < UM_PROGRESS_LINES) {
		r->progress_lines++;
		return true;
	}
	r->progress_skipped++;
	return false;
}


static void on_unit(struct report *r, const struct um_unit_record *u)
{
	char line[UNIT_LINE_MAX];
	size_t n;

	if (r->n_units == r->cap_units) {
		size_t cap = r->cap_units ? r->cap_units * 2 : 256;
		struct um_unit_record *bigger = realloc(r->units, cap * sizeof(*bigger));

		if (!bigger) {
			um_err("out of memory keeping unit %zu", r->n_units);
			return;
		}
		r->units = bigger;
		r->cap_units = cap;
	}
	n = unit_line(r, u, r->n_units, line, sizeof(line) - 1);
	line[n++] = '\n';
	if (r->stream && !r->stream_err) {
		/* flushed after each batch the ring buffer hands over (report__flush), milliseconds,
		 * and before stdio would write out a buffer that ends inside a line */
		if (r->stream_pending + (off_t)n > UNITS_STREAM_BUFFER)
			stream_flush(r);
		if (!r->stream_err && fwrite(line, 1, n, r->stream) != n)
			stream_failed(r, errno, "append to");
		else if (!r->stream_err)
			r->stream_pending += n;
	}
	if (!r->cfg->quiet && progress_line_due(r, u->end_ns)) {
		double wall = unit_wall_s(u);

		fprintf(stderr, "unit %-5zu pid %-7u %-20s wall %9.4f s  cpu %5.2f cores  peak %9.1f MiB%s\n",
			r->n_units, u->pid,
			spec_label(u->spec < r->cfg->n_specs ? r->cfg->specs[u->spec].text : NULL), wall,
			wall > 0 ? seconds(u->cpu_ns) / wall : 0.0, u->peak_rss_bytes / 1048576.0,
			u->status == UM_UNIT_COMPLETE ? "" : "  (incomplete)");
	}
	r->units[r->n_units++] = *u;
}

static json_t *summary_json(const struct report *r)
{
	struct unit_figures *figures = calloc(r->n_units ? r->n_units : 1, sizeof(*figures));
	json_t *summary;

	if (!figures)
		return NULL;
	for (size_t i = 0; i < r->n_units; i++) {
		/* the rounding the units carry in their JSON, so summary FILE agrees exactly */
		const struct um_unit_record *u = &r->units[i];

		figures[i].wall_s = unit_seconds(u->end_ns > u->start_ns ? u->end_ns - u->start_ns : 0);
		figures[i].cpu_s = unit_seconds(u->cpu_ns);
		figures[i].peak_rss_bytes = (double)r->units[i].peak_rss_bytes;
		figures[i].output_bytes = (long long)r->units[i].output_bytes;
	}
	summary = um_summarise_figures(figures, r->n_units);
	free(figures);
	return summary;
}

int report__on_record(void *ctx, void *data, size_t size)
{
	struct report *r = ctx;
	__u32 type;
	struct proc_row *row;

	if (size < sizeof(type))
		return 0;
	memcpy(&type, data, sizeof(type));
	switch (type) {
	case UM_REC_PROC_START: {
		const struct um_proc_start *s = data;

		row = proc_add(r, s->pid, s->ppid);
		if (row) {
			row->start_ns = s->ts_ns;
			memcpy(row->comm, s->comm, sizeof(row->comm));
			row->comm[UM_COMM_LEN - 1] = '\0';
		}
		break;
	}
	case UM_REC_PROC_EXEC: {
		const struct um_proc_exec *e = data;

		row = proc_find(r, e->pid);
		if (row) {
			memcpy(row->comm, e->comm, sizeof(row->comm));
			row->comm[UM_COMM_LEN - 1] = '\0';
		}
		break;
	}
	case UM_REC_PROC_EXIT: {
		const struct um_proc_exit *x = data;

		row = proc_find(r, x->pid);
		if (!row)
			row = proc_add(r, x->pid, 0);
		if (row) {
			row->finished = true;
			row->end_ns = x->ts_ns;
			row->cpu_ns = x->cpu_ns;
			row->peak_rss_bytes = x->peak_rss_bytes;
			row->page_alloc_bytes = x->page_alloc_bytes;
			row->output_bytes = x->output_bytes;
			row->exit_code = x->exit_code;
			row->threads = x->threads;
		}
		break;
	}
	case UM_REC_UNIT:
		if (size >= sizeof(struct um_unit_record))
			on_unit(r, data);
		break;
	default:
		break;
	}
	return 0;
}

bool report__proc_finished(const struct report *r, pid_t pid)
{
	const struct proc_row *row = proc_find(r, pid);

	return row && row->finished;
}

void report__add_live(void *ctx, const struct tracer_live_proc *p)
{
	struct report *r = ctx;
	struct proc_row *row = proc_find(r, p->pid);

	if (!row)
		row = proc_add(r, p->pid, p->ppid);
	if (!row || row->finished)
		return;
	row->alive_at_end = true;
	row->cpu_ns = p->cpu_ns;
	row->peak_rss_bytes = p->peak_rss_bytes;
	row->page_alloc_bytes = p->page_alloc_bytes;
	row->output_bytes = p->output_bytes;
	row->threads = p->threads;
}

void report__set_exit(struct report *r, int wait_status)
{
	r->have_exit = true;
	r->wait_status = wait_status;
}

void report__set_hardware(struct report *r, json_t *hw)
{
	json_decref(r->hardware);
	r->hardware = hw;
}

json_t *report__hardware(struct report *r)
{
	return r->hardware;
}

void report__set_memcg(struct report *r, const struct memcg *m)
{
	r->memcg = *m;
}

void report__set_counters(struct report *r, const struct tracer_counters *c)
{
	r->counters = *c;
}

int report__flush(struct report *r)
{
	if (r->stream && !r->stream_err)
		stream_flush(r);
	if (r->progress_skipped && !r->cfg->quiet) {
		fprintf(stderr, "... and %zu more units\n", r->progress_skipped);
		r->progress_skipped = 0;
	}
	return r->stream_err;
}

int report__stream_error(const struct report *r)
{
	return r->stream_err;
}

/* wait(2) status -> {"exit_status": n|null, "exit_signal": n|null} members of obj */
static void set_exit_fields(json_t *obj, bool known, int status)
{
	json_object_set_new(obj, "exit_status",
			    known && WIFEXITED(status) ? json_integer(WEXITSTATUS(status)) : json_null());
	json_object_set_new(obj, "exit_signal",
			    known && WIFSIGNALED(status) ? json_integer(WTERMSIG(status)) : json_null());
}

static json_t *proc_json(const struct report *r, const struct proc_row *p)
{
	json_t *o = json_pack("{s:i, s:i, s:s, s:I, s:f, s:I, s:I, s:I, s:i}",
			      "pid", (int)p->pid, "ppid", (int)p->ppid, "comm", p->comm,
			      "start_ns", (json_int_t)(p->start_ns > r->t0_ns ? p->start_ns - r->t0_ns : 0),
			      "cpu_s", um_round(seconds(p->cpu_ns), 6),
			      "peak_rss_bytes", (json_int_t)p->peak_rss_bytes,
			      "page_alloc_bytes", (json_int_t)p->page_alloc_bytes,
			      "output_bytes", (json_int_t)p->output_bytes,
			      "threads", (int)p->threads);

	/* which worker did what: its units, their CPU and their highest peak */
	{
		json_int_t n = 0, peak = 0;
		double cpu = 0;

		for (size_t i = 0; i < r->n_units; i++) {
			const struct um_unit_record *u = &r->units[i];

			if ((pid_t)u->pid != p->pid)
				continue;
			n++;
			cpu += seconds(u->cpu_ns);
			if ((json_int_t)u->peak_rss_bytes > peak)
				peak = (json_int_t)u->peak_rss_bytes;
		}
		json_object_set_new(o, "units", json_integer(n));
		json_object_set_new(o, "units_cpu_s", json_real(um_round(cpu, 6)));
		json_object_set_new(o, "units_peak_rss_bytes", n ? json_integer(peak) : json_null());
	}
	/*
	 * A process whose exit record was lost (lost_events) is neither finished nor in the maps at
	 * the end: its figures went with the record, so they are null, not zeros. The root's end is
	 * still known, from wait(2).
	 */
	if (!p->finished && !p->alive_at_end) {
		static const char *const figures[] = { "cpu_s", "peak_rss_bytes", "page_alloc_bytes",
						       "output_bytes", "threads" };
		bool waited = p->is_root && r->have_exit;

		for (size_t k = 0; k < sizeof(figures) / sizeof(figures[0]); k++)
			json_object_set_new(o, figures[k], json_null());
		json_object_set_new(o, "status", json_string(waited ? "exited" : "unknown"));
		set_exit_fields(o, waited, r->wait_status);
		return o;
	}
	json_object_set_new(o, "status", json_string(p->finished ? "exited" : "running"));
	/* the BPF exit code is wait(2)'s status word, as the kernel keeps it */
	set_exit_fields(o, p->finished, p->exit_code);
	return o;
}

/*
 * The run's memory charge: the highest value read, or the kernel's own high-water mark, exact,
 * when it rose while the group was traced (always, for a cgroup made for the run). null with
 * the reason when there is no cgroup, or none of the group's processes was seen in it.
 */
static bool run_peak_charge(const struct report *r, uint64_t *peak)
{
	const struct tracer_counters *c = &r->counters;
	const struct memcg *m = &r->memcg;

	if (!m->id || !c->charge_known)
		return false;
	*peak = c->group_peak_charge_bytes;
	if ((m->made_for_run || c->charge_watermark_last_bytes > c->charge_watermark_start_bytes) &&
	    c->charge_watermark_last_bytes > *peak)
		*peak = c->charge_watermark_last_bytes;
	return true;
}

static void charge_json(const struct report *r, json_t *run)
{
	const struct memcg *m = &r->memcg;
	const char *note = NULL;
	uint64_t peak;

	if (run_peak_charge(r, &peak)) {
		json_object_set_new(run, "peak_charge_bytes", json_integer((json_int_t)peak));
		if (!m->made_for_run)
			note = "the target's own memory cgroup: it may hold processes other than the "
			       "traced ones, whose pages are charged too";
	} else {
		json_object_set_new(run, "peak_charge_bytes", json_null());
		note = m->id ? "no traced process was seen in the memory cgroup" : m->reason;
	}
	json_object_set_new(run, "charge",
			    json_pack("{s:s?, s:o, s:b, s:s?}", "cgroup", m->id ? m->name : NULL,
				      "cgroup_version", m->id ? json_integer(m->version) : json_null(),
				      "made_for_run", m->made_for_run, "note", note));
}

static json_t *run_json(const struct report *r)
{
	const struct proc_row *root = NULL;
	uint64_t cpu = 0, alloc = 0, out = 0, end = r->t0_ns;
	json_t *run, *table = json_array();

	for (size_t i = 0; i < r->n_procs; i++) {
		const struct proc_row *p = &r->procs[i];

		if (p->is_root)
			root = p;
		cpu += p->cpu_ns;
		alloc += p->page_alloc_bytes;
		out += p->output_bytes;
		if (p->finished && p->end_ns > end)
			end = p->end_ns;
		json_array_append_new(table, proc_json(r, p));
	}
	/* wall time of the command, as time(1) gives it: release to the root's end */
	if (root && root->finished)
		end = root->end_ns;
	else if (root)
		end = r->stop_ns;
	run = json_pack("{s:f, s:f, s:I, s:I, s:I, s:i, s:I, s:I, s:I}",
			"wall_s", um_round(end > r->t0_ns ? seconds(end - r->t0_ns) : 0, 6),
			"cpu_s", um_round(seconds(cpu), 6),
			"peak_rss_bytes", (json_int_t)r->counters.group_peak_rss_bytes,
			"page_alloc_bytes", (json_int_t)alloc,
			"output_bytes", (json_int_t)out,
			"processes", (int)r->n_procs,
			"lost_events", (json_int_t)r->counters.lost_records,
			"map_full_events", (json_int_t)r->counters.map_full,
			"scope_overflows", (json_int_t)r->counters.scope_overflows);
	set_exit_fields(run, r->have_exit, r->wait_status);
	json_object_set_new(run, "thread_collisions", json_integer((json_int_t)r->counters.thread_collisions));
	json_object_set_new(run, "orphan_slices", json_integer((json_int_t)r->counters.orphan_slices));
	json_object_set_new(run, "switch_in_misses", json_integer((json_int_t)r->counters.switch_in_misses));
	/* how the kernel was read (user/kernel.h); lock_timeouts > 0: that many baseline updates
	 * ran unlocked, and a figure they touched may be off by one change */
	json_object_set_new(run, "tracing",
			    json_pack("{s:s, s:b, s:I}", "build",
				      r->counters.build ? r->counters.build : "none",
				      "thread_rss_caches", r->counters.thread_rss_caches,
				      "lock_timeouts", (json_int_t)r->counters.lock_timeouts));
	charge_json(r, run);
	json_object_set_new(run, "per_process", table);
	return run;
}

static json_t *manifest_json(struct report *r)
{
	json_t *m = json_object(), *cmd = json_array(), *specs = json_array();

	for (char *const *a = r->cfg->command; a && *a; a++)
		json_array_append_new(cmd, json_string(*a));
	for (size_t i = 0; i < r->cfg->n_specs; i++) {
		const struct unit_spec *sp = &r->cfg->specs[i];

		json_array_append_new(specs, sp->python ?
			json_pack("{s:i, s:s, s:s, s:s?, s:s}", "index", (int)i, "spec", sp->text,
				  "kind", "python", "module", sp->module, "qualname", sp->qualname) :
			json_pack("{s:i, s:s, s:s, s:s?, s:s}", "index", (int)i, "spec", sp->text,
				  "kind", "native", "path", sp->path, "symbol", sp->symbol));
	}
	json_object_set_new(m, "schema", json_string(UM_SCHEMA));
	json_object_set_new(m, "tool", json_pack("{s:s, s:s}", "name", "unitmeter", "version", UM_VERSION));
	json_object_set_new(m, "mode", json_string(r->cfg->mode));
	json_object_set_new(m, "command", cmd);
	json_object_set_new(m, "unit_specs", specs);
	json_object_set(m, "hardware", r->hardware ? r->hardware : json_null());
	/* "units" is written after the rest, one unit at a time (report__write_manifest) */
	if (!r->summary)
		r->summary = summary_json(r);
	json_object_set(m, "summary", r->summary ? r->summary : json_null());
	json_object_set_new(m, "run", run_json(r));
	return m;
}

/*
 * The manifest as one JSON object, its "units" array last and written unit by unit, so a run of
 * a million short units never holds a million JSON trees.
 */
static int write_manifest_body(const struct report *r, json_t *m, FILE *f)
{
	/* jansson prints %.17g by default; 15 digits keep 0.1 as 0.1 and lose nothing we measure */
	char *head = json_dumps(m, JSON_REAL_PRECISION(15) | JSON_INDENT(2));
	size_t len = head ? strlen(head) : 0;
	int rc = 0;

	/* reopen the object: drop its closing brace */
	if (len < 2 || head[len - 1] != '}') {
		free(head);
		return -1;
	}
	while (len > 1 && (head[len - 2] == '\n' || head[len - 2] == ' '))
		len--;
	if (fwrite(head, 1, len - 1, f) != len - 1 || fputs(",\n  \"units\": [", f) == EOF)
		rc = -1;
	free(head);
	for (size_t i = 0; !rc && i < r->n_units; i++) {
		char line[UNIT_LINE_MAX];

		unit_line(r, &r->units[i], i, line, sizeof(line));
		if (fputs(i ? ",\n    " : "\n    ", f) == EOF || fputs(line, f) == EOF)
			rc = -1;
	}
	if (!rc && fputs(r->n_units ? "\n  ]\n}\n" : "]\n}\n", f) == EOF)
		rc = -1;
	return rc;
}

int report__write_manifest(struct report *r, const char *path)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	json_t *m = manifest_json(r);
	int fd, err = 0;
	FILE *f;
	char *manifest_buf;

	/* write beside the target and rename: a reader never sees half a manifest */
	snprintf(dir, sizeof(dir), "%s", path);
	if (snprintf(tmp, sizeof(tmp), "%s/.unitmeter-XXXXXX", dirname(dir)) >= (int)sizeof(tmp)) {
		json_decref(m);
		return -ENAMETOOLONG;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (geteuid() == 0 && r->cfg->owner_uid != 0 && fchown(fd, r->cfg->owner_uid, r->cfg->owner_gid))
		um_warn("cannot hand %s to uid %u: %s", path, r->cfg->owner_uid, strerror(errno));
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlink(tmp);
		goto out;
	}
	/* a storm's manifest holds hundreds of MB of units: large writes, not 4 KiB ones */
	manifest_buf = malloc(1 << 20);
	if (manifest_buf)
		setvbuf(f, manifest_buf, _IOFBF, 1 << 20);
	if (write_manifest_body(r, m, f))
		err = -(errno ? errno : EIO);
	if (fclose(f) && !err)
		err = -errno;
	free(manifest_buf);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
out:
	json_decref(m);
	return err;
}

/* Units grouped by the process that ran them, so a pool's workers read apart. */
static void print_units_by_process(const struct report *r, FILE *out)
{
	size_t shown = 0, n = r->n_units;

	if (!n)
		return;
	fprintf(out, "\n%-6s %-8s %-20s %10s %7s %11s %11s %11s %s\n", "unit", "pid", "spec",
		"wall s", "cores", "peak MiB", "delta MiB", "charge MiB", "status");
	for (size_t p = 0; p < r->n_procs; p++) {
		for (size_t i = 0; i < n; i++) {
			const struct um_unit_record *u = &r->units[i];
			double wall = unit_wall_s(u);

			if ((pid_t)u->pid != r->procs[p].pid)
				continue;
			if (shown++ == UM_TABLE_ROWS) {
				fprintf(out, "... %zu more units in the manifest\n", n - UM_TABLE_ROWS);
				return;
			}
			char charge[32] = "-";

			if (u->peak_charge_bytes != UM_CHARGE_UNKNOWN)
				snprintf(charge, sizeof(charge), "%.1f", u->peak_charge_bytes / 1048576.0);
			fprintf(out, "%-6zu %-8d %-20s %10.4f %7.2f %11.1f %11.1f %11s %s\n", i,
				r->procs[p].pid,
				spec_label(u->spec < r->cfg->n_specs ? r->cfg->specs[u->spec].text : NULL),
				wall, wall > 0 ? seconds(u->cpu_ns) / wall : 0.0,
				u->peak_rss_bytes / 1048576.0,
				(u->peak_rss_bytes > u->start_rss_bytes ?
				 u->peak_rss_bytes - u->start_rss_bytes : 0) / 1048576.0, charge,
				u->status == UM_UNIT_COMPLETE ? "complete" : "incomplete");
		}
	}
}

void report__print_tables(const struct report *r, FILE *out)
{
	json_t *summary;

	fprintf(out, "\n%-8s %-8s %-16s %10s %12s %12s %s\n", "pid", "ppid", "comm", "cpu s",
		"peak MiB", "written B", "status");
	for (size_t i = 0; i < r->n_procs; i++) {
		const struct proc_row *p = &r->procs[i];
		char status[32];

		if (!p->finished)
			snprintf(status, sizeof(status), "%s", p->alive_at_end ? "running" : "?");
		else if (WIFSIGNALED(p->exit_code))
			snprintf(status, sizeof(status), "signal %d", WTERMSIG(p->exit_code));
		else
			snprintf(status, sizeof(status), "exit %d", WEXITSTATUS(p->exit_code));
		fprintf(out, "%-8d %-8d %-16s %10.3f %12.1f %12llu %s\n", p->pid, p->ppid, p->comm,
			seconds(p->cpu_ns), p->peak_rss_bytes / 1048576.0,
			(unsigned long long)p->output_bytes, status);
	}
	fprintf(out, "group: peak RSS %.1f MiB (sum over live processes), %zu processes\n",
		r->counters.group_peak_rss_bytes / 1048576.0, r->n_procs);
	{
		uint64_t charge;

		if (run_peak_charge(r, &charge))
			fprintf(out, "memory charge: peak %.1f MiB (cgroup %s: a shared page once, page "
				"cache included; what --mem is enforced on)\n", charge / 1048576.0,
				r->memcg.name);
		else
			fprintf(out, "memory charge: not measured (%s)\n",
				r->memcg.id ? "no traced process was seen in the memory cgroup"
					    : r->memcg.reason);
	}
	if (!r->cfg->n_specs)
		return;
	print_units_by_process(r, out);
	fprintf(out, "\n");
	summary = r->summary ? json_incref(r->summary) : summary_json(r);
	um_print_summary_table(out, summary);
	json_decref(summary);
}

void report__free(struct report *r)
{
	if (!r)
		return;
	if (r->stream)
		fclose(r->stream);
	free(r->stream_buf);
	json_decref(r->summary);
	free(r->units);
	for (size_t i = 0; i < UM_MAX_SPECS; i++)
		free(r->spec_json[i]);
	json_decref(r->hardware);
	free(r->procs);
	free(r);
}
