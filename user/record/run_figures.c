// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the run record holds, read: a unit's spec and JSON line, NVML's part of the run, the
 * memory charge's peak. The writers (manifest.c, tables.c) and the consumer (run_record.c)
 * read through these, and none of them calls another: the record's files make no circle.
 */
#include <stdint.h>
#include "record/run_record_internal.h"
#include "record/unit_record.h"

const char *run_record__unit_spec(const struct run_record *r, const struct um_unit_record *u)
{
	return u->spec < r->cfg->n_specs ? r->cfg->specs[u->spec].text : NULL;
}

size_t run_record__unit_line(const struct run_record *r, const struct um_unit_record *u,
			     size_t index, char *buf, size_t len)
{
	return um_unit_json(u, &r->nvml_units[index], index,
			    u->spec < r->cfg->n_specs ? r->spec_json[u->spec] : "null", r->t0_ns, buf,
			    len);
}

void run_record__gpu_nvml(const struct run_record *r, struct gpu_nvml_run *out)
{
	*out = (struct gpu_nvml_run){ .loaded = r->trace.nvml_loaded, .why = r->trace.nvml_why,
				      .processes = r->n_contexts };
	for (size_t i = 0; i < r->n_contexts; i++)
		out->context_bytes += r->contexts[i].bytes;
}

bool run_record__peak_charge(const struct run_record *r, uint64_t *peak)
{
	const struct tracer_counters *c = &r->trace.counters;
	const struct memcg *m = &r->memcg;

	if (!m->id || !c->charge_known)
		return false;
	*peak = c->group_peak_charge_bytes;
	if ((m->made_for_run || c->charge_watermark_last_bytes > c->charge_watermark_start_bytes) &&
	    c->charge_watermark_last_bytes > *peak)
		*peak = c->charge_watermark_last_bytes;
	return true;
}
