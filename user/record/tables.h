/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The human tables at the end of a run: processes, the group, the memory charge, units, summary. */
#ifndef UM_TABLES_H
#define UM_TABLES_H

#include <stdio.h>
#include "record/run_record.h"

void run_record__print_tables(const struct run_record *r, FILE *out);

#endif
