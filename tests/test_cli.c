// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The command line a new user meets: one grammar (exact long options, -h and `help CMD` on
 * every command, --json for JSON, a switch never named as a count), tables on stdout and
 * messages on stderr, bad input named for what it is, and the option lists of --help, the man
 * page, the bash completion and the README in agreement.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

static const char *const commands[] = { "run", "attach", "hw", "check", "summary", "project",
					"report" };
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* A file of the repository (TOOLS is its tools/). */
static const char *repo_file(const char *rel)
{
	static __thread char path[512];
	const char *tools = getenv("TOOLS");

	snprintf(path, sizeof(path), "%s/%s", tools ? tools : "tools", "..");
	strncat(path, "/", sizeof(path) - strlen(path) - 1);
	strncat(path, rel, sizeof(path) - strlen(path) - 1);
	return path;
}

/* The kernel matrix's guests get the binaries, not the tree's documents. */
static void skip_without_the_tree(void)
{
	if (access(repo_file("man/unitmeter.1"), R_OK) || access(repo_file("README.md"), R_OK))
		cr_skip_test("the repository's man page and README are not here (a guest)");
}

static char *scratch_dir(void)
{
	static __thread char dir[32];

	snprintf(dir, sizeof(dir), "/tmp/um-cli-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	return dir;
}

/*
 * getopt took `--units` as the only option it prefixes, --units-jsonl: the run wrote a stream
 * named fit_unit, measured no unit and exited 0. Now nothing runs, and the line names --unit.
 */
Test(cli, an_abbreviated_option_is_refused_with_the_real_one)
{
	char *dir = scratch_dir(), path[96], *out;
	int status;

	out = sh_out(&status, "cd %s && %s run --units fit_unit -- %s %s/fits 2>&1", dir,
		     unitmeter_bin(), getenv("DEMO") ? getenv("DEMO") : ".output/demo/fit_demo", dir);
	cr_expect_eq(status, RUN_FAILED, "status %d: %s", status, out);
	cr_expect(strstr(out, "unknown option '--units'; did you mean --unit?"), "%s", out);
	snprintf(path, sizeof(path), "%s/fit_unit", dir);
	cr_expect_neq(access(path, F_OK), 0, "a file named fit_unit was written");
	snprintf(path, sizeof(path), "%s/fits", dir);
	cr_expect_neq(access(path, F_OK), 0, "the command ran");
	free(out);

	out = sh_out(&status, "%s summary --jso %s 2>&1", unitmeter_bin(), fixture("summary/a.json"));
	cr_expect_eq(status, COMMAND_FAILED, "status %d: %s", status, out);
	cr_expect(strstr(out, "unknown option '--jso'; did you mean --json?"), "%s", out);
	free(out);

	out = sh_out(&status, "%s run --quiet=yes -- /bin/true 2>&1", unitmeter_bin());
	cr_expect_eq(status, RUN_FAILED, "status %d: %s", status, out);
	cr_expect(strstr(out, "--quiet takes no value"), "%s", out);
	free(out);
	sh_out(&status, "rm -rf %s", dir);
}

/* -h, --help and `unitmeter help CMD` say the same, on stdout, for every command. */
Test(cli, every_command_answers_h_and_help)
{
	for (size_t i = 0; i < N_COMMANDS; i++) {
		char usage[64], *h, *help, *long_help;
		int st_h, st_help, st_long;

		h = sh_out(&st_h, "%s %s -h 2>/dev/null", unitmeter_bin(), commands[i]);
		help = sh_out(&st_help, "%s help %s 2>/dev/null", unitmeter_bin(), commands[i]);
		long_help = sh_out(&st_long, "%s %s --help 2>/dev/null", unitmeter_bin(), commands[i]);
		snprintf(usage, sizeof(usage), "Usage: unitmeter %s ", commands[i]);
		cr_expect_eq(st_h, 0, "%s -h: status %d", commands[i], st_h);
		cr_expect_eq(strncmp(h, usage, strlen(usage)), 0, "%s -h: %.200s", commands[i], h);
		cr_expect_str_eq(help, h, "help %s differs from %s -h", commands[i], commands[i]);
		cr_expect_str_eq(long_help, h, "%s --help differs from -h", commands[i]);
		cr_expect_eq(st_help + st_long, 0);
		free(h);
		free(help);
		free(long_help);
	}
	{
		int status;
		char *out = sh_out(&status, "%s help nosuch 2>&1", unitmeter_bin());

		cr_expect_eq(status, COMMAND_FAILED);
		cr_expect(strstr(out, "unknown command 'nosuch'"), "%s", out);
		free(out);
	}
}

/* summary's per-task switch is not named as project's count of tasks */
Test(cli, a_switch_and_a_count_never_share_a_name)
{
	int status;
	char *out = sh_out(&status, "%s summary --tasks %s 2>&1", unitmeter_bin(),
			   fixture("summary/a.json"));

	cr_expect_eq(status, COMMAND_FAILED, "%s", out);
	cr_expect(strstr(out, "--tasks is now --by-task"), "%s", out);
	free(out);
	out = sh_out(&status, "%s summary --by-task %s 2>/dev/null", unitmeter_bin(),
		     fixture("summary/a.json"));
	cr_expect_eq(status, 0);
	cr_expect(strstr(out, "TASK "), "%s", out);
	free(out);
}

/* The table on stdout and only there; --json the seed's summary, on stdout too. */
Test(cli, tables_and_json_on_stdout_messages_on_stderr)
{
	int status;
	char *out = sh_out(&status, "%s summary %s 2>/dev/null", unitmeter_bin(),
			   fixture("summary/a.json"));
	json_t *j;

	cr_expect_eq(status, 0);
	cr_expect(strstr(out, "units            "), "the table is not on stdout: %s", out);
	free(out);
	out = sh_out(&status, "%s summary %s 2>&1 >/dev/null", unitmeter_bin(),
		     fixture("summary/a.json"));
	cr_expect_str_empty(out, "summary wrote to stderr: %s", out);
	free(out);
	out = sh_out(&status, "%s summary --json %s 2>/dev/null", unitmeter_bin(),
		     fixture("summary/a.json"));
	j = json_loads(out, 0, NULL);
	cr_expect_not_null(j, "--json printed no JSON: %s", out);
	cr_expect(json_is_integer(json_object_get(j, "n_units")));
	json_decref(j);
	free(out);
}

/*
 * A hardware record that unitmeter itself wrote was "not valid JSON", and one in a directory
 * made summary of the directory fail. Now it is named, and the directory's reader skips it.
 */
Test(cli, a_hardware_record_is_named_and_skipped_in_a_directory)
{
	char *dir = scratch_dir(), *out;
	int status;

	free(sh_out(&status, "%s hw -o %s/hw.json && cp %s %s/run.json", unitmeter_bin(), dir,
		    fixture("summary/a.json"), dir));
	cr_assert_eq(status, 0);
	out = sh_out(&status, "%s summary %s/hw.json 2>&1", unitmeter_bin(), dir);
	cr_expect_eq(status, COMMAND_FAILED, "%s", out);
	cr_expect(strstr(out, "hw.json: not a unitmeter manifest or units stream (a hardware "
			      "record"), "%s", out);
	cr_expect(!strstr(out, "not valid JSON"), "%s", out);
	free(out);
	out = sh_out(&status, "%s summary --json %s 2>&1", unitmeter_bin(), dir);
	cr_expect_eq(status, 0, "%s", out);
	cr_expect(strstr(out, "hw.json: not a unitmeter manifest or units stream"), "%s", out);
	cr_expect(strstr(out, "skipped"), "%s", out);
	cr_expect(strstr(out, "\"n_units\": 5"), "%s", out);
	free(out);
	out = sh_out(&status, "%s project %s/hw.json --units 10 2>&1", unitmeter_bin(), dir);
	cr_expect_eq(status, COMMAND_FAILED, "%s", out);
	cr_expect(strstr(out, "not a unitmeter manifest or units stream"), "%s", out);
	free(out);
	free(sh_out(&status, "rm -rf %s", dir));
}

/* An empty file: a warning in summary (exit 0), an error in project. */
Test(cli, an_empty_file_is_a_warning_in_summary_and_an_error_in_project)
{
	char *dir = scratch_dir(), *out;
	int status;

	free(sh_out(&status, ": > %s/empty.units.jsonl", dir));
	out = sh_out(&status, "%s summary %s/empty.units.jsonl 2>&1", unitmeter_bin(), dir);
	cr_expect_eq(status, 0, "%s", out);
	cr_expect(strstr(out, "warning: ") && strstr(out, "empty.units.jsonl holds no unit"), "%s",
		  out);
	free(out);
	out = sh_out(&status, "%s project %s/empty.units.jsonl --units 10 2>&1", unitmeter_bin(),
		     dir);
	cr_expect_eq(status, COMMAND_FAILED, "%s", out);
	cr_expect(strstr(out, "no complete units"), "%s", out);
	free(out);
	free(sh_out(&status, "rm -rf %s", dir));
}

/* A run without --unit is allowed, never by surprise. */
Test(cli, a_run_without_a_unit_says_so)
{
	struct um_result r;
	const char *args[] = { "run", "-q", "--", "/bin/true", NULL };

	require_tracing();
	um_run(&r, true, args);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "note: no --unit given: the whole command is measured, no units"),
		  "%s", r.err);
	um_result_free(&r);
}

/* --- the option lists: --help, the man page, the completion and the README agree --------- */

#define MAX_NAMES 64

struct names {
	char *at[MAX_NAMES];
	size_t n;
};

static void names_add(struct names *l, const char *name, size_t len)
{
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->at[i]) == len && !strncmp(l->at[i], name, len))
			return;
	cr_assert_lt(l->n, MAX_NAMES);
	l->at[l->n++] = strndup(name, len);
}

static bool names_has(const struct names *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->at[i], name))
			return true;
	return false;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "--a --b ..." sorted, for one message that shows both sides */
static char *names_text(struct names *l)
{
	size_t len = 1;
	char *text;

	qsort(l->at, l->n, sizeof(l->at[0]), by_name);
	for (size_t i = 0; i < l->n; i++)
		len += strlen(l->at[i]) + 3;
	text = calloc(1, len);
	for (size_t i = 0; i < l->n; i++) {
		strcat(text, i ? " --" : "--");
		strcat(text, l->at[i]);
	}
	return text;
}

static void names_free(struct names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->at[i]);
	l->n = 0;
}

static size_t option_name_len(const char *p)
{
	size_t n = 0;

	while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9') || p[n] == '-')
		n++;
	return n;
}

/* argp's option lines: "  -o, --output=FILE   ..." or "      --units-jsonl=FILE   ..." */
static void help_names(const char *command, struct names *l)
{
	int status;
	char *out = sh_out(&status, "%s %s --help", unitmeter_bin(), command), *save = NULL;

	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t lead = strspn(line, " ");
		char *p = line + lead;

		if (lead < 2 || lead > 6)
			continue;
		if (p[0] == '-' && p[1] != '-' && p[2] == ',' && p[3] == ' ')
			p += 4;
		if (p[0] == '-' && p[1] == '-')
			names_add(l, p + 2, option_name_len(p + 2));
	}
	free(out);
}

/* The man page's OPTIONS: each .TP's first --name, under the .SS of the command(s) it is for. */
static void man_names(const char *command, struct names *l)
{
	char *man = slurp_file(repo_file("man/unitmeter.1")), *save = NULL;
	bool in_options = false, ours = false, after_tp = false;

	cr_assert_not_null(man);
	for (char *line = strtok_r(man, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, ".SH ", 4)) {
			in_options = !strcmp(line, ".SH OPTIONS");
			continue;
		}
		if (!in_options)
			continue;
		if (!strncmp(line, ".SS ", 4)) {
			/* "run and attach", "run only", "summary", "every command" */
			char word[32];

			snprintf(word, sizeof(word), "\"%s", command);
			ours = strstr(line, "every command") || strstr(line, word) ||
			       (snprintf(word, sizeof(word), " %s\"", command), strstr(line, word)) ||
			       (snprintf(word, sizeof(word), " %s ", command), strstr(line, word));
			continue;
		}
		if (!strcmp(line, ".TP")) {
			after_tp = true;
			continue;
		}
		if (after_tp && ours) {
			char *p = strstr(line, "\\-\\-"), *w;

			/* roff's "\-" is a hyphen: \-\-as\-root is --as-root */
			for (w = p; p && *p; p++)
				if (!(p[0] == '\\' && p[1] == '-'))
					*w++ = *p;
			if (w) {
				*w = '\0';
				/* report lists its shared options on one line */
				for (w = strstr(line, "--"); w; w = strstr(w + 2, "--"))
					names_add(l, w + 2, option_name_len(w + 2));
			}
		}
		after_tp = false;
	}
	free(man);
}

/* What the completion offers after "unitmeter COMMAND --" in a real bash. */
static void completion_names(const char *command, struct names *l)
{
	int status;
	char *out = sh_out(&status,
			   "bash -c 'BASH_COMPLETION_VERSINFO=${BASH_COMPLETION_VERSINFO-}; "
			   "source /usr/share/bash-completion/bash_completion && source %s && "
			   "compopt() { :; }; COMP_WORDS=(unitmeter %s --); COMP_CWORD=2; "
			   "COMP_LINE=\"unitmeter %s --\"; COMP_POINT=${#COMP_LINE}; _unitmeter; "
			   "printf \"%%s\\n\" \"${COMPREPLY[@]}\"'",
			   repo_file("completion/unitmeter"), command, command);
	char *save = NULL;

	cr_assert_eq(status, 0, "the completion could not be run: %s", out);
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "--", 2))
			names_add(l, line + 2, option_name_len(line + 2));
	free(out);
}

Test(cli, help_man_page_and_completion_list_the_same_options)
{
	skip_without_the_tree();
	for (size_t i = 0; i < N_COMMANDS; i++) {
		struct names help = { 0 }, man = { 0 }, comp = { 0 };
		char *h, *m, *c;

		help_names(commands[i], &help);
		man_names(commands[i], &man);
		completion_names(commands[i], &comp);
		h = names_text(&help);
		m = names_text(&man);
		c = names_text(&comp);
		cr_expect_gt(help.n, 0, "%s --help lists no option", commands[i]);
		cr_expect_str_eq(m, h, "%s: the man page lists [%s], --help [%s]", commands[i], m, h);
		cr_expect_str_eq(c, h, "%s: the completion offers [%s], --help [%s]", commands[i], c, h);
		free(h);
		free(m);
		free(c);
		names_free(&help);
		names_free(&man);
		names_free(&comp);
	}
}

/* Every option the README gives a unitmeter command is one of that command's. */
Test(cli, the_readmes_commands_use_real_options)
{
	struct names known[N_COMMANDS] = { 0 };
	char *readme = slurp_file(repo_file("README.md")), *save = NULL;
	int checked = 0;

	skip_without_the_tree();
	cr_assert_not_null(readme);
	for (size_t i = 0; i < N_COMMANDS; i++)
		help_names(commands[i], &known[i]);
	for (char *line = strtok_r(readme, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		for (char *at = strstr(line, "unitmeter "); at; at = strstr(at + 1, "unitmeter ")) {
			size_t c;
			char *p, *end = strstr(at, " -- ");

			for (c = 0; c < N_COMMANDS; c++)
				if (!strncmp(at + 10, commands[c], strlen(commands[c])) &&
				    strchr(" `\0", at[10 + strlen(commands[c])]))
					break;
			if (c == N_COMMANDS)
				continue;
			/* the command's own options come after " -- "; "|", "`", ";", "#" or another
			 * unitmeter end it too */
			for (p = strstr(at, " --"); p && (!end || p < end); p = strstr(p + 1, " --")) {
				size_t n = option_name_len(p + 3);
				char *next = strstr(at + 1, "unitmeter ");
				char name[64];

				if (!n || strcspn(at, "|`;#") < (size_t)(p - at) || (next && next < p))
					continue;
				snprintf(name, sizeof(name), "%.*s", (int)n, p + 3);
				cr_expect(names_has(&known[c], name),
					  "README: unitmeter %s has no option --%s: %s", commands[c],
					  name, line);
				checked++;
			}
		}
	}
	cr_expect_gt(checked, 5, "the README shows few options: the scan found %d", checked);
	for (size_t i = 0; i < N_COMMANDS; i++)
		names_free(&known[i]);
	free(readme);
}
