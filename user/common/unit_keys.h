/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The keys of a unit's JSON object (one line of a units stream, one element of a manifest's
 * "units") and the values of its status: the one definition the writer and every reader
 * (files/, project/, page/) are made from, so a key renamed or added is renamed or added once.
 */
#ifndef UM_UNIT_KEYS_H
#define UM_UNIT_KEYS_H

/*
 * A unit's keys, in the order the writer puts them, one line each, from which come the writer
 * (record/unit_record.c), both readers' key tables (files/units_file.c's jansson,
 * files/fastjson.cc's simdjson), the fields they fill (files/units_file.h), the checks a unit
 * must pass and the UM_KEY_ constants everyone names them by:
 *
 *   X(FIELD, key, form, value, known, max, read)
 *
 * form, value, known: how the writer puts it. The form is one of its MEMBER_ makers: U64,
 * MICROS (a count of microseconds, as seconds with 6 decimals), MILLIS (thousandths, 3
 * decimals), JSON (already a JSON value), TEXT (a string no character of which needs escaping),
 * DEVICES (the per-device array), TEXT_OR_ABSENT (left out, not null, when not known). value is
 * an expression over the writer's own names: u (the record), nv (NVML's reading at the unit's
 * end), index, spec_json, wall_ns, t0_ns. When known is false the value is null.
 * max, read: what the readers take. READ_REQUIRED or READ_OPTIONAL (may be absent or null) for a
 * figure they read, a number from 0 to max (max 0: not checked); NOT_READ for one they do not.
 *
 * Adding a figure is a line here, the man page's entry (units::the_keys_written_read_and_
 * documented_are_the_same fails without it), and the code that measures it.
 */
#define UM_UNIT_KEYS(X)                                                                            \
	X(INDEX, "index", U64, index, true, 0, READ_OPTIONAL)                                      \
	X(SPEC, "spec", JSON, spec_json, true, 0, NOT_READ)                                        \
	X(PID, "pid", U64, u->pid, true, 0, READ_OPTIONAL)                                         \
	X(START_NS, "start_ns", U64, um_since(u->start_ns, t0_ns), true, 0, READ_OPTIONAL)         \
	X(WALL_S, "wall_s", MICROS, round_us(wall_ns), true, 1e9 /* thirty years */,               \
	  READ_REQUIRED)                                                                           \
	X(CPU_S, "cpu_s", MICROS, round_us(u->cpu_ns), true, 1e12, READ_REQUIRED)                  \
	X(CPU_UTILISATION, "cpu_utilisation", MILLIS, utilisation_milli(u->cpu_ns, wall_ns), true, \
	  1e6, READ_OPTIONAL)                                                                      \
	X(PEAK_RSS_BYTES, "peak_rss_bytes", U64, u->peak_rss_bytes, true, 4e18, READ_REQUIRED)     \
	X(PEAK_RSS_DELTA_BYTES, "peak_rss_delta_bytes", U64,                                       \
	  um_since(u->peak_rss_bytes, u->start_rss_bytes), true, 0, READ_OPTIONAL)                 \
	X(START_RSS_BYTES, "start_rss_bytes", U64, u->start_rss_bytes, true, 0, READ_OPTIONAL)     \
	X(N_SAMPLES, "n_samples", U64, u->n_rss_changes, true, 0, NOT_READ)                        \
	X(OUTPUT_BYTES, "output_bytes", U64, u->output_bytes, true, 4e18, READ_OPTIONAL)           \
	/* of output_bytes, those under the node-local tmp dir (--tmp); null: no dir known */      \
	X(TMP_OUTPUT_BYTES, "tmp_output_bytes", U64, u->tmp_output_bytes,                          \
	  u->tmp_output_bytes != UM_TMP_UNKNOWN, 4e18, READ_OPTIONAL)                              \
	X(PAGE_ALLOC_BYTES, "page_alloc_bytes", U64, u->page_alloc_bytes, true, 0, NOT_READ)       \
	X(START_CHARGE_BYTES, "start_charge_bytes", U64, u->start_charge_bytes, charge_known(u),   \
	  0, NOT_READ)                                                                             \
	X(PEAK_CHARGE_BYTES, "peak_charge_bytes", U64, u->peak_charge_bytes, charge_known(u), 0,   \
	  READ_OPTIONAL)                                                                           \
	/* device memory through the driver API; null when the unit's scope made no such call */   \
	X(PEAK_GPU_BYTES, "peak_gpu_bytes", U64, u->peak_gpu_bytes, u->gpu_seen, 0, READ_OPTIONAL) \
	X(PEAK_GPU_MANAGED_BYTES, "peak_gpu_managed_bytes", U64, u->peak_gpu_managed_bytes,        \
	  u->gpu_seen, 0, NOT_READ)                                                                \
	/* the devices that held any; null when some bytes' device is not known */                 \
	X(GPU_DEVICES, "gpu_devices", U64, gpu_devices_held(u), gpu_devices_known(u), 0,           \
	  READ_OPTIONAL)                                                                           \
	/* [{"device": N or null (not known), "peak_bytes": N}] (read for its largest peak) */     \
	X(PEAK_GPU_BY_DEVICE, "peak_gpu_bytes_by_device", DEVICES, u, u->gpu_seen, 0, NOT_READ)    \
	/* read from NVML (usedGpuMemory of the unit's process at its end), not traced */          \
	X(PEAK_GPU_TOTAL_BYTES, "peak_gpu_total_bytes", U64,                                       \
	  u->peak_gpu_bytes + nv->context_bytes, nvml_read(u, nv), 0, NOT_READ)                    \
	X(GPU_CONTEXT_BYTES, "gpu_context_bytes", U64, nv->context_bytes, nvml_read(u, nv), 0,     \
	  READ_OPTIONAL)                                                                           \
	/* how those two were got, or why they are null */                                         \
	X(GPU_NVML, "gpu_nvml", TEXT, gpu_nvml_note(nv->state), true, 0, NOT_READ)                 \
	X(PROCESSES, "processes", U64, u->processes, true, 0, NOT_READ)                            \
	X(THREADS, "threads", U64, u->threads, true, 0, NOT_READ)                                  \
	/* UM_STATUS_ below (read as text) */                                                      \
	X(STATUS, "status", TEXT, status_text(u), true, 0, NOT_READ)                               \
	X(INCOMPLETE_REASON, "incomplete_reason", TEXT_OR_ABSENT, incomplete_reason(u),            \
	  u->status != UM_UNIT_COMPLETE, 0, NOT_READ)

/* What the readers make of the read column. */
#define UM_IF_READ_REQUIRED(...) __VA_ARGS__
#define UM_IF_READ_OPTIONAL(...) __VA_ARGS__
#define UM_IF_NOT_READ(...)
#define UM_OPTIONAL_READ_REQUIRED 0
#define UM_OPTIONAL_READ_OPTIONAL 1

/* Each key as the constant UM_KEY_FIELD. */
#define UM_UNIT_KEY_CONSTANT(field, key, form, value, known, max, read)                            \
	static const char UM_KEY_##field[] __attribute__((unused)) = key;
UM_UNIT_KEYS(UM_UNIT_KEY_CONSTANT)
#undef UM_UNIT_KEY_CONSTANT

/* The keys of each element of peak_gpu_bytes_by_device (and of the run's). */
#define UM_KEY_DEVICE     "device"
#define UM_KEY_PEAK_BYTES "peak_bytes"

/* UM_KEY_STATUS's values; a unit without the key (an older file) is complete. */
#define UM_STATUS_COMPLETE   "complete"
#define UM_STATUS_INCOMPLETE "incomplete"

#endif
