/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A libbpf failure in words: libbpf returns errno values and codes of its own (4000 and up,
 * LIBBPF_ERRNO__*), which strerror() prints as "Unknown error 4001". Every message a user reads
 * about a libbpf call goes through this.
 */
#ifndef UM_BPF_WORDS_H
#define UM_BPF_WORDS_H

#include <bpf/libbpf.h>

struct bpf_words {
	char text[128];
};

/* err: a negative errno or libbpf code, as libbpf returns it. */
static inline const char *bpf_words(int err, struct bpf_words *w)
{
	if (libbpf_strerror(err, w->text, sizeof(w->text)))
		snprintf(w->text, sizeof(w->text), "libbpf error %d", -err);
	return w->text;
}

#endif
