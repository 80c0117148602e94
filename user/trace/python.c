// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/manifest_keys.h"
#include "trace/launch.h"
#include "common/log.h"
#include "trace/python.h"

#define SUPPORTED "CPython 3.6 or newer (3.12+ through sys.monitoring, older ones by wrapping the function)"

/*
 * Where the marker library and the bootstrap are, relative to unitmeter's own executable, so a
 * relocated or DESTDIR install finds its own files: beside the binary as the build tree has them
 * (.output/unitmeter, .output/libunitmeter_marker.so, python/unitmeter_boot), then where
 * make install and the .deb put them (PREFIX/bin/unitmeter, PREFIX/lib/unitmeter/). They share
 * one directory because the bootstrap is only ever loaded with that library beside it.
 */
static const char *const marker_places[] = {
	"libunitmeter_marker.so",
	"../lib/unitmeter/libunitmeter_marker.so",
};
static const char *const boot_places[] = {
	"../python/unitmeter_boot",
	"../lib/unitmeter/python/unitmeter_boot",
};
#define N_PLACES (sizeof(marker_places) / sizeof(marker_places[0]))
_Static_assert(sizeof(boot_places) == sizeof(marker_places), "one boot place per marker place");

/*
 * The first readable of dir/places[i]/file into out; on none, a line naming every place tried.
 * An override (an environment variable's value) is the only place tried when set.
 */
static int find_support_file(char *out, size_t outlen, const char *dir, const char *const *places,
			     const char *file, const char *override, const char *env_name,
			     const char *what, char *why, size_t whylen)
{
	char tried[2 * PATH_MAX] = "", probe[PATH_MAX + 64];
	size_t used = 0;

	if (override) {
		snprintf(out, outlen, "%s", override);
		snprintf(probe, sizeof(probe), "%s%s%s", override, *file ? "/" : "", file);
		if (!access(probe, R_OK))
			return 0;
		snprintf(why, whylen, "python: units need %s: %s=%s, but %s is not readable (%s)",
			 what, env_name, override, probe, strerror(errno));
		return -ENOENT;
	}
	for (size_t i = 0; i < N_PLACES; i++) {
		snprintf(out, outlen, "%s/%s", dir, places[i]);
		snprintf(probe, sizeof(probe), "%s%s%s", out, *file ? "/" : "", file);
		if (!access(probe, R_OK))
			return 0;
		used += snprintf(tried + used, sizeof(tried) - used, "%s%s", i ? ", " : "", probe);
		if (used >= sizeof(tried))
			used = sizeof(tried) - 1;
	}
	snprintf(why, whylen, "python: units need %s, which is not in any place unitmeter looks (%s): "
		 "build it with make, or install with make install; or name it in %s",
		 what, tried, env_name);
	return -ENOENT;
}

static int locate_support_files(struct python_units *pu, char *why, size_t whylen)
{
	char exe[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int err;

	if (n <= 0) {
		snprintf(why, whylen, "cannot find unitmeter's own executable: %s", strerror(errno));
		return -ENOENT;
	}
	exe[n] = '\0';
	dir = dirname(exe);
	err = find_support_file(pu->marker_lib, sizeof(pu->marker_lib), dir, marker_places, "",
				getenv("UNITMETER_MARKER_LIB"), "UNITMETER_MARKER_LIB",
				"the marker library libunitmeter_marker.so", why, whylen);
	if (err)
		return err;
	return find_support_file(pu->boot_dir, sizeof(pu->boot_dir), dir, boot_places,
				 "sitecustomize.py", getenv("UNITMETER_PYTHON_BOOT"),
				 "UNITMETER_PYTHON_BOOT", "the bootstrap unitmeter_boot/sitecustomize.py",
				 why, whylen);
}

static bool is_python_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strncmp(base, "python", 6) != 0)
		return false;
	for (const char *p = base + 6; *p; p++)
		if (!strchr("0123456789.", *p))
			return false;
	return true;
}

/* The interpreter a command runs: itself, or its #! line's; NULL when it is neither. */
static char *command_interpreter(const char *path)
{
	char line[512], *interp, *arg;
	FILE *f;

	if (is_python_name(path))
		return strdup(path);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	if (!fgets(line, sizeof(line), f) || strncmp(line, "#!", 2) != 0) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	interp = strtok(line + 2, " \t");
	arg = strtok(NULL, " \t");
	if (interp && !strcmp(basename(interp), "env") && arg)
		interp = arg;
	if (!interp || !is_python_name(interp))
		return NULL;
	return strchr(interp, '/') ? strdup(interp) : launch_resolve(interp);
}

/* Ask the interpreter itself: "CPython 3.11 3.11.2". */
static int probe_interpreter(const char *interp, uid_t uid, gid_t gid, char *out, size_t outlen)
{
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(fds[1], 1);
		dup2(null, 2);
		if ((gid != getgid() && setgid(gid)) || (uid != getuid() && setuid(uid)))
			_exit(126);
		execl(interp, interp, "-E", "-s", "-c",
		      /* Python 2 and 3 alike, so an old interpreter is named, not misread */
		      "import platform,sys;sys.stdout.write('%s %d.%d %s\\n'%(platform.python_implementation(),"
		      "sys.version_info[0],sys.version_info[1],platform.python_version()))", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	/* unitmeter's signal handlers are in place (session.c): a signal is no failure here */
	do
		n = read(fds[0], out, outlen - 1);
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	out[n > 0 ? n : 0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -ECHILD;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && n > 0 ? 0 : -ENOEXEC;
}

static int check_interpreter(struct python_units *pu, const char *command_path,
			     char *const argv[], uid_t uid, gid_t gid, char *why, size_t whylen)
{
	char *interp = command_interpreter(command_path), answer[128], impl[32], minor[16], full[32];
	int major = 0, min = 0;

	if (!interp) {
		um_warn("%s is not a Python interpreter or script: python: units are seen in the "
			"Python processes it starts", command_path);
		return 0;
	}
	if (is_python_name(command_path)) {
		/* flags that keep PYTHONPATH or site (and so the bootstrap) out */
		for (int i = 1; argv[i] && argv[i][0] == '-' && strcmp(argv[i], "-c") &&
				strcmp(argv[i], "-m");
		     i++) {
			if (argv[i][1] != '-' && strpbrk(argv[i] + 1, "IES")) {
				snprintf(why, whylen, "python: units: '%s' makes Python ignore PYTHONPATH "
					 "or site, which load unitmeter's bootstrap; drop it", argv[i]);
				free(interp);
				return -EINVAL;
			}
		}
	}
	if (probe_interpreter(interp, uid, gid, answer, sizeof(answer)) ||
	    sscanf(answer, "%31s %15s %31s", impl, minor, full) != 3 ||
	    sscanf(minor, "%d.%d", &major, &min) != 2) {
		snprintf(why, whylen, "python: units: cannot ask %s its version; supported: %s",
			 interp, SUPPORTED);
		free(interp);
		return -ENOEXEC;
	}
	if (strcmp(impl, "CPython") || major < 3 || (major == 3 && min < 6)) {
		snprintf(why, whylen, "python: units: %s is %s %s; supported: %s", interp, impl, full,
			 SUPPORTED);
		free(interp);
		return -ENOTSUP;
	}
	snprintf(pu->interpreter_version, sizeof(pu->interpreter_version), "%s", full);
	free(interp);
	return 0;
}

/* Whether uid/gid (the command's user) can read path: asked as that user, in a child. */
static bool readable_by(const char *path, uid_t uid, gid_t gid)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (pid == 0) {
		if (setgroups(0, NULL) || (gid != getgid() && setgid(gid)) ||
		    (uid != getuid() && setuid(uid)))
			_exit(2);
		_exit(access(path, R_OK) ? 1 : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out, err = 0;
	char buf[65536];
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			err = -EIO;
			break;
		}
	if (n < 0)
		err = -errno;
	close(in);
	if (close(out) && !err)
		err = -errno;
	return err;
}

/*
 * The command runs as a user who cannot read the marker library or the bootstrap where they are
 * (a build tree in root's 0700 home, a job's user under SLURM): a copy of both, readable by all
 * and writable by none but root (so no __pycache__ is left in it), for the run's length. Without
 * it the interpreter would skip the bootstrap in silence and the run would see no unit.
 */
static int share_support_files(struct python_units *pu, uid_t uid, gid_t gid, char *why,
			       size_t whylen)
{
	char from[PATH_MAX], to[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int err = 0;

	if (geteuid() != 0 || uid == 0 ||
	    (readable_by(pu->marker_lib, uid, gid) && readable_by(pu->boot_dir, uid, gid) &&
	     snprintf(from, sizeof(from), "%s/sitecustomize.py", pu->boot_dir) > 0 &&
	     readable_by(from, uid, gid)))
		return 0;
	snprintf(pu->shared_dir, sizeof(pu->shared_dir), "/tmp/unitmeter-boot-XXXXXX");
	if (!mkdtemp(pu->shared_dir) || chmod(pu->shared_dir, 0755)) {
		err = -errno;
		snprintf(why, whylen, "cannot share the Python bootstrap with uid %u in /tmp: %s", uid,
			 strerror(errno));
		return err;
	}
	d = opendir(pu->boot_dir);
	while (d && !err && (de = readdir(d))) {
		if (!strstr(de->d_name, ".py") || strchr(de->d_name, '/'))
			continue;
		if (snprintf(from, sizeof(from), "%s/%s", pu->boot_dir, de->d_name) >= (int)sizeof(from) ||
		    snprintf(to, sizeof(to), "%s/%s", pu->shared_dir, de->d_name) >= (int)sizeof(to))
			err = -ENAMETOOLONG;
		else
			err = copy_file(from, to);
	}
	if (d)
		closedir(d);
	else
		err = -errno;
	if (!err) {
		snprintf(to, sizeof(to), "%s/libunitmeter_marker.so", pu->shared_dir);
		err = copy_file(pu->marker_lib, to);
	}
	if (err) {
		snprintf(why, whylen, "cannot copy the Python bootstrap into %s for uid %u: %s",
			 pu->shared_dir, uid, strerror(-err));
		return err;
	}
	um_info("uid %u cannot read %s: the bootstrap and the marker library are served from %s",
		uid, pu->boot_dir, pu->shared_dir);
	snprintf(pu->boot_dir, sizeof(pu->boot_dir), "%s", pu->shared_dir);
	snprintf(pu->marker_lib, sizeof(pu->marker_lib), "%s", to);
	return 0;
}

int python_units__prepare(struct python_units *pu, const struct unit_spec *specs, size_t n,
			  const char *command_path, char *const argv[], uid_t uid, gid_t gid,
			  char *why, size_t whylen)
{
	size_t len = 0, cap = 1;
	int err;

	memset(pu, 0, sizeof(*pu));
	err = locate_support_files(pu, why, whylen);
	if (err)
		return err;
	if (command_path) {
		err = check_interpreter(pu, command_path, argv, uid, gid, why, whylen);
		if (err)
			return err;
	}
	err = share_support_files(pu, uid, gid, why, whylen);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		if (specs[i].python)
			cap += 16 + strlen(specs[i].qualname) + (specs[i].module ? strlen(specs[i].module) : 0);
	pu->specs_env = calloc(1, cap);
	if (!pu->specs_env)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!specs[i].python)
			continue;
		len += snprintf(pu->specs_env + len, cap - len, "%s%zu=%s%s%s", len ? ";" : "", i,
				specs[i].module ? specs[i].module : "", specs[i].module ? ":" : "",
				specs[i].qualname);
	}
	/* the processes write their facts as the user they run as; only they and root can read it */
	snprintf(pu->facts_dir, sizeof(pu->facts_dir), "/tmp/unitmeter-py-XXXXXX");
	if (!mkdtemp(pu->facts_dir)) {
		err = -errno;
		snprintf(why, whylen, "cannot create a directory in /tmp: %s", strerror(errno));
		pu->facts_dir[0] = '\0';
		return err;
	}
	if (geteuid() == 0 && chown(pu->facts_dir, uid, gid))
		um_warn("cannot hand %s to uid %u: %s", pu->facts_dir, uid, strerror(errno));
	return 0;
}

int python_units__export_env(const struct python_units *pu)
{
	const char *old = getenv("PYTHONPATH");
	char *path;
	int err = 0;

	if (asprintf(&path, "%s%s%s", pu->boot_dir, old && *old ? ":" : "", old ? old : "") < 0)
		return -ENOMEM;
	if (setenv("PYTHONPATH", path, 1) || setenv("UNITMETER_PY_UNITS", pu->specs_env, 1) ||
	    setenv("UNITMETER_MARKER_LIB", pu->marker_lib, 1) ||
	    setenv("UNITMETER_PY_REPORT", pu->facts_dir, 1))
		err = -errno;
	free(path);
	return err;
}

json_t *python_units__facts(const struct python_units *pu)
{
	json_t *facts = json_object(), *blas = json_array(), *first_env = NULL;
	const char *version = NULL;
	json_t *all_facts = json_array();
	struct dirent *de;
	DIR *d = opendir(pu->facts_dir);

	while (d && (de = readdir(d))) {
		char path[PATH_MAX];
		json_t *facts, *pools, *pool;
		size_t i;

		if (!strstr(de->d_name, ".json") || strstr(de->d_name, ".tmp"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", pu->facts_dir, de->d_name);
		facts = json_load_file(path, 0, NULL);
		if (!json_is_object(facts)) {
			json_decref(facts);
			continue;
		}
		json_array_append_new(all_facts, facts);
		pools = json_object_get(facts, "blas");
		json_array_foreach(pools, i, pool) {
			json_t *seen;
			size_t j;
			bool dup = false;

			json_array_foreach(blas, j, seen)
				dup |= json_equal(json_object_get(seen, "path"), json_object_get(pool, "path"));
			if (!dup)
				json_array_append(blas, pool);
		}
	}
	if (d)
		closedir(d);
	/* the lowest pid is the first Python process: the one the user started */
	{
		json_int_t best = -1;
		json_t *r;
		size_t i;

		json_array_foreach(all_facts, i, r) {
			json_int_t pid = json_integer_value(json_object_get(r, "pid"));

			if (best < 0 || pid < best) {
				best = pid;
				version = json_string_value(json_object_get(r, "python_version"));
				first_env = json_object_get(r, "thread_env");
			}
		}
	}
	if (!version && pu->interpreter_version[0])
		version = pu->interpreter_version;
	json_object_set_new(facts, UM_HW_PYTHON_VERSION, version ? json_string(version) : json_null());
	json_object_set_new(facts, UM_HW_BLAS, blas);
	if (json_is_object(first_env))
		json_object_set(facts, UM_HW_THREAD_ENV, first_env);
	json_decref(all_facts);
	return facts;
}

/*
 * What one spec came to across the processes' reports (PID.specs, written by the bootstrap at
 * each resolution and at exit): where its function is defined, why it cannot resolve, and the
 * closest of the names the processes saw defined.
 */
struct spec_verdict {
	const char *defined_in; /* borrowed from a report */
	const char *why;
	struct near_names near;
};

static bool is_main_module(const char *module, size_t len)
{
	return (len == 8 && !strncmp(module, "__main__", 8)) ||
	       (len == 11 && !strncmp(module, "__mp_main__", 11));
}

/*
 * Offer "module:qualname" as the spec's near name, in the form the user wrote it: the whole
 * "module:qualname" against a spec that names a module; the qualname against a bare one (a main
 * module's shown bare, since that is how it is named); "module.qualname" against a dotted path.
 */
static void offer_near(struct near_names *near, const char *name, unsigned d, const char *wanted)
{
	/* a name that needs more than half of the wanted one rewritten is not near it */
	size_t limit = strlen(wanted) / 2;

	if (d <= (limit > 2 ? limit : 2))
		near_names__add(near, name, d);
}

static void offer_name(struct near_names *near, const struct unit_spec *spec, const char *name)
{
	const char *colon = strchr(name, ':'), *qual = colon ? colon + 1 : name;
	size_t mlen = colon ? (size_t)(colon - name) : 0;
	char shown[512], dotted[512];
	unsigned d;

	/* a short name inside the wanted one ("_", "fit") is contained, not close */
	if (strlen(qual) * 2 < strlen(spec->qualname))
		return;
	if (spec->module) {
		offer_near(near, name, name_distance(name, spec->text + 7 /* python: */),
			   spec->text + 7);
		return;
	}
	if (mlen && !is_main_module(name, mlen))
		snprintf(shown, sizeof(shown), "%s", name);
	else
		snprintf(shown, sizeof(shown), "%s", qual);
	d = name_distance(qual, spec->qualname);
	if (strchr(spec->qualname, '.') && mlen) {
		unsigned dd;

		snprintf(dotted, sizeof(dotted), "%.*s.%s", (int)mlen, name, qual);
		dd = name_distance(dotted, spec->qualname);
		if (dd < d) {
			offer_near(near, dotted, dd, spec->qualname);
			return;
		}
	}
	offer_near(near, shown, d, spec->qualname);
}

static void read_spec_report(json_t *report, const struct unit_spec *specs, size_t n,
			     struct spec_verdict *v)
{
	json_t *defined = json_object_get(report, "defined"), *why = json_object_get(report, "why");
	json_t *names = json_object_get(report, "names"), *name;
	size_t j;

	for (size_t i = 0; i < n; i++) {
		char key[24];

		if (!specs[i].python)
			continue;
		snprintf(key, sizeof(key), "%zu", i);
		if (!v[i].defined_in)
			v[i].defined_in = json_string_value(json_object_get(defined, key));
		if (!v[i].why)
			v[i].why = json_string_value(json_object_get(why, key));
	}
	json_array_foreach(names, j, name) {
		const char *text = json_string_value(name);

		for (size_t i = 0; text && i < n; i++)
			if (specs[i].python && !v[i].defined_in && !v[i].why)
				offer_name(&v[i].near, &specs[i], text);
	}
}

/* The reports, in a JSON array; the first process's program (the lowest pid's argv[0]). */
static json_t *load_spec_reports(const char *dir, const char **program)
{
	json_t *reports = json_array();
	json_int_t lowest = -1;
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t i;
	json_t *r;

	while (d && (de = readdir(d))) {
		char path[PATH_MAX];
		size_t len = strlen(de->d_name);
		json_t *report;

		if (len < 7 || strcmp(de->d_name + len - 6, ".specs"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		report = json_load_file(path, 0, NULL);
		if (json_is_object(report))
			json_array_append(reports, report);
		json_decref(report);
	}
	if (d)
		closedir(d);
	*program = NULL;
	json_array_foreach(reports, i, r) {
		json_int_t pid = json_integer_value(json_object_get(r, "pid"));

		if (lowest < 0 || pid < lowest) {
			lowest = pid;
			*program = json_string_value(json_object_get(r, "program"));
		}
	}
	return reports;
}

static json_t *verdict_json(const struct unit_spec *spec, size_t units, const struct spec_verdict *v,
			    const char *program, bool any_report)
{
	const char *status = units ? "matched" : v->defined_in ? "never_called" :
				     v->why ? "unresolvable" : "not_found";
	json_t *closest = json_array();
	char message[1024] = "", near[512];

	for (int i = 0; i < NEAR_MATCHES && v->near.names[i]; i++)
		json_array_append_new(closest, json_string(v->near.names[i]));
	near_names__format(&v->near, near, sizeof(near));
	if (units)
		message[0] = '\0'; /* a spec that measured units has nothing to say */
	else if (v->defined_in)
		snprintf(message, sizeof(message), "--unit %s: defined in `%s`, never called",
			 spec->text, v->defined_in);
	else if (v->why)
		snprintf(message, sizeof(message), "--unit %s: %s", spec->text, v->why);
	else if (!any_report)
		snprintf(message, sizeof(message), "--unit %s matched nothing: no Python process "
			 "of the command ran unitmeter's bootstrap (is it a Python program, started "
			 "with PYTHONPATH and site left on?)", spec->text);
	else
		snprintf(message, sizeof(message), "--unit %s matched no function that the Python "
			 "processes of %s defined or imported%s%s", spec->text,
			 program ? program : "the command", near[0] ? "; closest: " : "", near);
	return json_pack("{s:s, s:I, s:s, s:s?, s:o, s:s?}", UM_VERDICT_SPEC, spec->text,
			 UM_VERDICT_UNITS, (json_int_t)units, UM_VERDICT_STATUS, status,
			 UM_VERDICT_DEFINED_IN, v->defined_in, UM_VERDICT_CLOSEST, closest,
			 UM_VERDICT_MESSAGE, message[0] ? message : NULL);
}

json_t *python_units__verdicts(const struct python_units *pu, const struct unit_spec *specs,
			       size_t n, const size_t *units)
{
	struct spec_verdict *v = calloc(n ? n : 1, sizeof(*v));
	const char *program = NULL;
	json_t *reports = load_spec_reports(pu->facts_dir, &program), *report, *out = json_array();
	size_t j;

	if (!v) {
		json_decref(reports);
		return out;
	}
	json_array_foreach(reports, j, report)
		read_spec_report(report, specs, n, v);
	for (size_t i = 0; i < n; i++) {
		if (specs[i].python)
			json_array_append_new(out, verdict_json(&specs[i], units[i], &v[i], program,
								json_array_size(reports) > 0));
		near_names__free(&v[i].near);
	}
	free(v);
	json_decref(reports); /* after the verdicts: their strings were borrowed from it */
	return out;
}

size_t python_units__say(const json_t *verdicts)
{
	size_t errors = 0, i;
	json_t *v;

	json_array_foreach(verdicts, i, v) {
		const char *status = json_string_value(json_object_get(v, UM_VERDICT_STATUS));
		const char *message = json_string_value(json_object_get(v, UM_VERDICT_MESSAGE));

		if (!message)
			continue;
		if (!strcmp(status, "never_called")) {
			um_warn("%s", message);
		} else {
			um_err("%s", message);
			errors++;
		}
	}
	return errors;
}

/* A directory of plain files this run made (its name "" when none), removed; the name cleared. */
static void remove_flat_dir(char *dir)
{
	DIR *d;
	struct dirent *de;

	if (!dir[0])
		return;
	d = opendir(dir);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
	dir[0] = '\0';
}

void python_units__cleanup(struct python_units *pu)
{
	remove_flat_dir(pu->facts_dir);
	remove_flat_dir(pu->shared_dir);
	free(pu->specs_env);
	pu->specs_env = NULL;
}
