/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The name of an arm64 core from its MIDR fields, as /proc/cpuinfo gives them ("CPU implementer",
 * "CPU part"): arm64 kernels write no "model name". The names are util-linux lscpu's.
 */
#ifndef UM_ARM_CPU_H
#define UM_ARM_CPU_H

/* "ARM Neoverse-V2"; "ARM part 0xd99" for a part not in the table; "implementer 0x.. part 0x..."
 * for a vendor not in it; a new string, NULL only when out of memory. */
char *arm_cpu_name(unsigned implementer, unsigned part);

#endif
