// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdbool.h>
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

/* A member's key: `, "key": `, or `"key": ` for the first, just after the "{". */
#define put_key(l, key)                                                        \
	do {                                                                   \
		bool first_ = (l)->len == 1;                                   \
		put_mem((l), (", \"" key "\": ") + 2 * first_,                 \
			sizeof(", \"" key "\": ") - 1 - 2 * first_);           \
	} while (0)

/* A string no character of which needs escaping (the notes and status words are plain). */
static void put_text(struct line *l, const char *text)
{
	put_lit(l, "\"");
	put_str(l, text);
	put_lit(l, "\"");
}

static uint64_t um_since(uint64_t t, uint64_t from)
{
	return t > from ? t - from : 0;
}

static bool charge_known(const struct um_unit_record *u)
{
	return u->peak_charge_bytes != UM_CHARGE_UNKNOWN && u->start_charge_bytes != UM_CHARGE_UNKNOWN;
}

/* The devices whose peak is not 0; gpu_devices is null when some bytes' device is not known. */
static uint64_t gpu_devices_held(const struct um_unit_record *u)
{
	uint64_t held = 0;

	for (int i = 0; i < UM_GPU_DEVICES; i++)
		held += u->peak_gpu_device_bytes[i] > 0;
	return held;
}

static bool gpu_devices_known(const struct um_unit_record *u)
{
	return u->gpu_seen && !u->peak_gpu_device_bytes[UM_GPU_UNKNOWN_DEVICE];
}

/* Each device that held any, with its peak (device null: a thread's whose device was not seen). */
static void put_devices(struct line *l, const struct um_unit_record *u)
{
	int listed = 0;

	put_lit(l, "[");
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
		put_lit(l, ", \"" UM_KEY_PEAK_BYTES "\": ");
		put_u64(l, u->peak_gpu_device_bytes[i]);
		put_lit(l, "}");
	}
	put_lit(l, "]");
}

/* NVML's context and pool part at the unit's end (read, not traced), where it was read. */
static bool nvml_read(const struct um_unit_record *u, const struct gpu_nvml_unit *nv)
{
	return u->gpu_seen && nv->state == GPU_NVML_READ;
}

static const char *status_text(const struct um_unit_record *u)
{
	return u->status == UM_UNIT_COMPLETE ? UM_STATUS_COMPLETE : UM_STATUS_INCOMPLETE;
}

static const char *incomplete_reason(const struct um_unit_record *u)
{
	return u->status == UM_UNIT_INCOMPLETE_EXEC ? "exec" : "exit";
}

/* The writer's side of the table's forms (common/unit_keys.h): known false writes null. */
#define MEMBER(l, key, known, put)                    \
	do {                                          \
		put_key(l, key);                      \
		if (known)                            \
			put;                          \
		else                                  \
			put_lit(l, "null");           \
	} while (0)
#define MEMBER_U64(l, key, v, known)    MEMBER(l, key, known, put_u64(l, v))
#define MEMBER_MICROS(l, key, v, known) MEMBER(l, key, known, put_fixed(l, v, 6))
#define MEMBER_MILLIS(l, key, v, known) MEMBER(l, key, known, put_fixed(l, v, 3))
#define MEMBER_JSON(l, key, v, known)   MEMBER(l, key, known, put_str(l, v))
#define MEMBER_TEXT(l, key, v, known)   MEMBER(l, key, known, put_text(l, v))
#define MEMBER_DEVICES(l, key, v, known) MEMBER(l, key, known, put_devices(l, v))
#define MEMBER_TEXT_OR_ABSENT(l, key, v, known) \
	do {                                    \
		if (known)                      \
			MEMBER_TEXT(l, key, v, true); \
	} while (0)

/*
 * One unit as a JSON object on one line, its members those of UM_UNIT_KEYS in its order.
 * Formatted directly: a storm of tiny units must not cost a JSON tree, or a printf, each (the
 * spec strings are escaped once, by jansson, when the record is made: run_record__new).
 */
size_t um_unit_json(const struct um_unit_record *u, const struct gpu_nvml_unit *nv, size_t index,
		    const char *spec_json, uint64_t t0_ns, char *buf, size_t len)
{
	uint64_t wall_ns = um_since(u->end_ns, u->start_ns);
	struct line l = { .buf = buf, .cap = len };

	put_lit(&l, "{");
#define UNIT_MEMBER(field, key, form, value, known, max, read) MEMBER_##form(&l, key, value, known);
	UM_UNIT_KEYS(UNIT_MEMBER)
#undef UNIT_MEMBER
	put_lit(&l, "}");
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

		figures[i].wall_s = unit_seconds(um_since(u->end_ns, u->start_ns));
		figures[i].cpu_s = unit_seconds(u->cpu_ns);
		figures[i].peak_rss_bytes = (double)units[i].peak_rss_bytes;
		figures[i].output_bytes = (long long)units[i].output_bytes;
	}
	summary = um_summarise_figures(figures, n);
	free(figures);
	return summary;
}
