/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `run` and `attach`: one tracing session from checks to manifest. */
#ifndef UM_SESSION_H
#define UM_SESSION_H

#include "commands/cli.h"

/* The exit status for unitmeter: the command's own for run, 2 for unitmeter's failures. */
int session_run(const struct um_options *opts);
int session_attach(const struct um_options *opts);

#endif
