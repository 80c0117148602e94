// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/fileio.h"
#include "trace/memcg.h"
#include "trace/slurm_job.h"

/* slurmd's job directories lie this deep below a hierarchy's root at most (v2: system.slice/
 * slurmstepd.scope/job_J; v1: slurm/uid_U/job_J) */
#define JOB_DIR_DEPTH 5

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int slurm_job_parse(const char *text, char *job, size_t job_len, char *step, size_t step_len)
{
	const char *dot = strchr(text, '.'), *us;
	size_t n = dot ? (size_t)(dot - text) : strlen(text);
	char head[64];

	if (n == 0 || n >= sizeof(head) || n >= job_len)
		return -EINVAL;
	memcpy(head, text, n);
	head[n] = '\0';
	us = strchr(head, '_');
	if (us) {
		char array[64];

		snprintf(array, sizeof(array), "%.*s", (int)(us - head), head);
		if (!all_digits(array) || !all_digits(us + 1))
			return -EINVAL;
	} else if (!all_digits(head)) {
		return -EINVAL;
	}
	snprintf(job, job_len, "%s", head);
	step[0] = '\0';
	if (dot) {
		const char *s = dot + 1;

		if (!(all_digits(s) || !strcmp(s, "batch") || !strcmp(s, "extern") ||
		      !strcmp(s, "interactive")) ||
		    strlen(s) >= step_len)
			return -EINVAL;
		snprintf(step, step_len, "%s", s);
	}
	return 0;
}

/* Depth-first search below dir for a directory named name; 0 and the path in out. */
static int find_dir(const char *dir, const char *name, int depth, char *out, size_t len)
{
	struct dirent *de;
	DIR *d;
	int err = -ENOENT;

	if (depth > JOB_DIR_DEPTH || !(d = opendir(dir)))
		return -ENOENT;
	while (err && (de = readdir(d))) {
		char path[PATH_MAX];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (!strcmp(de->d_name, name)) {
			snprintf(out, len, "%s", path);
			err = 0;
		} else if (!strncmp(de->d_name, "job_", 4)) {
			continue; /* another job's: never the one */
		} else {
			err = find_dir(path, name, depth + 1, out, len);
		}
	}
	closedir(d);
	return err;
}

int slurm_job_cgroup(const char *job_id, const char *step, char *dir, size_t len, char *why,
		     size_t why_len)
{
	char v1[PATH_MAX], v2[PATH_MAX], name[64], job_dir[PATH_MAX];
	const char *roots[2];
	struct stat st;
	int n = 0;

	memcg_mounts(v1, v2, sizeof(v1));
	/* v1: the memory hierarchy (its charge is the job's); else the unified one */
	if (v1[0])
		roots[n++] = v1;
	if (v2[0])
		roots[n++] = v2;
	snprintf(name, sizeof(name), "job_%s", job_id);
	for (int i = 0; i < n; i++) {
		if (find_dir(roots[i], name, 0, job_dir, sizeof(job_dir)))
			continue;
		if (!step[0] || !strcmp(step, "job")) {
			snprintf(dir, len, "%s", job_dir);
			return 0;
		}
		if (snprintf(dir, len, "%s/step_%s", job_dir, step) < (int)len &&
		    stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		snprintf(why, why_len, "job %s has no step %s on this node (%s/step_%s is not there)",
			 job_id, step, job_dir, step);
		return -ENOENT;
	}
	snprintf(why, why_len, "job %s has no cgroup on this node (no %s under %s%s%s): is it "
		 "running here, and does slurmd use proctrack/cgroup?", job_id, name,
		 n ? roots[0] : "any cgroup mount", n > 1 ? " or " : "", n > 1 ? roots[1] : "");
	return -ENOENT;
}

/* The value of "Key=" in one line of scontrol -o output, up to the next space. */
static bool field(const char *line, const char *key, char *out, size_t len)
{
	char pat[64];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p && !strncmp(line, pat + 1, strlen(pat) - 1))
		p = line - 1;
	if (!p)
		return false;
	p += strlen(pat);
	n = strcspn(p, " \n");
	if (n >= len)
		return false;
	memcpy(out, p, n);
	out[n] = '\0';
	return true;
}

/* SLURM's time: "UNLIMITED", "MM", "MM:SS", "HH:MM:SS", "D-HH[:MM[:SS]]"; false: none known. */
static bool slurm_time_s(const char *t, uint64_t *s)
{
	unsigned long d = 0, f[3] = { 0 };
	const char *dash = strchr(t, '-');
	int n;

	if (dash) {
		d = strtoul(t, NULL, 10);
		t = dash + 1;
		n = sscanf(t, "%lu:%lu:%lu", &f[0], &f[1], &f[2]);
		if (n < 1)
			return false;
		*s = d * 86400 + f[0] * 3600 + f[1] * 60 + f[2];
		return true;
	}
	n = sscanf(t, "%lu:%lu:%lu", &f[0], &f[1], &f[2]);
	if (n == 1)
		*s = f[0] * 60;
	else if (n == 2)
		*s = f[0] * 60 + f[1];
	else if (n == 3)
		*s = f[0] * 3600 + f[1] * 60 + f[2];
	else
		return false;
	return true;
}

int slurm_job_ids(const char *job, const char *step, struct slurm_ids *ids, char *job_id,
		  size_t len)
{
	char cmd[128], *line = NULL, value[64];
	size_t cap = 0;
	FILE *p;
	int status;
	bool found = false;

	memset(ids, 0, sizeof(*ids));
	snprintf(job_id, len, "%s", job);
	/* job is digits and at most one '_' (slurm_job_parse): safe in a shell line */
	snprintf(cmd, sizeof(cmd), "scontrol show job -o %s 2>/dev/null", job);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	if (getline(&line, &cap, p) > 0 && field(line, "JobId", value, sizeof(value))) {
		found = true;
		snprintf(job_id, len, "%s", value);
		ids->job = (uint32_t)strtoul(value, NULL, 10);
		if (field(line, "ArrayJobId", value, sizeof(value))) {
			char task[64];

			ids->array_job = (uint32_t)strtoul(value, NULL, 10);
			if (field(line, "ArrayTaskId", task, sizeof(task)) && all_digits(task)) {
				ids->array_task = (uint32_t)strtoul(task, NULL, 10);
				ids->in_array = true;
			}
		}
		if (field(line, "TimeLimit", value, sizeof(value)))
			ids->time_limit_known = slurm_time_s(value, &ids->time_limit_s);
		snprintf(ids->step, sizeof(ids->step), "%s", step);
		ids->set = true;
	}
	free(line);
	status = pclose(p);
	(void)status;
	/* no scontrol, or it does not know the job: the cgroup alone can still be traced, the ids
	 * unknown; but an array task's own id can only come from it */
	return !found && strchr(job, '_') ? -ENOENT : 0;
}
