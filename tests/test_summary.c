// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The seed's summarise(): expected values were computed outside unitmeter, with numpy's
 * percentile (linear interpolation) and Python's round() on the same numbers.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "files/summary.h"
#include "files/tasks.h"
#include "files/units_file.h"
#include "files/manifest_scan.h"

Test(summary, percentile_by_linear_interpolation)
{
	double a[] = { 4, 1, 3, 2 }, one[] = { 5 }, c[] = { 10, 0, 5 };

	cr_expect_float_eq(um_percentile(a, 4, 50), 2.5, 1e-12);
	cr_expect_float_eq(um_percentile(a, 4, 90), 3.7, 1e-12);
	cr_expect_float_eq(um_percentile(a, 4, 100), 4.0, 1e-12);
	cr_expect_float_eq(um_percentile(a, 4, 0), 1.0, 1e-12);
	cr_expect_float_eq(um_percentile(one, 1, 90), 5.0, 1e-12);
	cr_expect_float_eq(um_percentile(c, 3, 90), 9.0, 1e-12);
	cr_expect_float_eq(um_percentile(NULL, 0, 50), 0.0, 1e-12);
}

Test(summary, round_as_python_does)
{
	cr_expect_eq(um_round(2.675, 2), 2.67, "2.675 is 2.67499... in binary");
	cr_expect_eq(um_round(0.125, 2), 0.12, "an exact tie goes to even");
	cr_expect_eq(um_round(0.98765, 4), 0.9877);
}

static json_t *summarise_file(const char *rel)
{
	json_t *units = json_array(), *s;
	char err[256];

	cr_assert_eq(um_load_units(fixture(rel), units, err, sizeof(err)), 0, "%s", err);
	s = um_summarise(units);
	json_decref(units);
	return s;
}

Test(summary, manifest_matches_numpy)
{
	json_t *s = summarise_file("summary/a.json");

	cr_expect_eq(jnum(s, "n_units"), 5);
	cr_expect_eq(jnum(s, "total_wall_s"), 20.0);
	cr_expect_eq(jnum(s, "total_cpu_s"), 17.0);
	cr_expect_eq(jnum(s, "wall_s_median"), 3.0);
	cr_expect_eq(jnum(s, "wall_s_p90"), 7.6);
	cr_expect_eq(jnum(s, "wall_s_max"), 10.0);
	cr_expect_eq(jnum(s, "peak_rss_bytes_median"), 300);
	cr_expect_eq(jnum(s, "peak_rss_bytes_max"), 500);
	cr_expect_eq(jnum(s, "cpu_utilisation_mean"), 1.0);
	cr_expect_eq(jnum(s, "total_output_bytes"), 35, "nulls are skipped, as in the seed");
	cr_expect_eq(json_object_size(s), 10, "exactly the seed's keys");
	json_decref(s);
}

/* Two streams of one job array, merged: the summary of all eight units. */
Test(summary, streams_merge_and_match_numpy)
{
	json_t *units = json_array(), *s;
	char err[256];

	cr_assert_eq(um_load_units(fixture("summary/b.units.jsonl"), units, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(um_load_units(fixture("summary/b2.units.jsonl"), units, err, sizeof(err)), 0, "%s", err);
	s = um_summarise(units);
	cr_expect_eq(jnum(s, "n_units"), 8);
	cr_expect_eq(jnum(s, "total_wall_s"), 3.405);
	cr_expect_eq(jnum(s, "total_cpu_s"), 4.6);
	cr_expect_eq(jnum(s, "wall_s_median"), 0.3665);
	cr_expect_eq(jnum(s, "wall_s_p90"), 0.7863);
	cr_expect_eq(jnum(s, "wall_s_max"), 0.9877);
	cr_expect_eq(jnum(s, "peak_rss_bytes_median"), 1024288);
	cr_expect_eq(jnum(s, "peak_rss_bytes_max"), 3145728);
	cr_expect_eq(jnum(s, "cpu_utilisation_mean"), 1.167);
	cr_expect(json_is_null(jget(s, "total_output_bytes")), "no unit recorded output: null");
	json_decref(s);
	json_decref(units);
}

Test(summary, empty_is_n_units_zero)
{
	json_t *units = json_array(), *s = um_summarise(units);

	cr_expect_eq(json_object_size(s), 1);
	cr_expect_eq(jnum(s, "n_units"), 0);
	json_decref(s);
	json_decref(units);
}

Test(summary, truncated_stream_names_file_and_line)
{
	json_t *units = json_array();
	char err[512];

	cr_expect_eq(um_load_units(fixture("summary/truncated.units.jsonl"), units, err, sizeof(err)), -1);
	cr_expect_not_null(strstr(err, "truncated.units.jsonl:2:"), "%s", err);
	json_decref(units);
}

Test(summary, unit_without_numbers_is_refused)
{
	json_t *units = json_array();
	char err[512];

	cr_expect_eq(um_load_units(fixture("summary/badunit.json"), units, err, sizeof(err)), -1);
	cr_expect_not_null(strstr(err, "units[0]: a unit has no number \"cpu_s\""), "%s", err);
	cr_expect_eq(um_load_units("/nonexistent/x.json", units, err, sizeof(err)), -1);
	cr_expect_not_null(strstr(err, "cannot read /nonexistent/x.json"), "%s", err);
	json_decref(units);
}

/* The command: JSON on stdout, exit 2 and one line on malformed input. */
Test(summary, command_prints_json_and_refuses_bad_input)
{
	struct um_result r;
	const char *ok[] = { "summary", "--json", NULL, NULL };
	const char *bad[] = { "summary", NULL, NULL };
	json_t *s;

	ok[2] = fixture("summary/a.json");
	um_run(&r, false, ok);
	cr_expect_eq(r.status, 0, "%s", r.err);
	s = json_loads(r.out, 0, NULL);
	cr_assert_not_null(s, "%s", r.out);
	cr_expect_eq(jnum(s, "wall_s_p90"), 7.6);
	json_decref(s);
	um_result_free(&r);

	bad[1] = fixture("summary/truncated.units.jsonl");
	um_run(&r, false, bad);
	cr_expect_eq(r.status, 2);
	cr_expect_not_null(strstr(r.err, "truncated.units.jsonl:2:"), "%s", r.err);
	um_result_free(&r);
}

/* Found by fuzzing: a peak of 1e79 bytes reached an integer conversion. Out-of-range figures
 * are refused with the file and line, like any other malformed unit. */
Test(summary, figures_no_unit_can_have_are_refused)
{
	json_t *units = json_array();
	char err[512];

	cr_expect_eq(um_load_units(fixture("summary/hugepeak.units.jsonl"), units, err, sizeof(err)), -1);
	cr_expect_not_null(strstr(err, "hugepeak.units.jsonl:1: a unit's \"peak_rss_bytes\" is 1.048e+79"),
			   "%s", err);
	cr_expect_eq(um_load_units(fixture("summary/negwall.units.jsonl"), units, err, sizeof(err)), -1);
	cr_expect_not_null(strstr(err, "\"wall_s\" is -2"), "%s", err);
	cr_expect_eq(json_array_size(units), 0);
	json_decref(units);
}

/*
 * A job array at scale: 100,000 units in 20 streams, read one unit at a time. The summary is the
 * files' own (their text read by strtod, not by a JSON parser), and the command stays under a
 * bound set from its measurement (BENCHMARKS.md: 10 MiB; 280 MiB when it held the documents).
 */
Test(summary, an_array_of_100000_units_in_20_files_under_a_memory_bound)
{
	struct um_array arr;
	struct um_result r;
	const struct array_truth *t = &arr.t;

	array_make(&arr);
	json_t *s;

	array_run(&r, &arr, (const char *[]){ "summary", "--json", NULL });
	s = json_loads(r.out, 0, NULL);
	cr_assert_not_null(s, "%s", r.out);
	cr_expect_eq(jnum(s, "n_units"), 100000);
	cr_expect_eq(jnum(s, "total_wall_s"), um_round(t->wall_sum, 3));
	cr_expect_eq(jnum(s, "peak_rss_bytes_max"), t->peak_rss_max);
	cr_expect_eq(jnum(s, "total_output_bytes"), (double)t->output_sum);
	json_decref(s);
	um_result_free(&r);
	array_remove(&arr);
}

/*
 * The same array as the SPANK plugin leaves it, a manifest per task with its units inside:
 * read as fast and as small (files/manifest_scan.c), a directory of them and the files named.
 */
Test(summary, an_array_of_100000_units_in_20_manifests_under_a_memory_bound)
{
	struct um_array arr, man;
	struct um_result r;
	json_t *s, *tasks;

	array_make(&arr);
	array_make_manifests(&man, &arr);
	array_run(&r, &man, (const char *[]){ "summary", "--json", NULL });
	s = json_loads(r.out, 0, NULL);
	cr_assert_not_null(s, "%s", r.out);
	cr_expect_eq(jnum(s, "n_units"), 100000);
	cr_expect_eq(jnum(s, "total_wall_s"), um_round(arr.t.wall_sum, 3));
	cr_expect_eq(jnum(s, "peak_rss_bytes_max"), arr.t.peak_rss_max);
	cr_expect_eq(jnum(s, "total_output_bytes"), (double)arr.t.output_sum);
	json_decref(s);
	um_result_free(&r);
	/* a directory: its manifests, each a task */
	um_run(&r, false, (const char *[]){ "summary", "--by-task", "--json", man.dir, NULL });
	cr_assert_eq(r.status, 0, "%s", r.err);
	expect_array_rss_bounded("summary --by-task");
	s = json_loads(r.out, 0, NULL);
	cr_assert_not_null(s, "%s", r.out);
	tasks = json_object_get(json_array_get(json_object_get(s, "jobs"), 0), "tasks");
	cr_expect_eq(json_array_size(tasks), ARRAY_FILES, "%s", r.out);
	json_decref(s);
	um_result_free(&r);
	array_remove(&man);
	array_remove(&arr);
}

/*
 * The streaming reader (simdjson, jansson where simdjson cannot say) takes and refuses what the
 * document reader (jansson alone) does, with the same words, to the same summary: on the lines
 * where the two parsers differ (a repeated key, an escaped NUL, an integer past 64 bits, a
 * number past double, a scalar, an array) and on numbers whose kind matters (a real output is
 * not summed; an integer past 2^53 stays exact).
 */
Test(summary, the_streaming_reader_reads_as_the_document_reader_does)
{
	static const char *const lines[] = {
		"{\"wall_s\": 1, \"cpu_s\": 1, \"peak_rss_bytes\": 5, \"wall_s\": 2}",
		"{\"wall_s\": 1, \"cpu_s\": 1, \"peak_rss_bytes\": 18446744073709551615}",
		"{\"wall_s\": 1, \"cpu_s\": 1, \"peak_rss_bytes\": 9223372036854775808}",
		"{\"spec\": \"a\\u0000b\", \"wall_s\": 1, \"cpu_s\": 1, \"peak_rss_bytes\": 5}",
		"{\"spec\": \"\\ud800\", \"wall_s\": 1, \"cpu_s\": 1, \"peak_rss_bytes\": 5}",
		"{\"wall_s\": 1e400, \"cpu_s\": 1, \"peak_rss_bytes\": 5}",
		"[1, 2]",
		"7",
		"{\"wall_s\": 1.5, \"cpu_s\": 1, \"peak_rss_bytes\": 5, \"output_bytes\": 5.0}",
		"{\"wall_s\": -0.0, \"cpu_s\": 0, \"peak_rss_bytes\": 9007199254740993, \"output_bytes\": 9007199254740993}",
		"{\"wall_s\": 1, \"cpu_s\": \"1\", \"peak_rss_bytes\": 5}",
		"{\"wall_s\": 1, \"cpu_s\": 1, \"peak_rss_bytes\": 5, \"output_bytes\": null, \"status\": 3}",
		"{\"wall_s\": 1, \"cpu_s\": 1, \"peak_rss_bytes\": 5} x",
		"{\"wall_s\": 01, \"cpu_s\": 1, \"peak_rss_bytes\": 5}",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char path[] = "/tmp/um-read-XXXXXX", err[512] = "", err2[512] = "";
		int fd = mkstemp(path);
		json_t *units = json_array(), *doc_summary = NULL, *streamed;
		const char *files[1] = { path };
		FILE *f = fdopen(fd, "w");
		int rc;

		cr_assert_not_null(f);
		fprintf(f, "{\"wall_s\": 2, \"cpu_s\": 1, \"peak_rss_bytes\": 7}\n%s\n", lines[i]);
		fclose(f);
		rc = um_load_units(path, units, err, sizeof(err));
		if (!rc)
			doc_summary = um_summarise(units);
		streamed = um_summarise_files(files, 1, NULL, err2, sizeof(err2));
		if (rc) {
			cr_expect_null(streamed, "line %zu: refused by jansson (%s), taken streamed",
				       i, err);
			cr_expect_str_eq(err2, err, "line %zu", i);
		} else {
			cr_expect(json_equal(doc_summary, streamed), "line %zu: %s vs %s", i,
				  json_dumps(doc_summary, JSON_COMPACT), json_dumps(streamed, JSON_COMPACT));
		}
		json_decref(units);
		json_decref(doc_summary);
		json_decref(streamed);
		unlink(path);
	}
}

static int count_units(void *ctx, const struct um_read_unit *u, const struct um_unit_text *t)
{
	(void)u, (void)t;
	++*(size_t *)ctx;
	return 0;
}

/*
 * A manifest's units are framed in its text and parsed one at a time (files/manifest_scan.c),
 * the rest by jansson: the file is taken or refused as jansson alone takes or refuses it, with
 * the same words, to the same summary and the same document less its units. The cases are where
 * a framing could go wrong: a unit refused after others were given, brackets and escaped quotes
 * in strings, a repeated or escaped "units" key, the mark the rest is parsed with, data past the
 * end, a cut, keys after the units; and each line the stream reader is tested on, as a unit.
 */
Test(summary, a_manifest_is_read_as_jansson_reads_it)
{
#define UNIT(w) "{\"wall_s\": " #w ", \"cpu_s\": 1, \"peak_rss_bytes\": 7}"
	static const char *const framed[] = {
		"{\n\"schema\": \"unitmeter.run/1\", \"units\": [" UNIT(1) ", " UNIT(2) "]}",
		"{\n\"schema\": \"s\", \"units\": []}",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) "], \"units\": [" UNIT(3) ", " UNIT(4) "]}",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) "], \"unit\\u0073\": [" UNIT(3) "]}",
		"{\n\"schema\": \"s\", \"unit\\u0073\": [" UNIT(3) "], \"units\": [" UNIT(1) "]}",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) "], \"units\": \"\\u0001units read apart\"}",
		"{\n\"schema\": \"s\", \"command\": [\"units read apart\"], \"units\": [" UNIT(1) "]}",
		"{\n\"schema\": \"s\", \"units\": [{\"spec\": \"a}]\\\"{[\\\\\", \"wall_s\": 1, "
		"\"cpu_s\": 1, \"peak_rss_bytes\": 7}, " UNIT(2) "]}",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) ", " UNIT(2) "], \"run\": {\"a\": [1, {\"b\": "
		"\"]}\"}], \"c\": null}, \"z\": true}",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) ", " UNIT(2) "]} x",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) ", " UNIT(2) "]}\n{}",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) ", " UNIT(2) ",]}",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) " " UNIT(2) "]}",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) ", 7]}",
		"{\n\"schema\": \"s\", \"units\": {}}",
		"{\n\"units\": [" UNIT(1) "]}",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) ", " UNIT(2),
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) ", {\"wall_s\": 1, \"cpu_s\": [}]}",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) ", " UNIT(-2) "]}",
		"{\n\"schema\": \"s\" \"units\": [" UNIT(1) "]}",
		"{\n\"schema\": 1e999, \"units\": [" UNIT(1) "]}",
		"{\n\"schema\": 18446744073709551615, \"units\": [" UNIT(1) "]}",
		"{\n\"schema\": \"s\", \"units\": [" UNIT(1) "], \"n\": 9223372036854775807}",
	};
	static const char *const units[] = {
		"{\"wall_s\": 1, \"cpu_s\": 1, \"peak_rss_bytes\": 5, \"wall_s\": 2}",
		"{\"wall_s\": 1, \"cpu_s\": 1, \"peak_rss_bytes\": 18446744073709551615}",
		"{\"spec\": \"a\\u0000b\", \"wall_s\": 1, \"cpu_s\": 1, \"peak_rss_bytes\": 5}",
		"{\"spec\": \"\\ud800\", \"wall_s\": 1, \"cpu_s\": 1, \"peak_rss_bytes\": 5}",
		"{\"wall_s\": 1e400, \"cpu_s\": 1, \"peak_rss_bytes\": 5}",
		"[1, 2]",
		"{\"wall_s\": 1.5, \"cpu_s\": 1, \"peak_rss_bytes\": 5, \"output_bytes\": 5.0}",
		"{\"wall_s\": 1, \"cpu_s\": \"1\", \"peak_rss_bytes\": 5}",
		"{\"wall_s\": 01, \"cpu_s\": 1, \"peak_rss_bytes\": 5}",
	};
	size_t n_framed = sizeof(framed) / sizeof(framed[0]), n_units = sizeof(units) / sizeof(units[0]);

	for (size_t i = 0; i < n_framed + n_units; i++) {
		char path[] = "/tmp/um-manifest-XXXXXX", err[512] = "", err2[512] = "", err3[512] = "";
		int fd = mkstemp(path);
		json_t *loaded = json_array(), *doc_summary = NULL, *streamed, *rest = NULL;
		const char *files[1] = { path };
		FILE *f = fdopen(fd, "w");
		size_t given = 0;
		int rc, rc3;

		cr_assert_not_null(f);
		if (i < n_framed)
			fputs(framed[i], f);
		else
			fprintf(f, "{\n  \"schema\": \"unitmeter.run/1\",\n  \"units\": [\n    " UNIT(2)
				   ",\n    %s,\n    " UNIT(3) "\n  ],\n  \"run\": {\"wall_s\": 9}\n}\n",
				units[i - n_framed]);
		fclose(f);
		rc = um_load_units(path, loaded, err, sizeof(err));
		if (!rc)
			doc_summary = um_summarise(loaded);
		streamed = um_summarise_files(files, 1, NULL, err2, sizeof(err2));
		rc3 = um_read_units(path, count_units, &given, &rest, err3, sizeof(err3));
		if (rc) {
			cr_expect_null(streamed, "case %zu: refused by jansson (%s), taken", i, err);
			cr_expect_str_eq(err2, err, "case %zu", i);
			cr_expect_str_eq(err3, err, "case %zu", i);
			cr_expect_neq(rc3, 0, "case %zu", i);
		} else {
			json_t *whole = json_load_file(path, JSON_DISABLE_EOF_CHECK, NULL);

			cr_assert_not_null(whole, "case %zu", i);
			cr_expect(json_equal(doc_summary, streamed), "case %zu: %s vs %s", i,
				  json_dumps(doc_summary, JSON_COMPACT),
				  json_dumps(streamed, JSON_COMPACT));
			cr_expect_eq(rc3, 0, "case %zu: %s", i, err3);
			cr_expect_eq(given, json_array_size(loaded), "case %zu", i);
			json_object_del(whole, "units");
			cr_expect(json_equal(rest, whole), "case %zu: %s vs %s", i,
				  json_dumps(rest, JSON_COMPACT), json_dumps(whole, JSON_COMPACT));
			json_decref(whole);
		}
		json_decref(loaded);
		json_decref(doc_summary);
		json_decref(streamed);
		json_decref(rest);
		unlink(path);
	}
#undef UNIT
}

/* The scan frames each unit's bytes exactly, strings with brackets and escapes included, and
 * tells where jansson must read the file instead. */
Test(summary, the_manifest_scan_frames_each_unit)
{
	static const char text[] = "{\n \"schema\": \"s\", \"run\": {\"units\": [1]},\n \"units\": [\n"
				   "  {\"spec\": \"}]\\\\\", \"a\": [{}]},\n  {\"b\": \"\\\"{\"} ],\n"
				   " \"after\": [\"units\"]\n}\n";
	static const char *const units[] = { "{\"spec\": \"}]\\\\\", \"a\": [{}]}", "{\"b\": \"\\\"{\"}" };
	static const char *const not_framed[] = {
		"[]", "{\"units\": 1}", "{\"units\": [1]}", "{\"units\": [{}, ]}", "{\"units\": [{} {}]}",
		"{\"units\": [{\"a\": \"}\"", "{\"a\": }, \"units\": []}",
	};
	static const char *const not_ended[] = {
		"{\"units\": []", "{\"units\": [], \"units\": []}", "{\"units\": [], \"unit\\u0073\": 1}",
		"{\"units\": []} x", "{\"units\": [], 1}",
	};
	struct um_manifest_scan scan;
	size_t at, len, k = 0;
	int more;

	cr_assert(um_manifest_scan_open(&scan, text, strlen(text)));
	while ((more = um_manifest_scan_unit(&scan, &at, &len)) == 1) {
		cr_assert_lt(k, 2);
		cr_expect_eq(len, strlen(units[k]), "unit %zu", k);
		cr_expect_eq(memcmp(text + at, units[k], len), 0, "unit %zu: %.*s", k, (int)len, text + at);
		k++;
	}
	cr_expect_eq(more, 0);
	cr_expect_eq(k, 2);
	cr_expect_eq(text[scan.units_open], '[');
	cr_expect_eq(text[scan.units_close - 1], ']');
	cr_expect(um_manifest_scan_end(&scan));
	for (size_t i = 0; i < sizeof(not_framed) / sizeof(not_framed[0]); i++) {
		const char *t = not_framed[i];
		bool open = um_manifest_scan_open(&scan, t, strlen(t));

		while (open && (more = um_manifest_scan_unit(&scan, &at, &len)) == 1)
			;
		cr_expect(!open || more < 0, "%s", t);
	}
	for (size_t i = 0; i < sizeof(not_ended) / sizeof(not_ended[0]); i++) {
		const char *t = not_ended[i];

		cr_assert(um_manifest_scan_open(&scan, t, strlen(t)), "%s", t);
		while ((more = um_manifest_scan_unit(&scan, &at, &len)) == 1)
			;
		cr_expect(more < 0 || !um_manifest_scan_end(&scan), "%s", t);
	}
}

/* um_percentile's radix sort orders as qsort does: negatives, both zeros, denormals, huge. */
Test(summary, percentile_sorts_as_qsort_does)
{
	size_t n = 10000;
	double *v = malloc(n * sizeof(*v)), *w = malloc(n * sizeof(*w));
	uint64_t state = 7;

	cr_assert(v && w);
	for (size_t i = 0; i < n; i++) {
		state ^= state << 13, state ^= state >> 7, state ^= state << 17;
		switch (state % 6) {
		case 0: v[i] = 0.0; break;
		case 1: v[i] = -0.0; break;
		case 2: v[i] = -(double)(state >> 20) / 1e3; break;
		case 3: v[i] = 4.9e-320 * (double)(state % 7); break;
		case 4: v[i] = (double)(state >> 11) * 1e290; break;
		default: v[i] = (double)(state % 100000) / 7.0;
		}
		w[i] = v[i];
	}
	um_percentile(v, n, 50);
	for (size_t i = 1; i < n; i++)
		cr_assert(w[i] == w[i] && v[i - 1] <= v[i], "not sorted at %zu", i);
	/* the same multiset, each zero's sign in qsort's (stable) order */
	{
		size_t z = 0;

		for (size_t i = 0; i < n; i++)
			if (w[i] == 0) {
				while (v[z] != 0)
					z++;
				cr_assert_eq(signbit(v[z]), signbit(w[i]), "zero %zu", z);
				z++;
			}
	}
	free(v);
	free(w);
}

/*
 * The task table of array 4242 (tests/fixtures/array/make_array.py: one task of each ending),
 * read from its directory as the SPANK plugin leaves it: every figure from the fixture's own
 * numbers, task 1 read once though its stream lies beside its manifest, the tasks nearest a
 * limit first, the one whose tracer was killed last with '-' where nothing is known.
 */
Test(summary, tasks_prints_each_task_against_its_limits_nearest_first)
{
	static const char expected[] =
		"job 4242 array, 5 tasks\n"
		"TASK       STATE          UNITS INCOMPLETE      WALL TIMELIMIT TIME%     MEMORY   MEMLIMIT  MEM%   CPUS GIVEN\n"
		"3          TIMEOUT            2          1   0:59:50   1:00:00  100%     500.0M    1024.0M   49%   0.97     2\n"
		"2          OUT_OF_MEMORY      2          1   0:05:00   1:00:00    8%    1020.0M    1024.0M  100%   0.97     2\n"
		"1          COMPLETED          3          0   0:10:00   1:00:00   17%     400.0M    1024.0M   39%   1.83     2\n"
		"4          FAILED             1          0   0:01:40   1:00:00    3%     200.0M    1024.0M   20%   0.50     2\n"
		"5          UNKNOWN            3          0         -         -     -          -          -     -      -     -\n"
		"\nMEMORY: the task's peak memory (cgroup), what --mem is enforced on; CPUS: cores used on average, GIVEN: --cpus-per-task\n"
		"\n- : not known; a task with no manifest (its tracer was killed) has only its units stream\n";
	const char *args[] = { "summary", "--by-task", NULL, NULL };
	struct um_result r;

	args[2] = fixture("array/");
	um_run(&r, false, args);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_eq(r.out, expected);
	um_result_free(&r);
}

static const json_t *task_of(const json_t *tasks, const char *name)
{
	size_t i;
	json_t *t;

	json_array_foreach(tasks, i, t)
		if (!strcmp(json_string_value(json_object_get(t, "task")), name))
			return t;
	cr_assert_fail("no task %s", name);
	return NULL;
}

/* The same table as JSON, a plain run beside the array grouped as a job of its own: null, not
 * zero, where a figure cannot be read. */
Test(summary, tasks_as_json_groups_by_job_with_null_where_unknown)
{
	char *array = strdup(fixture("array")); /* fixture() gives one buffer */
	const char *args[] = { "summary", "--by-task", "--json", array, NULL, NULL };
	const json_t *jobs, *tasks, *t;
	json_t *j;

	args[4] = fixture("summary/a.json");
	j = um_run_json(args);
	free(array);
	cr_assert_not_null(j);
	jobs = json_object_get(j, "jobs");
	cr_assert_eq(json_array_size(jobs), 2);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(jobs, 0), "title")),
			 "job 4242 array, 5 tasks");
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(jobs, 1), "title")),
			 "1 run outside SLURM");
	tasks = json_object_get(json_array_get(jobs, 0), "tasks");
	t = task_of(tasks, "2");
	cr_expect_str_eq(json_string_value(json_object_get(t, "exit")), "OUT_OF_MEMORY");
	cr_expect_eq(jnum(t, "exit_signal"), 9);
	cr_expect_eq(jnum(t, "peak_charge_bytes"), 1020.0 * 1048576);
	cr_expect_eq(jnum(t, "memory_limit_bytes"), 1024.0 * 1048576);
	cr_expect_float_eq(jnum(t, "memory_used"), 1020.0 / 1024, 1e-12);
	cr_expect_eq(jnum(jget(t, "biggest_unit"), "index"), 1);
	cr_expect_eq(jnum(jget(t, "biggest_unit"), "peak_rss_bytes"), 1000.0 * 1048576);
	t = task_of(tasks, "3");
	cr_expect_str_eq(json_string_value(json_object_get(t, "exit")), "TIMEOUT");
	cr_expect_float_eq(jnum(t, "time_used"), 3590.0 / 3600, 1e-12);
	cr_expect_eq(jnum(jget(t, "slowest_unit"), "wall_s"), 1800.0);
	t = task_of(tasks, "5");
	cr_expect_str_eq(json_string_value(json_object_get(t, "exit")), "UNKNOWN");
	cr_expect_eq(json_is_true(json_object_get(t, "manifest")), false);
	cr_expect(json_is_null(json_object_get(t, "wall_s")));
	cr_expect(json_is_null(json_object_get(t, "memory_limit_bytes")));
	cr_expect_eq(jnum(t, "units_done"), 3);
	t = json_array_get(json_object_get(json_array_get(jobs, 1), "tasks"), 0);
	cr_expect(json_is_null(json_object_get(t, "job")));
	cr_expect(json_is_null(json_object_get(t, "time_limit_s")));
	json_decref(j);
}

/* How an exit is told from the manifest's figures: the kernel's OOM mark (run.oom_kills) first;
 * in manifests from before it, SIGKILL near the memory limit; SLURM's time limit SIGTERM first;
 * a batch shell's 128 + signal as the signal; a kill near neither limit is a failure. */
Test(summary, a_task_exit_is_classified_by_its_signal_and_its_limits)
{
	struct um_task_row r = {
		.wall_s = 100, .time_limit_s = 3600, .peak_charge_bytes = 950,
		.memory_limit_bytes = 1000, .exit_status = -1, .exit_signal = SIGKILL,
		.oom_kills = -1,
	};

	cr_expect_eq(um_task_classify(&r), UM_EXIT_OOM);
	r.oom_kills = 0;
	cr_expect_eq(um_task_classify(&r), UM_EXIT_FAILED, "the kernel marked no OOM victim");
	/* the batch shell of a --mem kill: its child died, it exits 137 */
	r.oom_kills = 1, r.exit_signal = -1, r.exit_status = 137, r.peak_charge_bytes = 500;
	cr_expect_eq(um_task_classify(&r), UM_EXIT_OOM);
	r.oom_kills = -1, r.exit_status = -1, r.exit_signal = SIGKILL, r.peak_charge_bytes = 950;
	r.exit_signal = SIGTERM;
	cr_expect_eq(um_task_classify(&r), UM_EXIT_FAILED, "SIGTERM is not the OOM killer's");
	r.wall_s = 3500;
	cr_expect_eq(um_task_classify(&r), UM_EXIT_TIMED_OUT);
	r.exit_signal = SIGKILL, r.peak_charge_bytes = 100;
	cr_expect_eq(um_task_classify(&r), UM_EXIT_TIMED_OUT, "SIGKILL after KillWait");
	r.wall_s = 100;
	cr_expect_eq(um_task_classify(&r), UM_EXIT_FAILED);
	r.memory_limit_bytes = -1, r.time_limit_s = -1;
	cr_expect_eq(um_task_classify(&r), UM_EXIT_FAILED, "no limit known: no kill put on one");
	r.exit_signal = -1, r.exit_status = 0;
	cr_expect_eq(um_task_classify(&r), UM_EXIT_OK);
	r.exit_status = 3;
	cr_expect_eq(um_task_classify(&r), UM_EXIT_FAILED);
	/* a shell's 143 (SIGTERM) at the time limit */
	r.exit_status = 143, r.wall_s = 3500, r.time_limit_s = 3600;
	cr_expect_eq(um_task_classify(&r), UM_EXIT_TIMED_OUT);
	r.exit_status = -1;
	cr_expect_eq(um_task_classify(&r), UM_EXIT_UNKNOWN);
}

/* A process of a per_process table: pid, ppid, comm, status, exit status, exit signal (-1: null). */
static json_t *proc(int pid, int ppid, const char *comm, const char *status, int code, int sig)
{
	return json_pack("{s:i, s:i, s:s, s:s, s:o, s:o}", "pid", pid, "ppid", ppid, "comm", comm,
			 "status", status, "exit_status", code >= 0 ? json_integer(code) : json_null(),
			 "exit_signal", sig >= 0 ? json_integer(sig) : json_null());
}

/* The exit summary --by-task gives a manifest with no root (attach --job, --cgroup): run's exit
 * null, its processes as given (a NULL-ended list, each taken), wall 100 s of a 3600 s limit. */
static enum um_task_exit exit_without_root(double wall_s, json_t *const *procs)
{
	json_t *table = json_array(), *m;
	struct um_task_row r;
	enum um_task_exit e;

	for (; *procs; procs++)
		json_array_append_new(table, *procs);
	m = json_pack("{s:{s:f, s:n, s:n, s:i, s:o, s:{s:i, s:i, s:i, s:i}}}", "run", "wall_s",
		      wall_s, "exit_status", "exit_signal", "oom_kills", 0, "per_process", table,
		      "limits", "slurm_job_id", 43, "slurm_array_job_id", 42,
		      "slurm_array_task_id", 1, "time_limit_s", 3600);
	cr_assert_not_null(m);
	cr_assert_eq(um_task_row_begin(&r, "task1.json"), 0);
	cr_assert_eq(um_task_row_end(&r, m), 0);
	e = r.exit;
	free(r.file);
	free(r.task);
	json_decref(m);
	return e;
}

/*
 * attach --job and --cgroup leave no root exit: the job's end is told from its tasks, the
 * processes slurmstepd forked (or, with none, the ones whose parent was not taken), once every
 * taken process was seen to exit; slurmstepd's own status and a task's children's are not it.
 */
Test(summary, a_task_attached_by_job_ends_as_its_tasks_did)
{
	/* the batch script exited 0; a child of the pool failed, which the script ignored */
	cr_expect_eq(exit_without_root(100, (json_t *[]){ proc(10, 1, "slurmstepd", "exited", 0, -1),
		proc(11, 10, "slurm_script", "exited", 0, -1), proc(12, 11, "pool", "exited", 0, -1),
		proc(13, 12, "pool", "exited", 1, -1), proc(14, 12, "pool", "exited", -1, 9), NULL }),
		UM_EXIT_OK);
	cr_expect_eq(exit_without_root(100, (json_t *[]){ proc(10, 1, "slurmstepd", "exited", 0, -1),
		proc(11, 10, "slurm_script", "exited", 3, -1), NULL }), UM_EXIT_FAILED);
	/* SLURM's SIGTERM at the time limit */
	cr_expect_eq(exit_without_root(3500, (json_t *[]){ proc(10, 1, "slurmstepd", "exited", 0, -1),
		proc(11, 10, "slurm_script", "exited", -1, SIGTERM), NULL }), UM_EXIT_TIMED_OUT);
	/* a step of two tasks, one failed */
	cr_expect_eq(exit_without_root(100, (json_t *[]){ proc(10, 1, "slurmstepd", "exited", 0, -1),
		proc(11, 10, "a.out", "exited", 0, -1), proc(12, 10, "a.out", "exited", 2, -1), NULL }),
		UM_EXIT_FAILED);
	/* --cgroup, no slurmstepd: the processes whose parents were not taken */
	cr_expect_eq(exit_without_root(100, (json_t *[]){ proc(20, 1, "sleep", "exited", 0, -1),
		proc(21, 5, "pool", "exited", 0, -1), proc(22, 21, "pool", "exited", 0, -1), NULL }),
		UM_EXIT_OK);
	/* not known: one still running at the stop, an exit lost, or no task taken */
	cr_expect_eq(exit_without_root(100, (json_t *[]){ proc(10, 1, "slurmstepd", "exited", 0, -1),
		proc(11, 10, "slurm_script", "exited", 0, -1), proc(12, 11, "pool", "running", -1, -1),
		NULL }), UM_EXIT_UNKNOWN);
	cr_expect_eq(exit_without_root(100, (json_t *[]){ proc(10, 1, "slurmstepd", "exited", 0, -1),
		proc(11, 10, "slurm_script", "unknown", -1, -1), NULL }), UM_EXIT_UNKNOWN);
	cr_expect_eq(exit_without_root(100, (json_t *[]){ proc(10, 1, "slurmstepd", "exited", 0, -1),
		NULL }), UM_EXIT_UNKNOWN);
	cr_expect_eq(exit_without_root(100, (json_t *[]){ NULL }), UM_EXIT_UNKNOWN);
}

/* A bad file among a directory's is refused with its file and line, as named alone. */
Test(summary, tasks_refuse_a_bad_file_naming_file_and_line)
{
	char *array = strdup(fixture("array")); /* fixture() gives one buffer */
	const char *args[] = { "summary", "--by-task", array, NULL, NULL };
	struct um_result r;

	args[3] = fixture("summary/truncated.units.jsonl");
	um_run(&r, false, args);
	free(array);
	cr_expect_eq(r.status, 2);
	cr_expect_not_null(strstr(r.err, "truncated.units.jsonl:2:"), "%s", r.err);
	cr_expect_str_eq(r.out, "");
	um_result_free(&r);
	args[2] = fixture("project");
	args[3] = NULL;
	um_run(&r, false, args);
	cr_expect_eq(r.status, 2);
	cr_expect_not_null(strstr(r.err, "truncated.units.jsonl:"), "%s", r.err);
	um_result_free(&r);
	args[2] = fixture("hw");
	um_run(&r, false, args);
	cr_expect_eq(r.status, 2);
	cr_expect_not_null(strstr(r.err, "hw holds no run manifest (.json) or units stream"),
			   "%s", r.err);
	um_result_free(&r);
}

/*
 * Each task read once however its files are named: task 1's manifest and its stream named
 * side by side, a file named twice under two spellings and the directory with its own files
 * all read as the directory alone is (13 units, 5 tasks), each skipped name counted on stderr.
 */
Test(summary, a_task_named_twice_or_with_its_stream_is_read_once)
{
	char *dir = strdup(fixture("array")), *manifest = strdup(fixture("array/4242_1.batch.0.json"));
	char *stream = strdup(fixture("array/4242_1.batch.0.units.jsonl"));
	char *respelt = strdup(fixture("array/../array/4242_5.batch.0.units.jsonl"));
	const char *pair[] = { "summary", "--json", manifest, stream, NULL };
	const char *all[] = { "summary", "--by-task", "--json", dir, respelt, stream, manifest, NULL };
	struct um_result r;
	json_t *s, *jobs;

	um_run(&r, false, pair);
	cr_assert_eq(r.status, 0, "%s", r.err);
	s = json_loads(r.out, 0, NULL);
	cr_assert_not_null(s, "%s", r.out);
	cr_expect_eq(jnum(s, "n_units"), 3, "%s", r.out);
	cr_expect_not_null(strstr(r.err, "1 file name skipped"), "%s", r.err);
	json_decref(s);
	um_result_free(&r);

	um_run(&r, false, all);
	cr_assert_eq(r.status, 0, "%s", r.err);
	s = json_loads(r.out, 0, NULL);
	cr_assert_not_null(s, "%s", r.out);
	jobs = json_object_get(s, "jobs");
	cr_expect_eq(json_array_size(jobs), 1, "%s", r.out);
	cr_expect_eq(json_array_size(json_object_get(json_array_get(jobs, 0), "tasks")), 5, "%s",
		     r.out);
	cr_expect_not_null(strstr(r.err, "3 file names skipped"), "%s", r.err);
	json_decref(s);
	um_result_free(&r);

	all[1] = "--json"; /* the seed's summary: the directory's 13 units */
	all[2] = dir;
	all[3] = respelt;
	all[4] = stream;
	all[5] = manifest;
	all[6] = NULL;
	um_run(&r, false, all);
	s = json_loads(r.out, 0, NULL);
	cr_assert_not_null(s, "%s %s", r.out, r.err);
	cr_expect_eq(jnum(s, "n_units"), 13, "%s", r.out);
	json_decref(s);
	um_result_free(&r);
	free(dir);
	free(manifest);
	free(stream);
	free(respelt);
}
