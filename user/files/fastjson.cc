// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The fast path of the units stream reader (see fastjson.h). */
#include <cstring>
#include <string_view>
#include <simdjson.h>
#include "files/fastjson.h"
#include "common/unit_keys.h"

static_assert(UM_FASTJSON_PADDING >= simdjson::SIMDJSON_PADDING, "simdjson reads past the line");

namespace {

const struct {
	std::string_view key;
	int field;
} figures[] = {
#define UM_FIGURE_KEY(field, key, form, value, known, max, read)                                    \
	UM_IF_##read({ key, UM_F_##field }, )
	UM_UNIT_KEYS(UM_FIGURE_KEY)
#undef UM_FIGURE_KEY
};
constexpr int spec_bit = UM_F_N, status_bit = UM_F_N + 1;
constexpr int device_bit = UM_F_PEAK_GPU_DEVICE_MAX_BYTES;

/* One parser for the process: its buffers are reused line after line. */
simdjson::dom::parser parser;

/* 0, or 1 where jansson would read the value differently (an integer past long long). */
int figure(const simdjson::dom::element &v, struct um_read_unit *u, int f)
{
	switch (v.type()) {
	case simdjson::dom::element_type::INT64:
		u->kind[f] = UM_V_INT;
		u->v[f].i = int64_t(v);
		return 0;
	case simdjson::dom::element_type::DOUBLE:
		u->kind[f] = UM_V_REAL;
		u->v[f].d = double(v);
		return 0;
	case simdjson::dom::element_type::NULL_VALUE:
		u->kind[f] = UM_V_NULL;
		return 0;
	case simdjson::dom::element_type::UINT64: /* past INT64_MAX: jansson refuses it */
		return 1;
	default:
		u->kind[f] = UM_V_OTHER;
		return 0;
	}
}

/* UM_F_PEAK_GPU_DEVICE_MAX_BYTES, as units_file.c's device_max: the largest "peak_bytes" of the
 * list; 1 where jansson would read it differently. */
int device_max(const simdjson::dom::element &list, struct um_read_unit *u)
{
	const int f = UM_F_PEAK_GPU_DEVICE_MAX_BYTES;
	bool whole = true;
	int64_t imax = 0;
	double dmax = 0;

	if (list.is_null()) {
		u->kind[f] = UM_V_NULL;
		return 0;
	}
	u->kind[f] = UM_V_OTHER;
	if (!list.is_array())
		return 0;
	for (simdjson::dom::element e : simdjson::dom::array(list)) {
		simdjson::dom::element v;
		double d;

		if (!e.is_object())
			return 0;
		/* a repeated key: jansson keeps the last; rare, so left to it */
		size_t n = 0;
		for (simdjson::dom::key_value_pair kv : simdjson::dom::object(e))
			n += kv.key == UM_KEY_PEAK_BYTES;
		if (n > 1)
			return 1;
		if (e[UM_KEY_PEAK_BYTES].get(v))
			return 0;
		switch (v.type()) {
		case simdjson::dom::element_type::INT64:
			if (int64_t(v) > imax)
				imax = int64_t(v);
			d = double(int64_t(v));
			break;
		case simdjson::dom::element_type::DOUBLE:
			whole = false;
			d = double(v);
			break;
		case simdjson::dom::element_type::UINT64:
			return 1;
		default:
			return 0;
		}
		if (d > dmax)
			dmax = d;
	}
	if (whole)
		u->kind[f] = UM_V_INT, u->v[f].i = imax;
	else
		u->kind[f] = UM_V_REAL, u->v[f].d = dmax;
	return 0;
}

} // namespace

extern "C" int um_fastjson_unit(const char *line, size_t len, struct um_read_unit *u,
				struct um_unit_text *t)
{
	simdjson::dom::element doc;
	simdjson::dom::object obj;
	unsigned seen = 0;

	/*
	 * jansson refuses \u0000 and lone surrogates, which simdjson may take: a line with an
	 * escape goes to jansson (a unit's line has none; its strings are function names). A
	 * backslash is looked for, not "\u": memchr is several times faster than memmem.
	 */
	if (memchr(line, '\\', len))
		return 1;
	if (parser.parse(line, len, false).get(doc) || doc.get_object().get(obj))
		return 1; /* not JSON, or not an object: jansson says what is wrong, and where */
	memset(u, 0, sizeof(*u));
	t->spec = t->status = nullptr;
	for (simdjson::dom::key_value_pair kv : obj) {
		int f = -1;

		for (const auto &fig : figures)
			if (kv.key == fig.key) {
				f = fig.field;
				break;
			}
		if (f < 0 && kv.key == UM_KEY_SPEC)
			f = spec_bit;
		else if (f < 0 && kv.key == UM_KEY_STATUS)
			f = status_bit;
		else if (f < 0 && kv.key == UM_KEY_PEAK_GPU_BY_DEVICE)
			f = device_bit;
		if (f < 0)
			continue;
		/* jansson keeps a repeated key's last value: rare, so left to it */
		if (seen & (1u << f))
			return 1;
		seen |= 1u << f;
		if (f == spec_bit) {
			t->spec = kv.value.is_string() ? (const char *)kv.value : nullptr;
		} else if (f == status_bit) {
			const char *s = kv.value.is_string() ? (const char *)kv.value : nullptr;

			t->status = s;
			u->status = !s ? UM_US_NONE : !strcmp(s, UM_STATUS_COMPLETE) ? UM_US_COMPLETE
				  : !strcmp(s, UM_STATUS_INCOMPLETE) ? UM_US_INCOMPLETE : UM_US_OTHER;
		} else if (f == device_bit) {
			if (device_max(kv.value, u))
				return 1;
		} else if (figure(kv.value, u, f)) {
			return 1;
		}
	}
	return 0;
}
