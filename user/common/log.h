/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Messages to stderr: errors always, progress with -v, libbpf's debug output with -vv. */
#ifndef UM_LOG_H
#define UM_LOG_H

extern int um_verbosity;

/* One line, prefixed "unitmeter: ". */
void um_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void um_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Something the user should know that is not wrong ("note: "). */
void um_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only with -v. */
void um_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
