// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `unitmeter report`: the page's figures are the manifest's; the page renders in a real browser
 * (Debian's chromium, headless, through tools/browser-check) with no console error, its charts
 * there, and a screenshot for a person to look at; a units stream alone gives a page that says
 * why it has no timeline; a 100,000-unit stream gives a small page.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"
#include "files/summary.h"

TestSuite(report, .init = require_tracing, .timeout = UM_SUITE_TIMEOUT_S);

/* The demo traced with a page beside its manifest (the test's own directory, removed by free). */
static void demo_with_page(struct um_result *r, char *page, size_t len)
{
	const char *demo = getenv("DEMO") ? getenv("DEMO") : ".output/demo/fit_demo";
	char fits[160];
	const char *args[] = { "run", "-q", "--unit", "fit_unit", "--", demo, fits, NULL };
	const char *report[] = { "report", r->manifest_path, "-o", page, NULL };
	struct um_result rep;

	snprintf(fits, sizeof(fits), "/tmp/um-report-fits-%d", getpid());
	um_run(r, true, args);
	cr_assert_eq(r->status, 0, "%s", r->err);
	snprintf(page, len, "%s/report.html", r->dir);
	report[1] = r->manifest_path;
	um_run(&rep, false, report);
	cr_assert_eq(rep.status, 0, "unitmeter report failed: %s", rep.err);
	um_result_free(&rep);
	snprintf(fits, sizeof(fits), "rm -rf /tmp/um-report-fits-%d", getpid());
	cr_assert_eq(system(fits), 0);
}

/* The number in the data-v attribute of the first cell after marker; NAN when none. */
static double value_after(const char *html, const char *marker)
{
	const char *at = strstr(html, marker);

	at = at ? strstr(at, "data-v=\"") : NULL;
	return at ? strtod(at + strlen("data-v=\""), NULL) : NAN;
}

/* The data-value of a distribution's statistic: <figure id="dist-KEY"> ... data-stat="STAT". */
static double stat_of(const char *html, const char *key, const char *stat)
{
	char marker[96];
	const char *at;

	snprintf(marker, sizeof(marker), "id=\"dist-%s\"", key);
	at = strstr(html, marker);
	cr_assert_not_null(at, "no distribution of %s", key);
	snprintf(marker, sizeof(marker), "data-stat=\"%s\" data-value=\"", stat);
	at = strstr(at, marker);
	cr_assert_not_null(at, "no %s in the distribution of %s", stat, key);
	return strtod(at + strlen(marker), NULL);
}

static size_t count_of(const char *html, const char *needle)
{
	size_t n = 0;

	for (const char *at = html; (at = strstr(at, needle)); at += strlen(needle))
		n++;
	return n;
}

Test(report, page_figures_are_the_manifest_s)
{
	static const char *const totals[] = { "wall_s", "cpu_s", "peak_rss_bytes",
					      "peak_charge_bytes", "output_bytes" };
	struct um_result r;
	char page[160], marker[96];
	json_t *run, *units, *u;
	double walls[64], peak_top;
	char *html;
	size_t i, n;

	demo_with_page(&r, page, sizeof(page));
	html = slurp_file(page);
	cr_assert_not_null(html);
	run = jget(r.manifest, "run");
	for (i = 0; i < sizeof(totals) / sizeof(totals[0]); i++) {
		snprintf(marker, sizeof(marker), "<tr data-key=\"%s\">", totals[i]);
		cr_expect_eq(value_after(html, marker), jnum(run, totals[i]), "%s: page %.17g, manifest %.17g",
			     totals[i], value_after(html, marker), jnum(run, totals[i]));
	}
	units = jget(r.manifest, "units");
	n = json_array_size(units);
	cr_assert(n > 0 && n <= 64);
	cr_expect_eq(count_of(html, "<tr><td data-v="), n, "one table row per unit");
	json_array_foreach(units, i, u) {
		walls[i] = jnum(u, "wall_s");
		snprintf(marker, sizeof(marker), "<tr><td data-v=\"%zu\">", i);
		/* index, pid, function, start, wall, cpu, cores, then the peak */
		cr_expect_not_null(strstr(html, marker), "no row of unit %zu", i);
	}
	/* the marks are the figures summary and project compute */
	cr_expect_float_eq(stat_of(html, "wall_s", "median"), um_percentile(walls, n, 50), 1e-12);
	cr_expect_float_eq(stat_of(html, "wall_s", "p90"), um_percentile(walls, n, 90), 1e-12);
	cr_expect_float_eq(stat_of(html, "wall_s", "max"), walls[n - 1], 1e-12);
	cr_expect_eq(stat_of(html, "peak_rss_bytes", "max"),
		     jnum(jget(r.manifest, "summary"), "peak_rss_bytes_max"));
	/* the memory chart's peak is the run's exact one */
	{
		const char *at = strstr(html, "<circle class=\"peak\"");

		cr_assert_not_null(at, "no peak on the memory chart");
		at = strstr(at, "data-value=\"");
		peak_top = strtod(at + strlen("data-value=\""), NULL);
		cr_expect_eq(peak_top, jnum(run, "peak_rss_bytes"));
	}
	cr_expect_eq(count_of(html, "<g class=\"lane\""), json_array_size(jget(run, "per_process")),
		     "a lane per process");
	cr_expect_eq(count_of(html, "<rect class=\"unit\""), n, "a bar per unit");
	/* a run without GPU figures: no device memory chart, and no word of one */
	cr_expect_null(strstr(html, "class=\"gpu"), "a GPU chart in a CPU run's page");
	cr_expect_null(strstr(html, "gpu-caption"));
	free(html);
	um_result_free(&r);
}

Test(report, renders_in_chromium_with_every_chart_and_no_console_error)
{
	const char *counts[] = { "svg=svg", "distributions=figure.dist svg", "lanes=svg.timeline g.lane",
				 "units=svg.timeline rect.unit", "memory=svg.memory path.rss",
				 "charge=svg.memory path.charge", "rows=#unit-table tbody tr", NULL };
	struct um_result r;
	char page[160], shot[256];
	json_t *j, *c, *run;
	struct stat st;

	demo_with_page(&r, page, sizeof(page));
	snprintf(shot, sizeof(shot), "%s/unitmeter-report-demo.png", screenshot_dir());
	j = render(page, shot, counts);
	expect_no_console_errors(j);
	c = jget(j, "counts");
	run = jget(r.manifest, "run");
	cr_expect_eq(jnum(c, "distributions"), 5, "wall, CPU, cores, peak RSS, peak charge");
	cr_expect_eq(jnum(c, "svg"), 7, "the distributions, the timeline and memory");
	cr_expect_eq(jnum(c, "lanes"), json_array_size(jget(run, "per_process")));
	cr_expect_eq(jnum(c, "units"), json_array_size(jget(r.manifest, "units")));
	cr_expect_geq(jnum(c, "memory"), 1);
	cr_expect_geq(jnum(c, "charge"), 1, "a cgroup was made for the run: its charge is drawn");
	cr_expect_eq(jnum(c, "rows"), json_array_size(jget(r.manifest, "units")));
	cr_assert_eq(stat(shot, &st), 0, "no screenshot at %s", shot);
	cr_expect_gt(st.st_size, 10000, "a screenshot of a page with charts");
	cr_log_info("screenshot of the demo's report: %s", shot);
	json_decref(j);
	um_result_free(&r);
}

Test(report, a_units_stream_alone_has_no_timeline_and_says_why)
{
	const char *counts[] = { "timeline=svg.timeline", "why=#no-timeline", "memory=svg.memory",
				 "why_memory=#no-memory", "distributions=figure.dist svg", NULL };
	struct um_result r;
	char page[160], shot[256];
	const char *args[] = { "report", NULL, "-o", page, NULL };
	struct um_result rep;
	json_t *j, *c;

	demo_with_page(&r, page, sizeof(page));
	args[1] = r.units_path;
	um_run(&rep, false, args);
	cr_assert_eq(rep.status, 0, "%s", rep.err);
	snprintf(shot, sizeof(shot), "%s/unitmeter-report-stream.png", screenshot_dir());
	j = render(page, shot, counts);
	expect_no_console_errors(j);
	c = jget(j, "counts");
	cr_expect_eq(jnum(c, "timeline"), 0);
	cr_expect_eq(jnum(c, "why"), 1, "the page says why it has no timeline");
	cr_expect_eq(jnum(c, "memory"), 0);
	cr_expect_eq(jnum(c, "why_memory"), 1);
	cr_expect_eq(jnum(c, "distributions"), 5, "the units' figures are all in the stream");
	json_decref(j);
	um_result_free(&rep);
	um_result_free(&r);
}

Test(report, a_hundred_thousand_units_make_a_small_page)
{
	char dir[] = "/tmp/um-report-big-XXXXXX", stream[96], page[96];
	const char *args[] = { "report", stream, "-o", page, NULL };
	struct um_result rep;
	struct stat st;
	char *html;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(stream, sizeof(stream), "%s/big.units.jsonl", dir);
	snprintf(page, sizeof(page), "%s/big.html", dir);
	f = fopen(stream, "w");
	cr_assert_not_null(f);
	for (long i = 0; i < 100000; i++)
		fprintf(f, "{\"index\": %ld, \"spec\": \"fit_unit\", \"pid\": %ld, \"start_ns\": %ld, "
			   "\"wall_s\": %.6f, \"cpu_s\": %.6f, \"cpu_utilisation\": 0.9, "
			   "\"peak_rss_bytes\": %ld, \"peak_rss_delta_bytes\": 4096, \"output_bytes\": 10, "
			   "\"peak_charge_bytes\": %ld, \"status\": \"complete\"}\n",
			i, 1000 + i % 8, i * 20000000L, 0.01 + (i % 97) * 1e-4, 0.009 + (i % 97) * 9e-5,
			(1L << 20) + (i % 1013) * 4096L, (1L << 21) + (i % 1013) * 4096L);
	cr_assert_eq(fclose(f), 0);
	um_run(&rep, false, args);
	cr_assert_eq(rep.status, 0, "%s", rep.err);
	cr_assert_eq(stat(page, &st), 0);
	cr_expect_lt(st.st_size, 5 * 1024 * 1024, "page of %lld bytes", (long long)st.st_size);
	html = slurp_file(page);
	cr_assert_not_null(html);
	cr_expect_not_null(strstr(html, "id=\"rows-note\""), "the table says it lists a part");
	cr_expect_not_null(strstr(html, "data-stat=\"n\" data-value=\"100000\""),
			   "the distributions take every unit");
	free(html);
	um_result_free(&rep);
	snprintf(page, sizeof(page), "rm -rf %s", dir);
	cr_expect_eq(system(page), 0);
}

Test(report, run_report_writes_the_page_and_a_failure_to_is_not_fatal)
{
	char page[160], bad[160];
	const char *args[] = { "run", "-q", "--report", page, "--", workload("spike"), "--mib", "8",
			       NULL };
	struct um_result r;
	struct stat st;

	snprintf(page, sizeof(page), "/tmp/um-report-run-%d.html", getpid());
	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(stat(page, &st), 0, "no page at %s: %s", page, r.err);
	cr_expect_not_null(strstr(r.err, "report:"), "unitmeter says where the page is: %s", r.err);
	unlink(page);
	um_result_free(&r);
	/* the measurements are in the manifest already: a page that cannot be written is a warning */
	snprintf(bad, sizeof(bad), "/nonexistent-%d/report.html", getpid());
	args[3] = bad;
	um_run(&r, true, args);
	cr_expect_eq(r.status, 0, "the command's status, not the page's: %s", r.err);
	cr_expect_not_null(r.manifest, "the manifest is written");
	cr_expect_not_null(strstr(r.err, "cannot write the report"), "%s", r.err);
	um_result_free(&r);
}

Test(report, the_request_on_the_page_is_project_s)
{
	struct um_result r, proj;
	char page[160];
	const char *project[] = { "project", NULL, "--units", "2000", "--units-per-task", "250", NULL };
	const char *report[] = { "report", NULL, "--units", "2000", "--units-per-task", "250", "-o",
				 page, NULL };
	char *html, *line, *save = NULL;

	demo_with_page(&r, page, sizeof(page));
	project[1] = report[1] = r.manifest_path;
	um_run(&proj, false, report);
	cr_assert_eq(proj.status, 0, "%s", proj.err);
	um_result_free(&proj);
	um_run(&proj, false, project);
	cr_assert_eq(proj.status, 0, "%s", proj.err);
	html = slurp_file(page);
	cr_assert_not_null(html);
	cr_assert_not_null(strstr(html, "<pre id=\"sbatch\">"));
	/* every #SBATCH line of project's header is on the page (no line holds <, > or &) */
	for (line = strtok_r(proj.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "#SBATCH", 7))
			cr_expect_not_null(strstr(html, line), "not on the page: %s", line);
		/* the time model's parts, in the header's comments and in the page's own table */
		if (!strncmp(line, "#   ", 4)) {
			const char *table = strstr(html, "id=\"time-model\"");
			char escaped[1024];
			size_t k = 0;

			/* as the page writes text: an apostrophe as &#39; (no <, > or & here) */
			for (const char *c = line + 4; *c && k + 6 < sizeof(escaped); c++)
				k += (size_t)snprintf(escaped + k, sizeof(escaped) - k, "%s",
						      *c == '\'' ? "&#39;" : (char[]){ *c, 0 });
			cr_expect_not_null(table, "no time-model table on the page");
			cr_expect_not_null(table ? strstr(table, escaped) : NULL,
					   "not in the page's time model: %s", escaped);
		}
	}
	cr_expect_not_null(strstr(html, "<tr data-key=\"warmup_s\"><td>warm-up</td>"));
	free(html);
	um_result_free(&proj);
	um_result_free(&r);
}

Test(report, split_options_without_units_are_refused)
{
	const char *args[] = { "report", "x.json", "--tasks", "4", NULL };
	struct um_result r;

	um_run(&r, false, args);
	cr_expect_eq(r.status, 2);
	cr_expect_not_null(strstr(r.err, "give --units too"), "%s", r.err);
	um_result_free(&r);
}

/* The checks above can fail: the same tool on a broken page reports what is wrong with it. */
Test(report, the_browser_check_sees_a_script_error_and_a_fetch)
{
	char dir[] = "/tmp/um-report-broken-XXXXXX", page[96], shot[128];
	const char *counts[] = { "svg=svg", NULL };
	json_t *j, *errors;
	FILE *f;
	size_t i;
	const json_t *e;
	bool exception = false, fetch = false;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(page, sizeof(page), "%s/broken.html", dir);
	snprintf(shot, sizeof(shot), "%s/broken.png", dir);
	f = fopen(page, "w");
	cr_assert_not_null(f);
	fputs("<!DOCTYPE html><html><body><svg></svg><img src=\"https://example.com/x.png\">"
	      "<script>undefinedFunction()</script></body></html>\n", f);
	cr_assert_eq(fclose(f), 0);
	j = render(page, shot, counts);
	errors = jget(j, "console_errors");
	json_array_foreach(errors, i, e) {
		exception |= strstr(json_string_value(e), "undefinedFunction") != NULL;
		fetch |= strstr(json_string_value(e), "example.com") != NULL;
	}
	cr_expect(exception, "the uncaught exception is reported");
	cr_expect(fetch, "the attempt to fetch from the network is reported");
	cr_expect_eq(jnum(jget(j, "counts"), "svg"), 1);
	json_decref(j);
	snprintf(page, sizeof(page), "rm -rf %s", dir);
	cr_expect_eq(system(page), 0);
}

/*
 * A job array at scale: 100,000 units in 20 streams on one page, each unit kept compact (no
 * parsed documents). The page's counts and the longest unit are the files' own (their text,
 * read by strtod), and the command stays under a bound set from its measurement (BENCHMARKS.md:
 * 18 MiB; 280 MiB when it held the documents).
 */
Test(report, an_array_of_100000_units_in_20_files_under_a_memory_bound)
{
	struct um_array arr;
	struct um_result r;
	const struct array_truth *t = &arr.t;

	array_make(&arr);
	char page[64], header[64], *html;

	snprintf(page, sizeof(page), "%s/page.html", arr.dir);
	array_run(&r, &arr, (const char *[]){ "report", "-o", page, NULL });
	html = slurp_file(page);
	cr_assert_not_null(html);
	snprintf(header, sizeof(header), " &middot; %zu units &middot; ", t->n);
	cr_expect_not_null(strstr(html, header), "the page's count of units");
	cr_expect_eq(stat_of(html, "wall_s", "n"), (double)t->n_complete);
	cr_expect_eq(stat_of(html, "wall_s", "max"), t->wall_max_complete);
	free(html);
	unlink(page);
	um_result_free(&r);
	array_remove(&arr);
}

/*
 * Array 4242 (tests/fixtures/array/make_array.py), its directory given: one page named for the
 * job, every task a row against its limits nearest first, the two a limit killed flagged in the
 * table and red in the headroom strip, the request re-projected beside the one it ran under,
 * the files listed once, folded; no run article or process lanes per task (200 would bury it).
 */
Test(report, an_array_page_shows_each_task_against_its_limits_and_flags_the_killed)
{
	const char *counts[] = { "rows=table.tasks tbody tr", "killed=table.tasks tr.killed",
				 "strip=svg rect.task", "strip_killed=svg rect.task.killed",
				 "files=details#files li", "runs=article.run", "lanes=svg.timeline",
				 "folded=details#files:not([open])", NULL };
	const char *args[] = { "report", NULL, "-o", NULL, NULL };
	char page[128], shot[256], *html;
	const char *timed_out, *oom, *ok;
	struct um_result r;
	json_t *j, *c;

	snprintf(page, sizeof(page), "/tmp/um-array-report-%d.html", getpid());
	args[1] = fixture("array/");
	args[3] = page;
	um_run(&r, false, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	um_result_free(&r);
	html = slurp_file(page);
	cr_assert_not_null(html);
	cr_expect_not_null(strstr(html, "<h1 id=\"job\">job 4242 array, 5 tasks</h1>"));
	timed_out = strstr(html, "TIMEOUT</td>");
	oom = strstr(html, "OUT_OF_MEMORY</td>");
	ok = strstr(html, "\">COMPLETED</td>");
	cr_assert(timed_out && oom && ok, "every ending named");
	cr_expect(timed_out < oom && oom < ok, "nearest a limit first");
	cr_expect_not_null(strstr(oom, "<td data-v=\"1069547520\">1020.0 MiB</td><td "
				       "data-v=\"1073741824\">1.00 GiB</td><td data-v=\""),
			   "the OOM-killed task's charge against its limit");
	cr_expect_not_null(strstr(html, "#SBATCH --time=1:00:00\n#SBATCH --mem=1024M\n"
					"#SBATCH --cpus-per-task=2\n"), "what it ran under");
	cr_expect_not_null(strstr(html, "unitmeter project: 13 units in 5 array tasks"),
			   "re-projected from the whole array, its own units and tasks");
	free(html);
	snprintf(shot, sizeof(shot), "%s/unitmeter-report-array.png", screenshot_dir());
	j = render(page, shot, counts);
	expect_no_console_errors(j);
	cr_expect_str_eq(json_string_value(jget(j, "title")), "unitmeter: job 4242 array, 5 tasks");
	c = jget(j, "counts");
	cr_expect_eq(jnum(c, "rows"), 5);
	cr_expect_eq(jnum(c, "killed"), 2);
	cr_expect_eq(jnum(c, "strip"), 5);
	cr_expect_eq(jnum(c, "strip_killed"), 2);
	cr_expect_eq(jnum(c, "files"), 5);
	cr_expect_eq(jnum(c, "folded"), 1);
	cr_expect_eq(jnum(c, "runs"), 0);
	cr_expect_eq(jnum(c, "lanes"), 0);
	json_decref(j);
	unlink(page);
}

/* Files of no SLURM job, several of them: the page of runs as it was, not an array's. */
Test(report, files_outside_slurm_keep_the_page_of_runs)
{
	char *a = strdup(fixture("summary/a.json")); /* fixture() gives one buffer */
	const char *args[] = { "report", a, NULL, "-o", NULL, NULL };
	char page[128], *html;
	struct um_result r;

	snprintf(page, sizeof(page), "/tmp/um-plain-report-%d.html", getpid());
	args[2] = fixture("summary/b.units.jsonl");
	args[4] = page;
	um_run(&r, false, args);
	free(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	um_result_free(&r);
	html = slurp_file(page);
	cr_assert_not_null(html);
	cr_expect_not_null(strstr(html, "<h1>unitmeter report</h1>"));
	cr_expect_null(strstr(html, "id=\"tasks\""));
	cr_expect_not_null(strstr(html, "id=\"runs\""));
	free(html);
	unlink(page);
}
