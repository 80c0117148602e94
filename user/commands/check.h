/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef UM_COMMANDS_CHECK_H
#define UM_COMMANDS_CHECK_H

#include <stdio.h>

/*
 * `unitmeter check`: print what the kernel offers (probed afresh) and what each fault hook costs,
 * then load and attach the programs of a run's own and detach them. 0: unitmeter works here;
 * 2: it cannot (the verdict, and the line above it, say why).
 */
int command_check(FILE *out);

#endif
