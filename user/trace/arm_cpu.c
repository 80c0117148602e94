// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <stdlib.h>
#include "trace/arm_cpu.h"

struct arm_part {
	unsigned implementer, part;
	const char *name;
};

/* The server and common cores (util-linux sys-utils/lscpu-arm.c): Grace is a Neoverse-V2,
 * Graviton2/3/4 are Neoverse-N1/V1/V2, Altra is a Neoverse-N1. */
static const struct arm_part parts[] = {
	{ 0x41, 0xd03, "Cortex-A53" },	 { 0x41, 0xd04, "Cortex-A35" },
	{ 0x41, 0xd05, "Cortex-A55" },	 { 0x41, 0xd07, "Cortex-A57" },
	{ 0x41, 0xd08, "Cortex-A72" },	 { 0x41, 0xd09, "Cortex-A73" },
	{ 0x41, 0xd0a, "Cortex-A75" },	 { 0x41, 0xd0b, "Cortex-A76" },
	{ 0x41, 0xd0c, "Neoverse-N1" },	 { 0x41, 0xd0d, "Cortex-A77" },
	{ 0x41, 0xd40, "Neoverse-V1" },	 { 0x41, 0xd41, "Cortex-A78" },
	{ 0x41, 0xd44, "Cortex-X1" },	 { 0x41, 0xd46, "Cortex-A510" },
	{ 0x41, 0xd47, "Cortex-A710" },	 { 0x41, 0xd48, "Cortex-X2" },
	{ 0x41, 0xd49, "Neoverse-N2" },	 { 0x41, 0xd4a, "Neoverse-E1" },
	{ 0x41, 0xd4f, "Neoverse-V2" },	 { 0x41, 0xd84, "Neoverse-V3" },
	{ 0x41, 0xd8e, "Neoverse-N3" },	 { 0x43, 0x0af, "ThunderX2 99xx" },
	{ 0x48, 0xd01, "TaiShan-v110" }, { 0x4e, 0x004, "Carmel" },
	{ 0xc0, 0xac3, "Ampere-1" },	 { 0xc0, 0xac4, "Ampere-1a" },
};

static const struct {
	unsigned id;
	const char *name;
} vendors[] = {
	{ 0x41, "ARM" },      { 0x42, "Broadcom" }, { 0x43, "Cavium" }, { 0x48, "HiSilicon" },
	{ 0x4e, "NVIDIA" },   { 0x50, "APM" },	    { 0x51, "Qualcomm" }, { 0x61, "Apple" },
	{ 0xc0, "Ampere" },
};

char *arm_cpu_name(unsigned implementer, unsigned part)
{
	const char *vendor = NULL;
	char *name = NULL;
	int n;

	for (size_t i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++)
		if (vendors[i].id == implementer)
			vendor = vendors[i].name;
	for (size_t i = 0; vendor && i < sizeof(parts) / sizeof(parts[0]); i++)
		if (parts[i].implementer == implementer && parts[i].part == part) {
			n = asprintf(&name, "%s %s", vendor, parts[i].name);
			return n < 0 ? NULL : name;
		}
	if (vendor)
		n = asprintf(&name, "%s part 0x%03x", vendor, part);
	else
		n = asprintf(&name, "implementer 0x%02x part 0x%03x", implementer, part);
	return n < 0 ? NULL : name;
}
