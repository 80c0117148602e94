// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The README's output blocks against what the binary prints (tools/readme-output.py): a block
 * that no longer matches fails here, and `make readme-output` rewrites it. The blocks of
 * docs/example/'s files are compared byte for byte; the `run` table of a fresh demo run has
 * other pids and timings each time, so it is compared word by word with the figures masked.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#define PYTHON "/usr/bin/python3"

static void readme_init(void)
{
	if (access(PYTHON, X_OK))
		cr_skip_test(PYTHON " is missing");
}

TestSuite(readme, .init = readme_init, .timeout = UM_SUITE_TIMEOUT_S);

/* The repository: TOOLS' parent (make test), else the working directory (a run from the root). */
static const char *repo_root(void)
{
	static __thread char root[PATH_MAX];
	const char *tools = getenv("TOOLS");
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/..", tools && *tools ? tools : "tools");
	cr_assert_not_null(realpath(path, root), "no repository at %s", path);
	return root;
}

static const char *demo_bin(void)
{
	const char *demo = getenv("DEMO");

	return demo && *demo ? demo : ".output/demo/fit_demo";
}

/* tools/readme-output.py --check MODE [FILE]: its exit status; its stderr (the diff) in *err. */
static int check(const char *mode, const char *file, char **err)
{
	char script[PATH_MAX + 32], errpath[] = "/tmp/um-readme-err-XXXXXX";
	int status, fd = mkstemp(errpath);
	pid_t pid;

	cr_assert(fd >= 0);
	snprintf(script, sizeof(script), "%s/tools/readme-output.py", repo_root());
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		setenv("UNITMETER", unitmeter_bin(), 1);
		setenv("DEMO", demo_bin(), 1);
		dup2(fd, 2);
		execl(PYTHON, "python3", script, "--check", mode, "--root", repo_root(), file,
		      (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	*err = slurp_file(errpath);
	close(fd);
	unlink(errpath);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A copy of README.md with the first line after `after` (a marker's text, then its fence and
 * the command line) changed by edit: a block whose output no longer matches. */
static void edited_copy(const char *copy, const char *after, void (*edit)(char *line))
{
	char path[PATH_MAX], *text, *mark, *line;
	FILE *f;

	snprintf(path, sizeof(path), "%s/README.md", repo_root());
	text = slurp_file(path);
	cr_assert_not_null(text, "no %s", path);
	mark = strstr(text, after);
	cr_assert_not_null(mark, "README.md has no block %s", after);
	/* the marker, the fence, the `$ command` line: the output's first line follows */
	line = mark;
	for (int i = 0; i < 3; i++) {
		line = strchr(line, '\n');
		cr_assert_not_null(line);
		line++;
	}
	edit(line);
	f = fopen(copy, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	free(text);
}

/* The block's first figure one higher (0 -> 1, 9 -> 0), as a hand-edited number would be. */
static void bump_a_digit(char *line)
{
	for (; *line && strncmp(line, "\n```", 4); line++)
		if (*line >= '0' && *line <= '9') {
			*line = *line == '9' ? '0' : *line + 1;
			return;
		}
	cr_assert_fail("the block has no digit to change");
}

/* A word the binary does not print: the masked comparison must still see it. */
static void change_a_word(char *line)
{
	for (; *line && *line != '\n'; line++)
		if ((*line >= 'a' && *line <= 'z') || (*line >= 'A' && *line <= 'Z')) {
			*line = *line == 'x' ? 'y' : 'x';
			return;
		}
	cr_assert_fail("the block's first line has no letter to change");
}

Test(readme, blocks_match_what_the_binary_prints)
{
	char *err;
	int rc = check("--no-run", NULL, &err);

	cr_expect_eq(rc, 0, "the README's output blocks are stale (make readme-output):\n%s",
		     err ? err : "");
	free(err);
}

Test(readme, an_edited_block_fails_the_check)
{
	char copy[] = "/tmp/um-readme-XXXXXX.md", *err;
	int fd = mkstemps(copy, 3), rc;

	cr_assert(fd >= 0);
	close(fd);
	edited_copy(copy, "<!-- output: unitmeter summary", bump_a_digit);
	rc = check("--no-run", copy, &err);
	cr_expect_eq(rc, 1, "an edited block passed the check (exit %d): %s", rc, err ? err : "");
	cr_expect(err && strstr(err, "differs from what the binary prints"), "%s", err ? err : "");
	free(err);
	unlink(copy);
}

Test(readme, the_run_block_has_the_shape_of_a_fresh_run)
{
	char copy[] = "/tmp/um-readme-XXXXXX.md", *err;
	int fd, rc;

	require_tracing();
	if (!memory_controller())
		cr_skip_test("no memory controller: the run table has no cgroup line here");
	rc = check("--only-run", NULL, &err);
	cr_expect_eq(rc, 0, "the README's run block differs from a fresh demo run:\n%s",
		     err ? err : "");
	free(err);

	/* a word changed in it must fail, though the figures are masked */
	fd = mkstemps(copy, 3);
	cr_assert(fd >= 0);
	close(fd);
	edited_copy(copy, "<!-- output-run: unitmeter run", change_a_word);
	rc = check("--only-run", copy, &err);
	cr_expect_eq(rc, 1, "an edited run block passed the check (exit %d): %s", rc,
		     err ? err : "");
	free(err);
	unlink(copy);
}
