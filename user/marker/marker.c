// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit markers for interpreted code: the Python bootstrap calls these at a fit's entry and
 * return; unitmeter puts a uprobe on each. They do nothing themselves. noinline and the empty
 * asm keep each a real, separately probed function at any optimisation level.
 */
#define UM_MARKER __attribute__((noinline, used, visibility("default")))

UM_MARKER void unitmeter_unit_begin(int spec)
{
	__asm__ volatile("" : : "r"(spec) : "memory");
}

UM_MARKER void unitmeter_unit_end(int spec)
{
	__asm__ volatile("" : : "r"(spec) : "memory");
}
