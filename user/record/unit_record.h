/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A finished unit as the kernel sent it (struct um_unit_record), read: its seconds, its JSON
 * object (one line of the units stream, one element of the manifest's "units"), and the summary
 * of many, made with the rounding their JSON carries.
 */
#ifndef UM_UNIT_RECORD_H
#define UM_UNIT_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "record/gpu_json.h"
#include "unitmeter.h"

/* A unit's line: its figures take under 1,500 bytes (device memory per device slot and the
 * NVML note included); its spec, escaped, at most 6 bytes a byte. */
#define UNIT_LINE_MAX (2048 + 6 * UM_SPEC_TEXT_MAX)

static inline double um_seconds(uint64_t ns)
{
	return ns / 1e9;
}

static inline double unit_wall_s(const struct um_unit_record *u)
{
	return um_seconds(u->end_ns - u->start_ns);
}

/*
 * Unit u, number index, as a JSON object on one line, NUL-terminated, into buf of len bytes.
 * spec_json is its spec as a JSON value, already escaped ("null" for none); start_ns is counted
 * from t0_ns; nv is NVML's reading at its end (gpu_json.h). Returns the length.
 */
size_t um_unit_json(const struct um_unit_record *u, const struct gpu_nvml_unit *nv, size_t index,
		    const char *spec_json, uint64_t t0_ns, char *buf, size_t len);
/* The summary (summary.h) of n units, as the summary of their JSON would read it. */
json_t *um_summarise_records(const struct um_unit_record *units, size_t n);

#endif
