/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Hardware capture: the seed's capture_hardware() keys, read from /proc and /sys. Every reader
 * takes a root directory ("" on the live system, a fixture tree in tests), and a field that
 * cannot be read stays null.
 */
#ifndef UM_HW_H
#define UM_HW_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

/* Parsers over file contents, exposed for the fixture tests. */
char *hw_parse_cpu_model(const char *cpuinfo);
int hw_parse_meminfo_bytes(const char *meminfo, const char *key, int64_t *bytes);
int hw_parse_cpu_list_count(const char *list);
int hw_count_cpuinfo_cores(const char *cpuinfo);

/* Readers of a tree rooted at root; -1 (or a negative MHz) when the machine does not say. */
int hw_logical_cores(const char *root);
int hw_physical_cores(const char *root);
double hw_max_freq_mhz(const char *root);

/* The whole record, as the manifest's "hardware" object (a new reference). */
json_t *hw_capture(const char *root);

/* The five thread variables, from an environment block (NULL: unitmeter's own environment). */
json_t *hw_thread_env(char *const *envp);

#endif
