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
#include "files/units_file.h"

#define UM_PROJECT_MAX_NOTES 14
/* A process's leading unit is warm-up when slower than this many times the median of the later
 * units (and than the slowest of them): a first fit 1.5x the rest is a cost of its own. */
#define UM_WARMUP_FACTOR 1.5
/* A leading unit that left its process this much more memory than any later unit did loaded
 * something once (imports, caches): warm-up, though a big later unit ran as long. */
#define UM_WARMUP_KEPT_BYTES (1024.0 * 1024.0)
/* JAX preallocates 75% of a device at its first operation: a block of at least this much, the
 * same in every unit and the run's own peak, is taken for one (a fit this size varies) */
#define UM_GPU_PREALLOC_MIN_BYTES (2.0 * 1024 * 1024 * 1024)
/* --tmp is asked only from this much node-local scratch a task: on the many clusters with no
 * node-local scratch configured (TmpDisk=0) any --tmp leaves the job pending for ever */
#define UM_TMP_REQUEST_MIN_BYTES (64.0 * 1024 * 1024)
/* The header's comment lines are at most this many columns: a terminal's or a editor's width */
#define UM_HEADER_WIDTH 100

struct project_options {
	long long units_total;    /* --units N: units of the full run */
	long long tasks;          /* --tasks K; 0: not given */
	long long units_per_task; /* --units-per-task M; 0: not given */
	double margin;            /* >= 1 */
	bool time_max;            /* --time-stat max (default p90) */
	double max_time_s;        /* --max-time; 0: none */
	const char *partition;    /* NULL: none */
	long long workers;        /* --workers W: units a task runs at once; 0: as calibrated */
	bool explain;             /* --explain: the header carries each figure's whole derivation */
};

/* What the calibration measured: one entry per complete unit, plus the runs around them. */
struct project_input {
	double *wall_s;
	/* the unit's wall plus the gap to the next start of a unit in the same process (what one
	 * unit costs a worker); its wall when the file has no start times or it is the last */
	double *cycle_s;
	/* the process that ran it (an id unique across files; NULL or -1: unknown) and its place
	 * among that process's units, in the order they ran (0: its first) */
	long long *process;
	long long *rank;
	/* what the unit left its process holding: the RSS its process's next unit started with, less
	 * its own start; NAN where not known (its process's last, no start RSS). Warm-up keeps what
	 * it loads (imports, caches), a steady unit gives back what it used */
	double *kept_bytes;
	double *cpu_utilisation;
	double *peak_rss_bytes;
	double *peak_charge_bytes; /* the memory cgroup's; < 0: not known */
	double *output_bytes; /* < 0: not recorded */
	size_t n;
	size_t cap; /* the arrays' room, grown by doubling: 200 files add 200 times */
	size_t n_incomplete; /* units cut short, left out */
	size_t n_files;
	/* each task's fixed time: before the first unit and after the last, the most of any file
	 * with a run record; fixed_s < 0 when only units streams were given */
	double fixed_s, fixed_before_s, fixed_after_s;
	bool fixed_from_totals; /* units without start times: the run's wall less the units' */
	double group_peak_rss_bytes;    /* the runs' whole-group peak; 0 when unknown */
	double group_peak_charge_bytes; /* the runs' charge peak; < 0 when not known */
	char charge_unknown[256];       /* why some charge is not known; "" when all are */
	/* units that ran at once: the most that held for at least half the time any unit ran (the
	 * most of any file), and that share; 0 when no file has start times */
	long long workers_calibrated;
	double workers_share;
	size_t n_processes; /* distinct processes that ran complete units */
	/* the charge (RSS) before the first process that ran units began: what workers add to; 0
	 * when the command's own process ran units, < 0 when not known; the lowest of any file */
	double worker_base_charge_bytes, worker_base_rss_bytes;
	/* device memory through the CUDA driver API (peak_gpu_bytes_by_device) */
	size_t gpu_units;                 /* complete units that held any on some device */
	size_t gpu_units_device_unknown;  /* of those, units whose gpu_devices is null */
	long long gpu_devices_max;        /* the most devices one unit held it on */
	double gpu_device_peak_max_bytes; /* the largest peak of one unit on one device */
	double gpu_device_peak_min_bytes; /* the smallest such unit peak (its largest device) */
	double gpu_context_max_bytes;     /* the largest context and pools NVML read; < 0: none */
	double run_gpu_device_peak_bytes; /* the runs' largest peak on one device; < 0 unknown */
	/* bytes a unit wrote under the node-local tmp dir (tmp_output_bytes): the largest of the
	 * tmp_units complete units that carry the figure; --tmp is made from it only when every
	 * unit does */
	double tmp_unit_max_bytes;
	size_t tmp_units;
	char tmp_dir[256];      /* the directory the first manifest counted under; "" unknown */
	bool tmp_dirs_differ;   /* manifests counted under different directories */
	char tmp_unknown[320];  /* why some unit has no figure (the first file's reason) */
};

/*
 * How a task's time is made up: fixed + warm-up + the units spread over the workers + the tail.
 * Computed from the calibration by um_time_model, for any number of units by um_task_time.
 */
struct time_model {
	double fixed_s;                 /* before the first unit and after the last; 0 unknown */
	/* warm-up: a process's leading units markedly slower than its later ones */
	size_t tested_processes;        /* processes with two or more units, where it can be told */
	size_t warmup_processes;        /* of those, the ones that warmed up */
	size_t warmup_units;
	double warmup_threshold_s;      /* a warm-up unit is slower than this (1.5x the median) */
	double warmup_later_max_s;      /* and slower than this, the slowest later unit, */
	double warmup_later_kept_bytes; /* or kept UM_WARMUP_KEPT_BYTES more than any later unit
					 * (NAN: not known) */
	double warmup_max_s;            /* the largest process's excess over the steady mean */
	double warmup_per_unit_s;       /* all processes' excess over all units: replaced workers */
	bool workers_replaced;          /* more processes ran units than ran at once */
	/* the steady units: every complete unit but the warm-up ones */
	size_t steady_n;
	double unit_mean_s, unit_sd_s, unit_p90_s, unit_max_s;
	bool bound;                     /* --time-stat max: every unit as slow as the slowest */
	long long workers;              /* used: --workers, else as calibrated, else 1 */
	bool workers_given;
};

/*
 * One task of `units` units (of `tasks` alike) under the model, in seconds, before the margin.
 * The request is the larger of the margin over the expected time and the sum's upper quantile
 * (um_task_request_s): both are headroom over the same expectation, so one covers the other.
 */
struct task_time {
	long long workers;  /* min(model's workers, units) */
	long long tasks;    /* the array's tasks: the quantile is for all of them at once */
	double warmup_s;
	double units_sum_s; /* the expected sum of the units' times: N x mean (the bound: N x max) */
	double spread_s;    /* units_sum_s over the workers */
	double tail_s;      /* the last units end one by one: (W-1)/W x a p90 unit */
	double total_s;     /* expected: fixed + warm-up + spread + tail */
	double z;           /* every task within the quantile 9 times in 10: 0.9^(1/tasks) */
	double quantile_s;  /* total_s + z x sd x sqrt(N) / W; total_s for the bound */
};

struct projection {
	/* per-unit figures the request is built from */
	bool used_max; /* p90 asked for with too few units, or max asked for */
	double wall_unit_s, wall_median_s, wall_max_s;
	double peak_unit_bytes, peak_median_bytes;
	double cycle_unit_s; /* unit wall + gap to the next, the statistic used */
	struct time_model model;
	struct task_time task; /* the task as asked, before the margin */
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
	long long tmp_mib;   /* --tmp; 0: not requested (tmp_decision says why) */
	double tmp_unit_bytes; /* the most a unit wrote under the tmp dir; < 0: not known */
	double tmp_task_bytes; /* a task's: units x that x margin; < 0: not known */
	const char *tmp_decision; /* "requested", "below_threshold" or "not_measured" */
	bool split;          /* --max-time forced more tasks */
	char derivation[5][320]; /* time, mem, cpus, tmp, array */
	/* the same, as the short header says them: a line or two each ("" none) */
	char brief[5][2][200];
	char time_parts[4][400]; /* the time's parts: fixed, warm-up, units, workers and tail */
	double mem_per_worker_bytes; /* --workers above the calibrated: each added worker's; else 0 */
	/* GPUs: 0 when no unit held device memory (no --gres line) */
	long long gpus;               /* --gres=gpu:N, the most devices a unit used */
	double gpu_mem_bytes;         /* device memory per GPU one unit needs, with the margin */
	char gres_derivation[400];
	char gpu_mem_line[400];
	char gpu_workers_line[400];   /* "" with one worker */
	bool gpu_preallocated;        /* one block of most of a device, as JAX preallocates */
	char notes[UM_PROJECT_MAX_NOTES][320];
	size_t n_notes;
};

/*
 * Project the request. Returns 0, or -1 with one line in err (no units, no split fits
 * --max-time). Pure: no files, no clocks, so every case can be computed by hand in a test.
 */
int um_project(const struct project_input *in, const struct project_options *opt,
	       struct projection *out, char *err, size_t errlen);

/* The q-th percentile (0..100) of n > 0 values, which keep their order (um_percentile sorts). */
double um_percentile_of(const double *v, size_t n, double q);

/* The time model of a calibration (pure, like um_project; -1 out of memory), and one task's
 * time under it. */
int um_time_model(const struct project_input *in, const struct project_options *opt,
		   struct time_model *tm);
void um_task_time(const struct time_model *tm, long long units, long long tasks,
		  struct task_time *tt);
/* The task's time limit before rounding: max(margin x expected, the quantile). */
double um_task_request_s(const struct task_time *tt, double margin);
/* x with P(Z <= x) = p for a standard normal Z, 0.5 <= p < 1. */
double um_normal_quantile(double p);

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
/* The same in steps, for files a caller has read already: an empty input, then each file's n
 * units (um_read_units) and its "run" object (NULL for a stream). */
void um_project_input_init(struct project_input *in);
/* Room for n units at once, when the caller knows how many it will add: no array grown by
 * doubling past them (the page at a million units). Returns 0, or -1 out of memory. */
int um_project_input_reserve(struct project_input *in, size_t n);
int um_project_add(struct project_input *in, const char *path, const struct um_read_unit *units,
		   size_t n, const json_t *run, char *err, size_t errlen);
void um_project_input_free(struct project_input *in);

#endif
