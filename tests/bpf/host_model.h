/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The accounting model's arithmetic (bpf/model_pure.bpf.h) for a host compiler: what
 * compat.bpf.h gives it in BPF, from the host's headers and builtins. um_cas is the per-CPU
 * build's: the same builtin, so a test of raise_to across threads tests the code BPF runs.
 */
#ifndef UM_TESTS_BPF_HOST_MODEL_H
#define UM_TESTS_BPF_HOST_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define um_cas(p, expected, desired) __sync_val_compare_and_swap(p, expected, desired)
#define um_fetch_add(p, v) __sync_fetch_and_add(p, v)

#include "unitmeter.h"
#include "model_pure.bpf.h"

/* A spin-wait's hint to the core that another thread holds it (pause; yield on arm64), for the
 * racing threads of the tests. */
static inline void spin_hint(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

#endif
