// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "common/summary.h"
#include "common/unit_keys.h"
#include "record/unit_record.h"

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
 * Its device memory through the driver API: the peaks, the devices that held any and each one's
 * peak (device null: bytes of a thread whose context's device was not seen). All null when its
 * scope made no such call; gpu_devices null when some bytes' device is not known.
 */
static void put_gpu(struct line *l, const struct um_unit_record *u)
{
	int known = 0, listed = 0;

	if (!u->gpu_seen) {
		put_lit(l, ", \"" UM_KEY_PEAK_GPU_BYTES "\": null, \"" UM_KEY_PEAK_GPU_MANAGED_BYTES
			   "\": null, \"" UM_KEY_GPU_DEVICES "\": null, \"" UM_KEY_PEAK_GPU_BY_DEVICE
			   "\": null");
		return;
	}
	put_u64_member(l, UM_KEY_PEAK_GPU_BYTES, u->peak_gpu_bytes);
	put_u64_member(l, UM_KEY_PEAK_GPU_MANAGED_BYTES, u->peak_gpu_managed_bytes);
	for (int i = 0; i < UM_GPU_DEVICES; i++)
		known += u->peak_gpu_device_bytes[i] > 0;
	if (u->peak_gpu_device_bytes[UM_GPU_UNKNOWN_DEVICE])
		put_lit(l, ", \"" UM_KEY_GPU_DEVICES "\": null");
	else
		put_u64_member(l, UM_KEY_GPU_DEVICES, known);
	put_lit(l, ", \"" UM_KEY_PEAK_GPU_BY_DEVICE "\": [");
	for (int i = 0; i < UM_GPU_SLOTS; i++) {
		if (!u->peak_gpu_device_bytes[i])
			continue;
		if (listed++)
			put_lit(l, ", ");
		put_lit(l, "{\"" UM_KEY_DEVICE "\": ");
		if (i == UM_GPU_UNKNOWN_DEVICE)
			put_lit(l, "null");
		else
			put_u64(l, i);
		put_u64_member(l, UM_KEY_PEAK_BYTES, u->peak_gpu_device_bytes[i]);
		put_lit(l, "}");
	}
	put_lit(l, "]");
}

/*
 * The context and pool part NVML gave at the unit's end (read, not traced), and the total it
 * makes with the API peak; both null, with the note saying why, when it was not read.
 */
static void put_nvml(struct line *l, const struct um_unit_record *u, const struct gpu_nvml_unit *nv)
{
	const char *note;

	if (u->gpu_seen && nv->state == GPU_NVML_READ) {
		put_u64_member(l, UM_KEY_PEAK_GPU_TOTAL_BYTES, u->peak_gpu_bytes + nv->context_bytes);
		put_u64_member(l, UM_KEY_GPU_CONTEXT_BYTES, nv->context_bytes);
	} else {
		put_lit(l, ", \"" UM_KEY_PEAK_GPU_TOTAL_BYTES "\": null, \"" UM_KEY_GPU_CONTEXT_BYTES
			   "\": null");
	}
	/* the notes are plain text: no character JSON escapes */
	put_lit(l, ", \"" UM_KEY_GPU_NVML "\": \"");
	note = gpu_nvml_note(nv->state);
	put_mem(l, note, strlen(note));
	put_lit(l, "\"");
}

/*
 * One unit as a JSON object on one line. Formatted directly: a storm of tiny units must not
 * cost a JSON tree, or a printf, each (the spec strings are escaped once, by jansson, when the
 * record is made: run_record__new).
 */
size_t um_unit_json(const struct um_unit_record *u, const struct gpu_nvml_unit *nv, size_t index,
		    const char *spec_json, uint64_t t0_ns, char *buf, size_t len)
{
	uint64_t wall_ns = u->end_ns > u->start_ns ? u->end_ns - u->start_ns : 0;
	uint64_t delta = u->peak_rss_bytes > u->start_rss_bytes ? u->peak_rss_bytes - u->start_rss_bytes : 0;
	struct line l = { .buf = buf, .cap = len };

	put_lit(&l, "{\"" UM_KEY_INDEX "\": ");
	put_u64(&l, index);
	put_lit(&l, ", \"" UM_KEY_SPEC "\": ");
	put_str(&l, spec_json);
	put_u64_member(&l, UM_KEY_PID, u->pid);
	put_u64_member(&l, UM_KEY_START_NS, u->start_ns > t0_ns ? u->start_ns - t0_ns : 0);
	put_lit(&l, ", \"" UM_KEY_WALL_S "\": ");
	put_fixed(&l, round_us(wall_ns), 6);
	put_lit(&l, ", \"" UM_KEY_CPU_S "\": ");
	put_fixed(&l, round_us(u->cpu_ns), 6);
	put_lit(&l, ", \"" UM_KEY_CPU_UTILISATION "\": ");
	put_fixed(&l, utilisation_milli(u->cpu_ns, wall_ns), 3);
	put_u64_member(&l, UM_KEY_PEAK_RSS_BYTES, u->peak_rss_bytes);
	put_u64_member(&l, UM_KEY_PEAK_RSS_DELTA_BYTES, delta);
	put_u64_member(&l, UM_KEY_START_RSS_BYTES, u->start_rss_bytes);
	put_u64_member(&l, UM_KEY_N_SAMPLES, u->n_rss_changes);
	put_u64_member(&l, UM_KEY_OUTPUT_BYTES, u->output_bytes);
	if (u->tmp_output_bytes == UM_TMP_UNKNOWN)
		put_lit(&l, ", \"" UM_KEY_TMP_OUTPUT_BYTES "\": null");
	else
		put_u64_member(&l, UM_KEY_TMP_OUTPUT_BYTES, u->tmp_output_bytes);
	put_u64_member(&l, UM_KEY_PAGE_ALLOC_BYTES, u->page_alloc_bytes);
	if (u->peak_charge_bytes == UM_CHARGE_UNKNOWN || u->start_charge_bytes == UM_CHARGE_UNKNOWN) {
		put_lit(&l, ", \"" UM_KEY_START_CHARGE_BYTES "\": null");
		put_lit(&l, ", \"" UM_KEY_PEAK_CHARGE_BYTES "\": null");
	} else {
		put_u64_member(&l, UM_KEY_START_CHARGE_BYTES, u->start_charge_bytes);
		put_u64_member(&l, UM_KEY_PEAK_CHARGE_BYTES, u->peak_charge_bytes);
	}
	put_gpu(&l, u);
	put_nvml(&l, u, nv);
	put_u64_member(&l, UM_KEY_PROCESSES, u->processes);
	put_u64_member(&l, UM_KEY_THREADS, u->threads);
	put_lit(&l, ", \"" UM_KEY_STATUS "\": ");
	if (u->status == UM_UNIT_COMPLETE)
		put_lit(&l, "\"" UM_STATUS_COMPLETE "\"}");
	else if (u->status == UM_UNIT_INCOMPLETE_EXEC)
		put_lit(&l, "\"" UM_STATUS_INCOMPLETE "\", \"" UM_KEY_INCOMPLETE_REASON
			    "\": \"exec\"}");
	else
		put_lit(&l, "\"" UM_STATUS_INCOMPLETE "\", \"" UM_KEY_INCOMPLETE_REASON
			    "\": \"exit\"}");
	return l.len;
}

json_t *um_summarise_records(const struct um_unit_record *units, size_t n)
{
	struct unit_figures *figures = calloc(n ? n : 1, sizeof(*figures));
	json_t *summary;

	if (!figures)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		/* the rounding the units carry in their JSON, so summary FILE agrees exactly */
		const struct um_unit_record *u = &units[i];

		figures[i].wall_s = unit_seconds(u->end_ns > u->start_ns ? u->end_ns - u->start_ns : 0);
		figures[i].cpu_s = unit_seconds(u->cpu_ns);
		figures[i].peak_rss_bytes = (double)units[i].peak_rss_bytes;
		figures[i].output_bytes = (long long)units[i].output_bytes;
	}
	summary = um_summarise_figures(figures, n);
	free(figures);
	return summary;
}
