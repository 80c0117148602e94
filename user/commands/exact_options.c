// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include "commands/exact_options.h"
#include "common/closest.h"

/* What one option of argp's tables is: its long name, short key and whether it takes a value. */
struct option_seen {
	const char *name;
	int key;
	bool takes_value;
};

typedef bool (*option_match_fn)(const struct option_seen *opt, const void *wanted);

/*
 * Walk argp's tables (an alias inherits the key and value of the entry before it) until match
 * says yes; fill *found then.
 */
static bool options_find(const struct argp *argp, option_match_fn match, const void *wanted,
			 struct option_seen *found)
{
	struct option_seen last = { 0 };

	for (const struct argp_option *o = argp->options; o && (o->name || o->key || o->doc); o++) {
		struct option_seen here = { .name = o->name, .key = o->key, .takes_value = o->arg };

		if (o->flags & OPTION_DOC)
			continue;
		if (o->flags & OPTION_ALIAS) {
			here.key = last.key;
			here.takes_value = last.takes_value;
		} else {
			last = here;
		}
		if (match(&here, wanted)) {
			*found = here;
			return true;
		}
	}
	for (const struct argp_child *c = argp->children; c && c->argp; c++)
		if (options_find(c->argp, match, wanted, found))
			return true;
	return false;
}

struct long_wanted {
	const char *name;
	size_t len;
};

static bool long_name_is(const struct option_seen *opt, const void *wanted)
{
	const struct long_wanted *w = wanted;

	return opt->name && strlen(opt->name) == w->len && !strncmp(opt->name, w->name, w->len);
}

static bool short_key_is(const struct option_seen *opt, const void *wanted)
{
	int key = *(const int *)wanted;

	return key > 0 && key < 128 && opt->key == key;
}

/* The nearest real long option, by edit distance; a walk that never says yes. */
struct nearest {
	char wanted[64];
	const char *name;
	unsigned distance;
};

static bool nearest_offer(const struct option_seen *opt, const void *wanted)
{
	struct nearest *n = (struct nearest *)wanted;
	unsigned d;

	if (!opt->name)
		return false;
	d = um_edit_distance(opt->name, n->wanted);
	if (!n->name || d < n->distance) {
		n->name = opt->name;
		n->distance = d;
	}
	return false;
}

static int refuse_long(const struct argp *argp, const char *const *renamed, const char *name,
		       size_t len, char *why, size_t whylen)
{
	struct nearest n = { 0 };
	struct option_seen unused;

	snprintf(n.wanted, sizeof(n.wanted), "%.*s", (int)len, name);
	for (; renamed && renamed[0]; renamed += 2)
		if (!strcmp(renamed[0], n.wanted)) {
			snprintf(why, whylen, "--%s is now --%s", renamed[0], renamed[1]);
			return -1;
		}
	options_find(argp, nearest_offer, &n, &unused);
	/* a guess further than half the name is noise */
	if (n.name && n.distance <= (len + 1) / 2 + 1)
		snprintf(why, whylen, "unknown option '--%s'; did you mean --%s?", n.wanted, n.name);
	else
		snprintf(why, whylen, "unknown option '--%s' (--help lists the options)", n.wanted);
	return -1;
}

int exact_options_check(const struct argp *argp, const char *const *renamed, int argc,
			char **argv, bool commands_follow, char *why, size_t whylen)
{
	struct option_seen opt;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return 0;
		if (a[0] != '-' || a[1] == '\0') {
			if (commands_follow)
				return 0;
			continue;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			struct long_wanted w = { a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2) };

			if (!options_find(argp, long_name_is, &w, &opt))
				return refuse_long(argp, renamed, w.name, w.len, why, whylen);
			if (!opt.takes_value && eq) {
				snprintf(why, whylen, "--%s takes no value", opt.name);
				return -1;
			}
			if (opt.takes_value && !eq)
				i++; /* its value, whatever it looks like */
			continue;
		}
		/* a cluster of short options: -qv, -ofile, -o file */
		for (const char *c = a + 1; *c; c++) {
			int key = (unsigned char)*c;

			if (!options_find(argp, short_key_is, &key, &opt)) {
				snprintf(why, whylen, "unknown option '-%c' (--help lists the options)",
					 *c);
				return -1;
			}
			if (opt.takes_value) {
				if (!c[1])
					i++;
				break;
			}
		}
	}
	return 0;
}
