/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `unitmeter project`: from a calibration run's units to the SLURM request of the full run
 * (--time, --mem, --cpus-per-task, --tmp, --array), each figure with how it was derived and
 * what the calibration cannot tell.
 */
#ifndef UM_PROJECT_H
#define UM_PROJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

#define UM_PROJECT_MAX_NOTES 12

struct project_options {
	long long units_total;    /* --units N: units of the full run */
	long long tasks;          /* --tasks K; 0: not given */
	long long units_per_task; /* --units-per-task M; 0: not given */
	double margin;            /* >= 1 */
	bool time_max;            /* --time-stat max (default p90) */
	double max_time_s;        /* --max-time; 0: none */
	const char *partition;    /* NULL: none */
};

/* What the calibration measured: one entry per complete unit, plus the runs around them. */
struct project_input {
	double *wall_s;
	/* the unit's wall plus the gap to the next unit's start (the run's timeline); its wall when
	 * the file has no timeline or it is the last */
	double *cycle_s;
	double *cpu_utilisation;
	double *peak_rss_bytes;
	double *peak_charge_bytes; /* the memory cgroup's; < 0: not known */
	double *output_bytes; /* < 0: not recorded */
	size_t n;
	size_t n_incomplete; /* units cut short, left out */
	size_t n_files;
	/* each task's fixed time: before the first unit and after the last, the most of any file
	 * with a run record; fixed_s < 0 when only units streams were given */
	double fixed_s, fixed_before_s, fixed_after_s;
	bool fixed_from_totals; /* units without start times: the run's wall less the units' */
	double group_peak_rss_bytes;    /* the runs' whole-group peak; 0 when unknown */
	double group_peak_charge_bytes; /* the runs' charge peak; < 0 when not known */
	char charge_unknown[256];       /* why some charge is not known; "" when all are */
};

struct projection {
	/* per-unit figures the request is built from */
	bool used_max; /* p90 asked for with too few units, or max asked for */
	double wall_unit_s, wall_median_s, wall_max_s;
	double peak_unit_bytes, peak_median_bytes;
	double cycle_unit_s; /* unit wall + gap to the next, the statistic used */
	bool mem_from_charge; /* --mem from the memory charge (else peak RSS) */
	double charge_unit_bytes, charge_median_bytes; /* < 0: not known */
	double mem_basis_bytes; /* the peak --mem is made from, before the margin */
	double cpu_utilisation_unit;
	double output_unit_bytes; /* < 0: not recorded */
	double fixed_s;           /* time outside the units one task is given; < 0 unknown */
	/* the request */
	long long tasks, units_per_task;
	double time_s;       /* projected, with the margin, before rounding */
	long long time_min;  /* --time, whole minutes */
	long long mem_mib;   /* --mem */
	long long cpus;      /* --cpus-per-task */
	long long tmp_mib;   /* --tmp; 0: nothing written, not requested */
	bool split;          /* --max-time forced more tasks */
	char derivation[5][256]; /* time, mem, cpus, tmp, array */
	char notes[UM_PROJECT_MAX_NOTES][320];
	size_t n_notes;
};

/*
 * Project the request. Returns 0, or -1 with one line in err (no units, no split fits
 * --max-time). Pure: no files, no clocks, so every case can be computed by hand in a test.
 */
int um_project(const struct project_input *in, const struct project_options *opt,
	       struct projection *out, char *err, size_t errlen);

/* "90", "1:30", "2:00:00", "1-12", "1-0:30", "1-00:00:00" (SLURM's forms) in seconds; < 0 bad. */
double um_parse_slurm_time(const char *text);
/* Whole minutes as SLURM writes a time limit: "HH:MM:SS", or "D-HH:MM:SS" from a day on. */
void um_format_slurm_minutes(long long minutes, char *buf, size_t len);

/* The request as an #SBATCH header, each line after a comment saying how it was derived. */
void um_print_sbatch(FILE *out, const struct projection *p, const struct project_options *opt,
		     const char *const *files, size_t n_files);
/* The same figures with their inputs. */
json_t *um_projection_json(const struct projection *p, const struct project_input *in,
			   const struct project_options *opt, const char *const *files,
			   size_t n_files);

/*
 * Load the units of manifests and units streams into in (complete units only; the others are
 * counted). Returns 0, or -1 with one line naming the file and position in err.
 */
int um_project_load(const char *const *files, size_t n_files, struct project_input *in,
		    char *err, size_t errlen);
/* The same in steps, for files a caller has read already: an empty input, then each file's units
 * (um_load_units_doc) and its "run" object (NULL for a stream). */
void um_project_input_init(struct project_input *in);
int um_project_add(struct project_input *in, const char *path, const json_t *units,
		   const json_t *run, char *err, size_t errlen);
void um_project_input_free(struct project_input *in);

#endif
