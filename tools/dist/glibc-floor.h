/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Included first in every C file of the portable build (make dist): the symbols whose newest
 * version in the sysroot's glibc (2.31) is above the floor (RHEL 8's 2.28) bound to the version
 * every glibc of that architecture has. glibc 2.29 gave exp, exp2, log, log2 and pow new
 * versions that only drop the SVID error wrapper: 2.28's implementations, the same results. A
 * symbol bound here but unused costs nothing; tools/dist/glibc-floor.sh fails on any other
 * symbol that would need a line here.
 */
#if defined(__x86_64__)
#define UM_GLIBC_FLOOR_VERSION "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define UM_GLIBC_FLOOR_VERSION "GLIBC_2.17"
#endif
#ifdef UM_GLIBC_FLOOR_VERSION
__asm__(".symver exp,exp@" UM_GLIBC_FLOOR_VERSION);
__asm__(".symver exp2,exp2@" UM_GLIBC_FLOOR_VERSION);
__asm__(".symver log,log@" UM_GLIBC_FLOOR_VERSION);
__asm__(".symver log2,log2@" UM_GLIBC_FLOOR_VERSION);
__asm__(".symver pow,pow@" UM_GLIBC_FLOOR_VERSION);
#endif
