// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The file format said once (issue #35): the manifest's keys around its units are the tables
 * of common/manifest_keys.h. What a run writes is in them, every key of them is written, and
 * the man page's key sections name every key of them and no other key-shaped word. (A unit's
 * own keys: units::the_keys_written_read_and_documented_are_the_same.)
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "common/manifest_keys.h"
#include "common/unit_keys.h"
#include "record/unit_record.h"

TestSuite(manifest, .init = require_tracing, .timeout = UM_SUITE_TIMEOUT_S);

/* One table: where its objects are in a manifest, its keys, and where the man page has them. */
struct key_table {
	const char *where;   /* the objects' path: "run.limits", "run.per_process[]" */
	const char *section; /* the man page's .SS that documents them */
	bool all_written;    /* every run writes every key (else: only some runs write some) */
	const char *keys[40];
};

#define KEY_OF(name, key) name,
static const struct key_table tables[] = {
	{ "", "Manifest keys", true, { UM_MANIFEST_KEYS(KEY_OF) } },
	{ "tool", "Manifest keys", true, { UM_TOOL_KEYS(KEY_OF) } },
	/* a native spec's keys and a python: spec's differ */
	{ "unit_specs[]", "Manifest keys", false, { UM_SPEC_KEYS(KEY_OF) } },
	/* python: only where a python: spec was given */
	{ "run", "Manifest keys", false, { UM_RUN_KEYS(KEY_OF) } },
	{ "run.tmp_dir", "Manifest keys", true, { UM_TMP_DIR_KEYS(KEY_OF) } },
	{ "run.bpf", "Manifest keys", true, { UM_BPF_KEYS(KEY_OF) } },
	{ "run.bpf.switch_ins_unseen", "Manifest keys", true, { UM_UNSEEN_KEYS(KEY_OF) } },
	{ "run.bpf.switch_ins_unseen.after[]", "Manifest keys", true,
	  { UM_UNSEEN_AFTER_KEYS(KEY_OF) } },
	{ "run.tracing", "Manifest keys", true, { UM_TRACING_KEYS(KEY_OF) } },
	{ "run.charge", "Manifest keys", true, { UM_CHARGE_KEYS(KEY_OF) } },
	{ "run.gpu", "Manifest keys", true, { UM_GPU_KEYS(KEY_OF) } },
	{ "run.limits", "Manifest keys", true, { UM_LIMITS_KEYS(KEY_OF) } },
	{ "run.memory_timeline", "Manifest keys", true, { UM_TIMELINE_KEYS(KEY_OF) } },
	{ "run.per_process[]", "Manifest keys", true, { UM_PROCESS_KEYS(KEY_OF) } },
	{ "run.python[]", "Manifest keys", true, { UM_VERDICT_KEYS(KEY_OF) } },
	{ "run.peak_gpu_bytes_by_device[]", "Manifest keys", true,
	  { UM_KEY_DEVICE, UM_KEY_PEAK_BYTES } },
	{ "summary", "Summary keys", true, { UM_SUMMARY_KEYS(KEY_OF) } },
	{ "hardware", "Hardware keys", true, { UM_HARDWARE_KEYS(KEY_OF) } },
	{ "hardware.gpus[]", "Hardware keys", true, { UM_HW_GPU_KEYS(KEY_OF) } },
};
#undef KEY_OF
/* objects whose keys are names, not keys: the programs', the environment's */
static const char *const named_objects[] = { "run.bpf.recursion_misses", "hardware.thread_env",
					     "units[]", "hardware.blas[]" };

static const struct key_table *table_at(const char *where)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		if (!strcmp(tables[t].where, where))
			return &tables[t];
	return NULL;
}

static bool in_table(const struct key_table *t, const char *key)
{
	for (size_t k = 0; k < sizeof(t->keys) / sizeof(t->keys[0]) && t->keys[k]; k++)
		if (!strcmp(t->keys[k], key))
			return true;
	return false;
}

static bool is_named_object(const char *where)
{
	for (size_t i = 0; i < sizeof(named_objects) / sizeof(named_objects[0]); i++)
		if (!strcmp(named_objects[i], where))
			return true;
	return false;
}

/*
 * Every object of a written manifest against its table: each key it has is the table's, each
 * of the table's is there where every run writes all of them; seen[] marks the tables met.
 */
static void check_object(const json_t *o, const char *where, bool *seen, const char *run)
{
	const struct key_table *t;
	char inner[256];
	const char *key;
	json_t *value;
	size_t i;

	if (json_is_array(o)) {
		snprintf(inner, sizeof(inner), "%s[]", where);
		json_array_foreach(o, i, value)
			check_object(value, inner, seen, run);
		return;
	}
	if (!json_is_object(o) || is_named_object(where))
		return;
	t = table_at(where);
	cr_assert_not_null(t, "%s: an object at \"%s\", which no table of manifest_keys.h lists",
			   run, where);
	seen[t - tables] = true;
	json_object_foreach((json_t *)o, key, value) {
		cr_expect(in_table(t, key), "%s: \"%s\" holds \"%s\", not in its table", run, where,
			  key);
		snprintf(inner, sizeof(inner), "%s%s%s", where, *where ? "." : "", key);
		check_object(value, inner, seen, run);
	}
	for (size_t k = 0; t->all_written && k < sizeof(t->keys) / sizeof(t->keys[0]) && t->keys[k];
	     k++)
		cr_expect_not_null(json_object_get(o, t->keys[k]),
				   "%s: \"%s\" lacks its table's \"%s\"", run, where, t->keys[k]);
}

/* The man page's bold words in a section (.B, and the bold halves of .BR, .RB and .BI). */
static json_t *man_bold_words(const char *section)
{
	char path[1024], line[1024], heading[256];
	json_t *words = json_object();
	bool in_section = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s../../man/unitmeter.1", fixture(""));
	snprintf(heading, sizeof(heading), ".SS %s", section);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		int first_bold, arg = 0;
		char *at = line + 3;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, ".SS ", 4) || !strncmp(line, ".SH ", 4))
			in_section = !strcmp(line, heading);
		if (!in_section || line[0] != '.')
			continue;
		if (!strncmp(line, ".B ", 3) || !strncmp(line, ".BR ", 4) || !strncmp(line, ".BI ", 4))
			first_bold = 0;
		else if (!strncmp(line, ".RB ", 4))
			first_bold = 1;
		else
			continue;
		/* arguments: words, or "quoted words"; .B's are all bold */
		while (*at) {
			char word[256];
			size_t n = 0;

			while (*at == ' ')
				at++;
			if (!*at)
				break;
			if (*at == '"') {
				for (at++; *at && *at != '"' && n < sizeof(word) - 1; at++)
					word[n++] = *at;
				at += *at == '"';
			} else {
				for (; *at && *at != ' ' && n < sizeof(word) - 1; at++)
					word[n++] = *at;
			}
			word[n] = '\0';
			if (line[2] == ' ' || arg % 2 == first_bold)
				json_object_set_new(words, word, json_true());
			arg++;
		}
	}
	fclose(f);
	return words;
}

/* A word shaped as a key: lower case, digits and at least one underscore. */
static bool key_shaped(const char *w)
{
	if (!strchr(w, '_') || !islower((unsigned char)w[0]))
		return false;
	for (; *w; w++)
		if (!islower((unsigned char)*w) && !isdigit((unsigned char)*w) && *w != '_')
			return false;
	return true;
}

Test(manifest, the_keys_written_and_documented_are_the_tables)
{
	static const char *const sections[] = { "Manifest keys", "Summary keys", "Hardware keys" };
	const char *native[] = { "run", "--unit", "fit_unit", workload("units"), "--mode", "spikes",
				 "--sizes", "2", "--hold-ms", "1", NULL };
	char script[512];
	bool seen[sizeof(tables) / sizeof(tables[0])] = { false };
	struct um_result r;

	/* a native run, then a python: one with a spec that matches and one that matches nothing */
	um_run(&r, true, native);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_not_null(r.manifest, "%s", r.err);
	check_object(r.manifest, "", seen, "a native run");
	um_result_free(&r);
	snprintf(script, sizeof(script), "%s/../../tools/workloads/python/py_units.py",
		 getenv("WORKLOADS") ? getenv("WORKLOADS") : ".output/workloads");
	const char *python[] = { "run", "--unit", "python:fit_gfmm", "--unit", "python:fit_nowhere",
				 "/usr/bin/python3", script, "alloc", "--sizes", "1", NULL };
	um_run(&r, true, python);
	cr_assert_not_null(r.manifest, "%s", r.err);
	check_object(r.manifest, "", seen, "a python run");
	um_result_free(&r);
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		if (!seen[t])
			cr_log_info("no object at \"%s\" in these runs (%s)", tables[t].where,
				    strstr(tables[t].where, "gpu") ? "no GPU here" :
								     "none to report");

	for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
		json_t *bold = man_bold_words(sections[s]), *value;
		const char *word;

		for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
			for (size_t k = 0; !strcmp(tables[t].section, sections[s]) &&
					   k < sizeof(tables[t].keys) / sizeof(tables[t].keys[0]) &&
					   tables[t].keys[k];
			     k++)
				cr_expect_not_null(json_object_get(bold, tables[t].keys[k]),
						   "\"%s\" of %s is not in the man page's %s",
						   tables[t].keys[k], *tables[t].where ?
						   tables[t].where : "the manifest", sections[s]);
		json_object_foreach(bold, word, value) {
			bool known = false;

			for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
				known |= !strcmp(tables[t].section, sections[s]) &&
					 in_table(&tables[t], word);
			cr_expect(known || !key_shaped(word),
				  "the man page's %s names \"%s\", which no table has", sections[s],
				  word);
		}
		json_decref(bold);
	}
}

/*
 * A unit's line is UM_UNIT_KEYS in its order, each member as its form writes it: the lines of
 * two records as the writer wrote them before it was made from the table (the first member
 * without a comma, nulls for what is not known, the absent incomplete_reason, the devices).
 */
Test(unit_line, is_the_table_in_order)
{
	static char line[UNIT_LINE_MAX];
	struct um_unit_record u = {
		.pid = 4242, .start_ns = 1500000000, .end_ns = 3750000499, .cpu_ns = 2000000500,
		.peak_rss_bytes = 1 << 30, .start_rss_bytes = 1 << 20, .n_rss_changes = 17,
		.output_bytes = 4096, .tmp_output_bytes = 1024, .page_alloc_bytes = 1 << 29,
		.start_charge_bytes = 3 << 20, .peak_charge_bytes = 5ULL << 28, .processes = 1,
		.threads = 3, .status = UM_UNIT_COMPLETE,
	};
	struct gpu_nvml_unit nv = { .state = GPU_NVML_ABSENT };

	um_unit_json(&u, &nv, 0, "\"fit_unit\"", 1000000000, line, sizeof(line));
	cr_expect_str_eq(line,
		"{\"index\": 0, \"spec\": \"fit_unit\", \"pid\": 4242, \"start_ns\": 500000000, "
		"\"wall_s\": 2.250000, \"cpu_s\": 2.000001, \"cpu_utilisation\": 0.889, "
		"\"peak_rss_bytes\": 1073741824, \"peak_rss_delta_bytes\": 1072693248, "
		"\"start_rss_bytes\": 1048576, \"n_samples\": 17, \"output_bytes\": 4096, "
		"\"tmp_output_bytes\": 1024, \"page_alloc_bytes\": 536870912, "
		"\"start_charge_bytes\": 3145728, \"peak_charge_bytes\": 1342177280, "
		"\"peak_gpu_bytes\": null, \"peak_gpu_managed_bytes\": null, \"gpu_devices\": null, "
		"\"peak_gpu_bytes_by_device\": null, \"peak_gpu_total_bytes\": null, "
		"\"gpu_context_bytes\": null, \"gpu_nvml\": \"no NVML (run.gpu.nvml says why)\", "
		"\"processes\": 1, \"threads\": 3, \"status\": \"complete\"}");

	u.end_ns = u.start_ns;
	u.tmp_output_bytes = UM_TMP_UNKNOWN;
	u.start_charge_bytes = UM_CHARGE_UNKNOWN;
	u.gpu_seen = 1;
	u.peak_gpu_bytes = 6 << 20;
	u.peak_gpu_device_bytes[0] = 4 << 20;
	u.peak_gpu_device_bytes[UM_GPU_UNKNOWN_DEVICE] = 2 << 20;
	u.status = UM_UNIT_INCOMPLETE_EXEC;
	nv.state = GPU_NVML_READ;
	nv.context_bytes = 500 << 20;
	um_unit_json(&u, &nv, 7, "null", 2000000000, line, sizeof(line));
	cr_expect_str_eq(line,
		"{\"index\": 7, \"spec\": null, \"pid\": 4242, \"start_ns\": 0, \"wall_s\": 0.000000, "
		"\"cpu_s\": 2.000001, \"cpu_utilisation\": 0.000, \"peak_rss_bytes\": 1073741824, "
		"\"peak_rss_delta_bytes\": 1072693248, \"start_rss_bytes\": 1048576, "
		"\"n_samples\": 17, \"output_bytes\": 4096, \"tmp_output_bytes\": null, "
		"\"page_alloc_bytes\": 536870912, \"start_charge_bytes\": null, "
		"\"peak_charge_bytes\": null, \"peak_gpu_bytes\": 6291456, "
		"\"peak_gpu_managed_bytes\": 0, \"gpu_devices\": null, \"peak_gpu_bytes_by_device\": "
		"[{\"device\": 0, \"peak_bytes\": 4194304}, {\"device\": null, \"peak_bytes\": 2097152}], "
		"\"peak_gpu_total_bytes\": 530579456, \"gpu_context_bytes\": 524288000, "
		"\"gpu_nvml\": \"read by NVML at the unit's end, not traced\", \"processes\": 1, "
		"\"threads\": 3, \"status\": \"incomplete\", \"incomplete_reason\": \"exec\"}");
}
