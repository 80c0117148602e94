// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The projection printed: the #SBATCH header (with --explain, how each figure was derived) and
 * the JSON, both from one derived struct projection; and SLURM's time format, read and written.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/summary.h"
#include "project/project_internal.h"

double um_parse_slurm_time(const char *text)
{
	long long f[4] = { 0 }, days = 0;
	const char *s = text, *dash = strchr(text, '-');
	int nf = 0;
	char *end;

	if (!*s)
		return -1;
	if (dash) {
		if (dash == s || *s == '-')
			return -1;
		errno = 0;
		days = strtoll(s, &end, 10);
		if (errno || end != dash || days < 0 || days > 100000000LL)
			return -1;
		s = dash + 1;
	}
	for (;;) {
		if (nf == 3 || *s < '0' || *s > '9')
			return -1;
		errno = 0;
		f[nf++] = strtoll(s, &end, 10);
		if (errno || f[nf - 1] < 0 || f[nf - 1] > 100000000LL)
			return -1;
		if (*end == '\0')
			break;
		if (*end != ':')
			return -1;
		s = end + 1;
	}
	if (dash) /* days-hours[:minutes[:seconds]] */
		return (double)(((days * 24 + f[0]) * 60 + f[1]) * 60 + f[2]);
	switch (nf) {
	case 1: /* minutes */
		return (double)(f[0] * 60);
	case 2: /* minutes:seconds */
		return (double)(f[0] * 60 + f[1]);
	default: /* hours:minutes:seconds */
		return (double)((f[0] * 60 + f[1]) * 60 + f[2]);
	}
}

void um_format_slurm_minutes(long long minutes, char *buf, size_t len)
{
	long long days = minutes / (24 * 60), rest = minutes % (24 * 60);

	if (days)
		snprintf(buf, len, "%lld-%02lld:%02lld:00", days, rest / 60, rest % 60);
	else
		snprintf(buf, len, "%02lld:%02lld:00", rest / 60, rest % 60);
}

/* Files up to this many are named one by one in the header; more, by their count and ends. */
#define HEADER_FILES_NAMED 3

/* The directory part of path, with its slash ("" where it has none). */
static size_t dir_part(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path + 1) : 0;
}

/*
 * The calibration's files on the header's first line: named where they are a few, else (a
 * job array of hundreds of tasks) their count, the directory they share, and the first and
 * last, so the line stays one a person reads.
 */
static void print_files(FILE *out, const char *const *files, size_t n_files)
{
	size_t dir;

	if (n_files <= HEADER_FILES_NAMED) {
		for (size_t i = 0; i < n_files; i++)
			fprintf(out, " %s", files[i]);
		return;
	}
	dir = dir_part(files[0]);
	for (size_t i = 1; i < n_files && dir; i++)
		if (dir_part(files[i]) != dir || strncmp(files[i], files[0], dir))
			dir = 0;
	fprintf(out, " %zu files", n_files);
	if (dir)
		fprintf(out, " in %.*s", (int)dir, files[0]);
	fprintf(out, " (%s ... %s)", files[0] + dir, files[n_files - 1] + dir);
}

/*
 * text as comment lines of at most UM_HEADER_WIDTH columns: the first after lead, the others
 * after "#   ", broken at spaces (a word longer than a line, a long path, is cut).
 */
static void print_comment(FILE *out, const char *lead, const char *text)
{
	const char *cont = "#   ";
	size_t room = UM_HEADER_WIDTH - strlen(lead);

	fputs(lead, out);
	while (strlen(text) > room) {
		size_t cut = room;

		while (cut > 0 && text[cut] != ' ')
			cut--;
		if (cut == 0)
			cut = room; /* one word longer than the line */
		fprintf(out, "%.*s\n%s", (int)cut, text, cont);
		text += cut;
		while (*text == ' ')
			text++;
		room = UM_HEADER_WIDTH - strlen(cont);
	}
	fprintf(out, "%s\n", text);
}

/* One #SBATCH line's comment: its brief line or two, or with --explain its derivation. */
static void print_derivation(FILE *out, const struct projection *p, const struct project_options *opt,
			     size_t line, const char *lead)
{
	if (opt->explain) {
		print_comment(out, lead, p->derivation[line]);
		return;
	}
	print_comment(out, lead, p->brief[line][0]);
	if (p->brief[line][1][0])
		print_comment(out, "#   ", p->brief[line][1]);
}

/* The first line: the request's shape and the calibration's files. */
static void print_title(FILE *out, const struct projection *p, const struct project_options *opt,
			const char *const *files, size_t n_files)
{
	char *title = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&title, &len);

	if (!mem)
		return;
	fprintf(mem, "%lld units in %lld array task%s of %lld units, from", opt->units_total,
		p->tasks, p->tasks == 1 ? "" : "s", p->units_per_task);
	print_files(mem, files, n_files);
	fclose(mem);
	print_comment(out, "# unitmeter project: ", title);
	free(title);
}

void um_print_sbatch(FILE *out, const struct projection *p, const struct project_options *opt,
		     const char *const *files, size_t n_files)
{
	char time[32], line[64];

	um_format_slurm_minutes(p->time_min, time, sizeof(time));
	fprintf(out, "#!/bin/bash\n");
	print_title(out, p, opt, files, n_files);
	/* comments on lines of their own: sbatch reads only the option on an #SBATCH line */
	print_derivation(out, p, opt, 0, "# --time: ");
	for (size_t i = 0; opt->explain && i < sizeof(p->time_parts) / sizeof(p->time_parts[0]); i++)
		print_comment(out, "#   ", p->time_parts[i]);
	fprintf(out, "#SBATCH --time=%s\n", time);
	print_derivation(out, p, opt, 1, "# --mem: ");
	if (p->mem_from_charge)
		print_comment(out, "#   ", "memory (cgroup): what SLURM enforces --mem on; a page "
			      "shared by forked processes counts once, page cache included");
	fprintf(out, "#SBATCH --mem=%lldM\n", p->mem_mib);
	print_derivation(out, p, opt, 2, "# --cpus-per-task: ");
	fprintf(out, "#SBATCH --cpus-per-task=%lld\n", p->cpus);
	print_derivation(out, p, opt, 3, p->tmp_mib ? "# --tmp: " : "# ");
	if (p->tmp_mib)
		fprintf(out, "#SBATCH --tmp=%lldM\n", p->tmp_mib);
	print_derivation(out, p, opt, 4, "# --array: ");
	fprintf(out, "#SBATCH --array=0-%lld\n", p->tasks - 1);
	if (p->gpus) {
		print_comment(out, "# --gres: ", p->gres_derivation);
		snprintf(line, sizeof(line), "#SBATCH --gres=gpu:%lld", p->gpus);
		fprintf(out, "%s\n", line);
		print_comment(out, "# ", p->gpu_mem_line);
		if (p->gpu_workers_line[0])
			print_comment(out, "# ", p->gpu_workers_line);
	}
	if (opt->partition)
		fprintf(out, "#SBATCH --partition=%s\n", opt->partition);
	for (size_t i = 0; i < p->n_notes; i++)
		print_comment(out, "# note: ", p->notes[i]);
	if (!opt->explain)
		fprintf(out, "# (unitmeter project --explain: how each figure was derived)\n");
}

/* The time model's parts and what each was measured from (see project_time.c); limit_by: which
 * of the margin and the quantile made --time. */
static json_t *time_model_json(const struct projection *p, const struct project_input *in,
			       double margin)
{
	const struct time_model *m = &p->model;
	const struct task_time *t = &p->task;

	/* o? takes a new reference or NULL, which packs as null */
	return json_pack("{s:f, s:{s:I, s:I, s:I, s:o?, s:o?, s:o?, s:f, s:b, s:f}, "
			 "s:{s:o?, s:o?, s:I, s:b, s:I}, "
			 "s:{s:I, s:f, s:f, s:f, s:f, s:s, s:o?, s:f, s:f, s:f}, s:f, s:f, s:I, s:s}",
			 "fixed_s", m->fixed_s,
			 "warmup",
			 "processes_tested", (json_int_t)m->tested_processes,
			 "processes_warmed", (json_int_t)m->warmup_processes,
			 "units", (json_int_t)m->warmup_units,
			 "threshold_s", m->tested_processes ? json_real(m->warmup_threshold_s) : NULL,
			 "later_max_s", m->tested_processes ? json_real(m->warmup_later_max_s) : NULL,
			 "later_kept_bytes", isfinite(m->warmup_later_kept_bytes)
				? json_real(m->warmup_later_kept_bytes) : NULL,
			 "max_excess_s", m->warmup_max_s,
			 "workers_replaced", m->workers_replaced,
			 "task_s", t->warmup_s,
			 "workers",
			 "calibrated", in->workers_calibrated
				? json_integer(in->workers_calibrated) : NULL,
			 "calibrated_share", in->workers_calibrated
				? json_real(in->workers_share) : NULL,
			 "used", (json_int_t)t->workers,
			 "given", m->workers_given,
			 "processes", (json_int_t)in->n_processes,
			 "units",
			 "steady", (json_int_t)m->steady_n,
			 "mean_s", m->unit_mean_s,
			 "sd_s", m->unit_sd_s,
			 "p90_s", m->unit_p90_s,
			 "max_s", m->unit_max_s,
			 "sum_stat", m->bound ? "max" : "p90",
			 "z", m->bound ? NULL : json_real(t->z),
			 "sum_s", t->units_sum_s,
			 "per_worker_s", t->spread_s,
			 "tail_s", t->tail_s,
			 "total_s", t->total_s,
			 "quantile_s", t->quantile_s,
			 "tasks", (json_int_t)t->tasks,
			 "limit_by", t->quantile_s > t->total_s * margin ? "quantile" : "margin");
}

/* What the projection was made from: the files, the units, the options asked. */
static json_t *inputs_json(const struct project_input *in, const struct project_options *opt,
			   const char *const *files, size_t n_files)
{
	json_t *inputs = json_object(), *names;

	names = json_array();
	for (size_t i = 0; i < n_files; i++)
		json_array_append_new(names, json_string(files[i]));
	json_object_set_new(inputs, "files", names);
	json_object_set_new(inputs, "units_calibrated", json_integer((json_int_t)in->n));
	json_object_set_new(inputs, "units_incomplete", json_integer((json_int_t)in->n_incomplete));
	json_object_set_new(inputs, "units_total", json_integer(opt->units_total));
	json_object_set_new(inputs, "tasks_asked", opt->tasks ? json_integer(opt->tasks) : json_null());
	json_object_set_new(inputs, "units_per_task_asked",
			    opt->units_per_task ? json_integer(opt->units_per_task) : json_null());
	json_object_set_new(inputs, "margin", json_real(opt->margin));
	json_object_set_new(inputs, "time_stat", json_string(opt->time_max ? "max" : "p90"));
	json_object_set_new(inputs, "max_time_s",
			    opt->max_time_s > 0 ? json_real(opt->max_time_s) : json_null());
	json_object_set_new(inputs, "tmp_dir", in->tmp_dir[0] ? json_string(in->tmp_dir)
							      : json_null());
	return inputs;
}

/* A unit's figures as the projection took them, and the run-wide ones beside them. */
static json_t *per_unit_json(const struct projection *p, const struct project_input *in)
{
	json_t *unit = json_object();

	json_object_set_new(unit, "stat_used", json_string(p->used_max ? "max" : "p90"));
	json_object_set_new(unit, "wall_s", json_real(p->wall_unit_s));
	json_object_set_new(unit, "wall_s_median", json_real(p->wall_median_s));
	json_object_set_new(unit, "wall_s_max", json_real(p->wall_max_s));
	json_object_set_new(unit, "peak_rss_bytes_max", json_integer((json_int_t)p->peak_unit_bytes));
	json_object_set_new(unit, "peak_rss_bytes_median",
			    json_integer((json_int_t)p->peak_median_bytes));
	json_object_set_new(unit, "run_peak_rss_bytes",
			    in->group_peak_rss_bytes > 0
				    ? json_integer((json_int_t)in->group_peak_rss_bytes)
				    : json_null());
	json_object_set_new(unit, "cpu_utilisation", json_real(p->cpu_utilisation_unit));
	json_object_set_new(unit, "output_bytes_max",
			    p->output_unit_bytes >= 0 ? json_integer((json_int_t)p->output_unit_bytes)
						      : json_null());
	json_object_set_new(unit, "tmp_output_bytes_max",
			    p->tmp_unit_bytes >= 0 ? json_integer((json_int_t)p->tmp_unit_bytes)
						   : json_null());
	json_object_set_new(unit, "unit_time_s", json_real(p->cycle_unit_s));
	json_object_set_new(unit, "fixed_s", p->fixed_s >= 0 ? json_real(p->fixed_s) : json_null());
	json_object_set_new(unit, "fixed_before_first_unit_s",
			    p->fixed_s >= 0 && !in->fixed_from_totals ? json_real(in->fixed_before_s)
								      : json_null());
	json_object_set_new(unit, "fixed_after_last_unit_s",
			    p->fixed_s >= 0 && !in->fixed_from_totals ? json_real(in->fixed_after_s)
								      : json_null());
	json_object_set_new(unit, "peak_charge_bytes_max",
			    p->charge_unit_bytes >= 0 ? json_integer((json_int_t)p->charge_unit_bytes)
						      : json_null());
	json_object_set_new(unit, "peak_charge_bytes_median",
			    p->charge_median_bytes >= 0
				    ? json_integer((json_int_t)p->charge_median_bytes)
				    : json_null());
	json_object_set_new(unit, "run_peak_charge_bytes",
			    p->mem_from_charge && in->group_peak_charge_bytes >= 0
				    ? json_integer((json_int_t)in->group_peak_charge_bytes)
				    : json_null());
	json_object_set_new(unit, "mem_from", json_string(p->mem_from_charge ? "charge" : "rss"));
	json_object_set_new(unit, "gpu_units", json_integer((json_int_t)in->gpu_units));
	json_object_set_new(unit, "gpu_devices_max",
			    p->gpus ? json_integer(p->gpus) : json_null());
	json_object_set_new(unit, "peak_gpu_device_bytes_max",
			    p->gpus ? json_integer((json_int_t)in->gpu_device_peak_max_bytes)
				    : json_null());
	json_object_set_new(unit, "gpu_context_bytes_max",
			    p->gpus && in->gpu_context_max_bytes >= 0
				    ? json_integer((json_int_t)in->gpu_context_max_bytes)
				    : json_null());
	json_object_set_new(unit, "run_peak_gpu_device_bytes",
			    p->gpus && in->run_gpu_device_peak_bytes >= 0
				    ? json_integer((json_int_t)in->run_gpu_device_peak_bytes)
				    : json_null());
	json_object_set_new(unit, "gpu_preallocated",
			    p->gpus ? json_boolean(p->gpu_preallocated) : json_null());
	return unit;
}

/* The request: what #SBATCH asks, in numbers. */
static json_t *request_json(const struct projection *p, const struct project_input *in,
			    const struct project_options *opt)
{
	json_t *req = json_object();
	char time[32];

	um_format_slurm_minutes(p->time_min, time, sizeof(time));
	json_object_set_new(req, "time", json_string(time));
	json_object_set_new(req, "time_minutes", json_integer(p->time_min));
	json_object_set_new(req, "time_s_projected", json_real(p->time_s));
	json_object_set_new(req, "mem_mib", json_integer(p->mem_mib));
	json_object_set_new(req, "mem_per_added_worker_bytes",
			    p->mem_per_worker_bytes > 0
				    ? json_integer((json_int_t)p->mem_per_worker_bytes)
				    : json_null());
	json_object_set_new(req, "cpus_per_task", json_integer(p->cpus));
	json_object_set_new(req, "tmp_mib", p->tmp_mib ? json_integer(p->tmp_mib) : json_null());
	/* requested, below_threshold (under tmp_threshold_bytes a task) or not_measured */
	json_object_set_new(req, "tmp_decision", json_string(p->tmp_decision));
	json_object_set_new(req, "tmp_task_bytes", p->tmp_task_bytes >= 0
				    ? json_integer((json_int_t)ceil(p->tmp_task_bytes)) : json_null());
	json_object_set_new(req, "tmp_threshold_bytes",
			    json_integer((json_int_t)UM_TMP_REQUEST_MIN_BYTES));
	json_object_set_new(req, "tasks", json_integer(p->tasks));
	json_object_set_new(req, "units_per_task", json_integer(p->units_per_task));
	json_object_set_new(req, "array", json_sprintf("0-%lld", p->tasks - 1));
	json_object_set_new(req, "partition", opt->partition ? json_string(opt->partition) : json_null());
	json_object_set_new(req, "split_for_max_time", json_boolean(p->split));
	json_object_set_new(req, "gres", p->gpus ? json_sprintf("gpu:%lld", p->gpus) : json_null());
	json_object_set_new(req, "gpus", p->gpus ? json_integer(p->gpus) : json_null());
	json_object_set_new(req, "gpu_mem_per_gpu_bytes",
			    p->gpus ? json_integer((json_int_t)ceil(p->gpu_mem_bytes)) : json_null());
	/* false: NVML's context and pools are in it */
	json_object_set_new(req, "gpu_mem_traced_only",
			    p->gpus ? json_boolean(in->gpu_context_max_bytes < 0) : json_null());
	return req;
}

/* How each figure of the request was derived, in words. */
static json_t *derivation_json(const struct projection *p)
{
	json_t *deriv = json_object(), *parts;

	json_object_set_new(deriv, "time", json_string(p->derivation[0]));
	parts = json_array();
	for (size_t i = 0; i < sizeof(p->time_parts) / sizeof(p->time_parts[0]); i++)
		json_array_append_new(parts, json_string(p->time_parts[i]));
	json_object_set_new(deriv, "time_parts", parts);
	json_object_set_new(deriv, "mem", json_string(p->derivation[1]));
	json_object_set_new(deriv, "cpus_per_task", json_string(p->derivation[2]));
	json_object_set_new(deriv, "tmp", json_string(p->derivation[3]));
	json_object_set_new(deriv, "array", json_string(p->derivation[4]));
	json_object_set_new(deriv, "gres", p->gpus ? json_string(p->gres_derivation) : json_null());
	json_object_set_new(deriv, "gpu_mem", p->gpus ? json_string(p->gpu_mem_line) : json_null());
	json_object_set_new(deriv, "gpu_workers",
			    p->gpu_workers_line[0] ? json_string(p->gpu_workers_line) : json_null());
	return deriv;
}

json_t *um_projection_json(const struct projection *p, const struct project_input *in,
			   const struct project_options *opt, const char *const *files,
			   size_t n_files)
{
	json_t *root = json_object(), *notes = json_array();

	for (size_t i = 0; i < p->n_notes; i++)
		json_array_append_new(notes, json_string(p->notes[i]));
	json_object_set_new(root, "inputs", inputs_json(in, opt, files, n_files));
	json_object_set_new(root, "time_model", time_model_json(p, in, opt->margin));
	json_object_set_new(root, "per_unit", per_unit_json(p, in));
	json_object_set_new(root, "request", request_json(p, in, opt));
	json_object_set_new(root, "derivation", derivation_json(p));
	json_object_set_new(root, "notes", notes);
	return root;
}

