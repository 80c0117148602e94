/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The keys of a manifest around its units (a unit's own are common/unit_keys.h): one table per
 * object, one line per key, X(NAME, "key"). Each line makes the constant NAME that the writer
 * (record/, trace/hw.c, common/summary.c) and every reader (files/, project/, page/) use, so a
 * key misspelt on one side does not compile, where a literal would have read a null. The
 * tables themselves are checked by manifest::the_keys_written_and_documented_are_the_tables:
 * what a run writes is in them, and the man page's key sections name every key in them.
 */
#ifndef UM_MANIFEST_KEYS_H
#define UM_MANIFEST_KEYS_H

/* the manifest itself */
#define UM_MANIFEST_KEYS(X)                                                                        \
	X(UM_MANIFEST_SCHEMA, "schema")                                                            \
	X(UM_MANIFEST_TOOL, "tool")                                                                \
	X(UM_MANIFEST_MODE, "mode")                                                                \
	X(UM_MANIFEST_COMMAND, "command")                                                          \
	X(UM_MANIFEST_UNIT_SPECS, "unit_specs")                                                    \
	X(UM_MANIFEST_HARDWARE, "hardware")                                                        \
	X(UM_MANIFEST_UNITS, "units")                                                              \
	X(UM_MANIFEST_SUMMARY, "summary")                                                          \
	X(UM_MANIFEST_RUN, "run")

/* "tool" */
#define UM_TOOL_KEYS(X)                                                                            \
	X(UM_TOOL_NAME, "name")                                                                    \
	X(UM_TOOL_VERSION, "version")

/* each of "unit_specs" */
#define UM_SPEC_KEYS(X)                                                                            \
	X(UM_SPEC_INDEX, "index")                                                                  \
	X(UM_SPEC_SPEC, "spec")                                                                    \
	X(UM_SPEC_KIND, "kind")                                                                    \
	X(UM_SPEC_MODULE, "module")                                                                \
	X(UM_SPEC_QUALNAME, "qualname")                                                            \
	X(UM_SPEC_PATH, "path")                                                                    \
	X(UM_SPEC_SYMBOL, "symbol")                                                                \
	X(UM_SPEC_VERSION, "version")

/* "run": the whole tracked group; its GPU figures are named as a unit's are (unit_keys.h) */
#define UM_RUN_KEYS(X)                                                                             \
	X(UM_RUN_WALL_S, "wall_s")                                                                 \
	X(UM_RUN_CPU_S, "cpu_s")                                                                   \
	X(UM_RUN_PEAK_RSS_BYTES, "peak_rss_bytes")                                                 \
	X(UM_RUN_PAGE_ALLOC_BYTES, "page_alloc_bytes")                                             \
	X(UM_RUN_OUTPUT_BYTES, "output_bytes")                                                     \
	X(UM_RUN_TMP_OUTPUT_BYTES, "tmp_output_bytes")                                             \
	X(UM_RUN_TMP_DIR, "tmp_dir")                                                               \
	X(UM_RUN_PROCESSES, "processes")                                                           \
	X(UM_RUN_EXIT_STATUS, "exit_status")                                                       \
	X(UM_RUN_EXIT_SIGNAL, "exit_signal")                                                       \
	X(UM_RUN_OOM_KILLS, "oom_kills")                                                           \
	X(UM_RUN_LOST_EVENTS, "lost_events")                                                       \
	X(UM_RUN_MAP_FULL_EVENTS, "map_full_events")                                               \
	X(UM_RUN_SCOPE_OVERFLOWS, "scope_overflows")                                               \
	X(UM_RUN_THREAD_COLLISIONS, "thread_collisions")                                           \
	X(UM_RUN_ORPHAN_SLICES, "orphan_slices")                                                   \
	X(UM_RUN_SWITCH_IN_MISSES, "switch_in_misses")                                             \
	X(UM_RUN_BPF, "bpf")                                                                       \
	X(UM_RUN_TRACING, "tracing")                                                               \
	X(UM_RUN_PEAK_CHARGE_BYTES, "peak_charge_bytes")                                           \
	X(UM_RUN_CHARGE, "charge")                                                                 \
	X(UM_RUN_PEAK_GPU_BYTES, "peak_gpu_bytes")                                                 \
	X(UM_RUN_PEAK_GPU_MANAGED_BYTES, "peak_gpu_managed_bytes")                                 \
	X(UM_RUN_GPU_DEVICES, "gpu_devices")                                                       \
	X(UM_RUN_PEAK_GPU_BY_DEVICE, "peak_gpu_bytes_by_device")                                   \
	X(UM_RUN_PEAK_GPU_TOTAL_BYTES, "peak_gpu_total_bytes")                                     \
	X(UM_RUN_GPU_CONTEXT_BYTES, "gpu_context_bytes")                                           \
	X(UM_RUN_GPU, "gpu")                                                                       \
	X(UM_RUN_LIMITS, "limits")                                                                 \
	X(UM_RUN_STARTED_AT, "started_at")                                                         \
	X(UM_RUN_MEMORY_TIMELINE, "memory_timeline")                                               \
	X(UM_RUN_PER_PROCESS, "per_process")                                                       \
	X(UM_RUN_PYTHON, "python")

/* "run.tmp_dir" */
#define UM_TMP_DIR_KEYS(X)                                                                         \
	X(UM_TMP_DIR_PATH, "path")                                                                 \
	X(UM_TMP_DIR_SOURCE, "source")                                                             \
	X(UM_TMP_DIR_NOTE, "note")

/* "run.bpf", its "switch_ins_unseen" and each thread of that one's "after" */
#define UM_BPF_KEYS(X)                                                                             \
	X(UM_BPF_RECURSION_MISSES, "recursion_misses")                                             \
	X(UM_BPF_HANDOVER_TIMEOUTS, "handover_timeouts")                                           \
	X(UM_BPF_SWITCH_INS_UNSEEN, "switch_ins_unseen")
#define UM_UNSEEN_KEYS(X)                                                                          \
	X(UM_UNSEEN_MADE_LATE, "made_late")                                                        \
	X(UM_UNSEEN_AT_CLOSE, "at_close")                                                          \
	X(UM_UNSEEN_AT_CLOSE_EXACT, "at_close_exact")                                              \
	X(UM_UNSEEN_AFTER, "after")
#define UM_UNSEEN_AFTER_KEYS(X)                                                                    \
	X(UM_UNSEEN_AFTER_TID, "tid")                                                              \
	X(UM_UNSEEN_AFTER_PID, "pid")                                                              \
	X(UM_UNSEEN_AFTER_COMM, "comm")                                                            \
	X(UM_UNSEEN_AFTER_COUNT, "count")

/* "run.tracing" */
#define UM_TRACING_KEYS(X)                                                                         \
	X(UM_TRACING_BUILD, "build")                                                               \
	X(UM_TRACING_THREAD_RSS_CACHES, "thread_rss_caches")                                       \
	X(UM_TRACING_LOCK_TIMEOUTS, "lock_timeouts")                                               \
	X(UM_TRACING_UPROBE_LINKS, "uprobe_links")                                                 \
	X(UM_TRACING_SYSCALL_HOOKS, "syscall_hooks")                                               \
	X(UM_TRACING_PROGRAMS, "programs")

/* "run.charge" */
#define UM_CHARGE_KEYS(X)                                                                          \
	X(UM_CHARGE_CGROUP, "cgroup")                                                              \
	X(UM_CHARGE_CGROUP_VERSION, "cgroup_version")                                              \
	X(UM_CHARGE_MADE_FOR_RUN, "made_for_run")                                                  \
	X(UM_CHARGE_NOTE, "note")

/* "run.gpu": how the device memory was traced, or why not */
#define UM_GPU_KEYS(X)                                                                             \
	X(UM_GPU_LIBRARY, "library")                                                               \
	X(UM_GPU_CALLS, "calls")                                                                   \
	X(UM_GPU_FAILED_CALLS, "failed_calls")                                                     \
	X(UM_GPU_UNKNOWN_FREES, "unknown_frees")                                                   \
	X(UM_GPU_FIGURES, "figures")                                                               \
	X(UM_GPU_REASON, "reason")                                                                 \
	X(UM_GPU_NVML, "nvml")

/* "run.limits": what the run ran under */
#define UM_LIMITS_KEYS(X)                                                                          \
	X(UM_LIMITS_SLURM_JOB_ID, "slurm_job_id")                                                  \
	X(UM_LIMITS_SLURM_ARRAY_JOB_ID, "slurm_array_job_id")                                      \
	X(UM_LIMITS_SLURM_ARRAY_TASK_ID, "slurm_array_task_id")                                    \
	X(UM_LIMITS_SLURM_STEP_ID, "slurm_step_id")                                                \
	X(UM_LIMITS_TIME_LIMIT_S, "time_limit_s")                                                  \
	X(UM_LIMITS_CPUS, "cpus")                                                                  \
	X(UM_LIMITS_NODE, "node")                                                                  \
	X(UM_LIMITS_MEMORY_LIMIT_BYTES, "memory_limit_bytes")                                      \
	X(UM_LIMITS_MEMORY_LIMIT_CGROUP, "memory_limit_cgroup")

/* "run.memory_timeline" */
#define UM_TIMELINE_KEYS(X)                                                                        \
	X(UM_TIMELINE_START_NS, "start_ns")                                                        \
	X(UM_TIMELINE_BUCKET_NS, "bucket_ns")                                                      \
	X(UM_TIMELINE_BUCKETS, "buckets")                                                          \
	X(UM_TIMELINE_RSS_MIN_BYTES, "rss_min_bytes")                                              \
	X(UM_TIMELINE_RSS_MAX_BYTES, "rss_max_bytes")                                              \
	X(UM_TIMELINE_CHARGE_MIN_BYTES, "charge_min_bytes")                                        \
	X(UM_TIMELINE_CHARGE_MAX_BYTES, "charge_max_bytes")                                        \
	X(UM_TIMELINE_OVERRUNS, "overruns")

/* each of "run.per_process" */
#define UM_PROCESS_KEYS(X)                                                                         \
	X(UM_PROCESS_PID, "pid")                                                                   \
	X(UM_PROCESS_PPID, "ppid")                                                                 \
	X(UM_PROCESS_COMM, "comm")                                                                 \
	X(UM_PROCESS_START_NS, "start_ns")                                                         \
	X(UM_PROCESS_CPU_S, "cpu_s")                                                               \
	X(UM_PROCESS_PEAK_RSS_BYTES, "peak_rss_bytes")                                             \
	X(UM_PROCESS_PAGE_ALLOC_BYTES, "page_alloc_bytes")                                         \
	X(UM_PROCESS_OUTPUT_BYTES, "output_bytes")                                                 \
	X(UM_PROCESS_THREADS, "threads")                                                           \
	X(UM_PROCESS_TMP_OUTPUT_BYTES, "tmp_output_bytes")                                         \
	X(UM_PROCESS_UNITS, "units")                                                               \
	X(UM_PROCESS_UNITS_CPU_S, "units_cpu_s")                                                   \
	X(UM_PROCESS_UNITS_PEAK_RSS_BYTES, "units_peak_rss_bytes")                                 \
	X(UM_PROCESS_STATUS, "status")                                                             \
	X(UM_PROCESS_END_NS, "end_ns")                                                             \
	X(UM_PROCESS_EXIT_STATUS, "exit_status")                                                   \
	X(UM_PROCESS_EXIT_SIGNAL, "exit_signal")                                                   \
	X(UM_PROCESS_OOM_KILLED, "oom_killed")

/* each of "run.python": a python: spec's fate */
#define UM_VERDICT_KEYS(X)                                                                         \
	X(UM_VERDICT_SPEC, "spec")                                                                 \
	X(UM_VERDICT_UNITS, "units")                                                               \
	X(UM_VERDICT_STATUS, "status")                                                             \
	X(UM_VERDICT_DEFINED_IN, "defined_in")                                                     \
	X(UM_VERDICT_CLOSEST, "closest")                                                           \
	X(UM_VERDICT_MESSAGE, "message")

/* "summary", and what `unitmeter summary` prints */
#define UM_SUMMARY_KEYS(X)                                                                         \
	X(UM_SUMMARY_N_UNITS, "n_units")                                                           \
	X(UM_SUMMARY_TOTAL_WALL_S, "total_wall_s")                                                 \
	X(UM_SUMMARY_TOTAL_CPU_S, "total_cpu_s")                                                   \
	X(UM_SUMMARY_WALL_S_MEDIAN, "wall_s_median")                                               \
	X(UM_SUMMARY_WALL_S_P90, "wall_s_p90")                                                     \
	X(UM_SUMMARY_WALL_S_MAX, "wall_s_max")                                                     \
	X(UM_SUMMARY_PEAK_RSS_BYTES_MEDIAN, "peak_rss_bytes_median")                               \
	X(UM_SUMMARY_PEAK_RSS_BYTES_MAX, "peak_rss_bytes_max")                                     \
	X(UM_SUMMARY_CPU_UTILISATION_MEAN, "cpu_utilisation_mean")                                 \
	X(UM_SUMMARY_TOTAL_OUTPUT_BYTES, "total_output_bytes")

/* "hardware", and what `unitmeter hw` prints; each of its "gpus" */
#define UM_HARDWARE_KEYS(X)                                                                        \
	X(UM_HW_CPU_MODEL, "cpu_model")                                                            \
	X(UM_HW_ARCHITECTURE, "architecture")                                                      \
	X(UM_HW_PHYSICAL_CORES, "physical_cores")                                                  \
	X(UM_HW_LOGICAL_CORES, "logical_cores")                                                    \
	X(UM_HW_CPU_FREQ_MHZ, "cpu_freq_mhz")                                                      \
	X(UM_HW_TOTAL_MEMORY_BYTES, "total_memory_bytes")                                          \
	X(UM_HW_AVAILABLE_MEMORY_BYTES, "available_memory_bytes")                                  \
	X(UM_HW_HOSTNAME, "hostname")                                                              \
	X(UM_HW_PLATFORM, "platform")                                                              \
	X(UM_HW_SYSTEM, "system")                                                                  \
	X(UM_HW_PYTHON_VERSION, "python_version")                                                  \
	X(UM_HW_BLAS, "blas")                                                                      \
	X(UM_HW_THREAD_ENV, "thread_env")                                                          \
	X(UM_HW_KERNEL_RELEASE, "kernel_release")                                                  \
	X(UM_HW_BTF, "btf")                                                                        \
	X(UM_HW_GPUS, "gpus")
#define UM_HW_GPU_KEYS(X)                                                                          \
	X(UM_HW_GPU_INDEX, "index")                                                                \
	X(UM_HW_GPU_NAME, "name")                                                                  \
	X(UM_HW_GPU_MEMORY_TOTAL_BYTES, "memory_total_bytes")

/* Each line a constant; a file that uses only some of them is no warning. */
#define UM_KEY_CONSTANT(name, key) static const char name[] __attribute__((unused)) = key;
UM_MANIFEST_KEYS(UM_KEY_CONSTANT)
UM_TOOL_KEYS(UM_KEY_CONSTANT)
UM_SPEC_KEYS(UM_KEY_CONSTANT)
UM_RUN_KEYS(UM_KEY_CONSTANT)
UM_TMP_DIR_KEYS(UM_KEY_CONSTANT)
UM_BPF_KEYS(UM_KEY_CONSTANT)
UM_UNSEEN_KEYS(UM_KEY_CONSTANT)
UM_UNSEEN_AFTER_KEYS(UM_KEY_CONSTANT)
UM_TRACING_KEYS(UM_KEY_CONSTANT)
UM_CHARGE_KEYS(UM_KEY_CONSTANT)
UM_GPU_KEYS(UM_KEY_CONSTANT)
UM_LIMITS_KEYS(UM_KEY_CONSTANT)
UM_TIMELINE_KEYS(UM_KEY_CONSTANT)
UM_PROCESS_KEYS(UM_KEY_CONSTANT)
UM_VERDICT_KEYS(UM_KEY_CONSTANT)
UM_SUMMARY_KEYS(UM_KEY_CONSTANT)
UM_HARDWARE_KEYS(UM_KEY_CONSTANT)
UM_HW_GPU_KEYS(UM_KEY_CONSTANT)
#undef UM_KEY_CONSTANT

#endif
