// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The demo workload: a calibration run of Gaussian-mixture fits. Each call of fit_unit() fits a
 * K-component 1-D mixture by EM to a synthetic data set and writes its parameters to a file; it
 * is the unit `unitmeter run --unit fit_unit` measures. The fits differ in size; one takes a
 * short-lived 96 MiB scratch buffer (a spike a 50 ms poller misses), and one forks a helper that
 * computes half of each E-step, as a worker process would.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define K 3
#define ITERATIONS 40

struct fit {
	double weight[K], mean[K], var[K];
	double loglik;
};

enum fit_flags {
	FIT_SPIKE = 1,  /* a brief large scratch buffer */
	FIT_HELPER = 2, /* a forked helper computes half of the log-likelihood */
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static double uniform(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static double normal(void)
{
	double u = uniform(), v = uniform();

	return sqrt(-2.0 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

static double *make_data(size_t n)
{
	static const double centres[K] = { -4.0, 0.5, 6.0 };
	double *x = malloc(n * sizeof(*x));

	for (size_t i = 0; i < n && x; i++)
		x[i] = centres[i % K] + normal() * (1.0 + (i % K) * 0.5);
	return x;
}

static double loglik_range(const double *x, size_t lo, size_t hi, const struct fit *f)
{
	double ll = 0;

	for (size_t i = lo; i < hi; i++) {
		double p = 0;

		for (int k = 0; k < K; k++)
			p += f->weight[k] * exp(-0.5 * (x[i] - f->mean[k]) * (x[i] - f->mean[k]) / f->var[k]) /
			     sqrt(2 * M_PI * f->var[k]);
		ll += log(p + 1e-300);
	}
	return ll;
}

static int save_fit(const char *dir, int index, size_t n, const struct fit *f)
{
	char path[512];
	FILE *out;

	snprintf(path, sizeof(path), "%s/fit-%02d.txt", dir, index);
	out = fopen(path, "w");
	if (!out)
		return -1;
	fprintf(out, "n %zu\nloglik %.6f\n", n, f->loglik);
	for (int k = 0; k < K; k++)
		fprintf(out, "component %d weight %.6f mean %.6f var %.6f\n", k, f->weight[k], f->mean[k],
			f->var[k]);
	return fclose(out);
}

/* One fit: EM from a fixed start, its parameters saved to path. noinline and exported, so it can be probed by name. */
__attribute__((noinline)) int fit_unit(const double *x, size_t n, int flags, struct fit *f,
				       const char *dir, int index)
{
	double *resp = malloc(n * K * sizeof(*resp));

	if (!resp)
		return -1;
	for (int k = 0; k < K; k++) {
		f->weight[k] = 1.0 / K;
		f->mean[k] = x[k * (n / K)];
		f->var[k] = 1.0;
	}
	for (int it = 0; it < ITERATIONS; it++) {
		double nk[K] = { 0 }, sum[K] = { 0 }, sq[K] = { 0 };

		for (size_t i = 0; i < n; i++) {
			double total = 0;

			for (int k = 0; k < K; k++) {
				double d = x[i] - f->mean[k];

				resp[i * K + k] = f->weight[k] * exp(-0.5 * d * d / f->var[k]) / sqrt(f->var[k]);
				total += resp[i * K + k];
			}
			for (int k = 0; k < K; k++) {
				double r = resp[i * K + k] / (total + 1e-300);

				nk[k] += r;
				sum[k] += r * x[i];
				sq[k] += r * x[i] * x[i];
			}
		}
		for (int k = 0; k < K; k++) {
			f->weight[k] = nk[k] / n;
			f->mean[k] = sum[k] / nk[k];
			f->var[k] = fmax(sq[k] / nk[k] - f->mean[k] * f->mean[k], 1e-6);
		}
	}
	if (flags & FIT_SPIKE) {
		/* a bootstrap-style scratch copy, held for a few milliseconds */
		size_t bytes = 96UL << 20;
		char *scratch = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (scratch != MAP_FAILED) {
			for (size_t off = 0; off < bytes; off += 4096)
				scratch[off] = (char)off;
			usleep(3000);
			munmap(scratch, bytes);
		}
	}
	if (flags & FIT_HELPER) {
		int fds[2];
		pid_t pid = -1;
		double half = 0;

		if (pipe(fds) == 0 && (pid = fork()) == 0) {
			double ll = loglik_range(x, n / 2, n, f);

			if (write(fds[1], &ll, sizeof(ll)) != sizeof(ll))
				_exit(1);
			_exit(0);
		} else if (pid > 0) {
			f->loglik = loglik_range(x, 0, n / 2, f);
			if (read(fds[0], &half, sizeof(half)) == sizeof(half))
				f->loglik += half;
			waitpid(pid, NULL, 0);
			close(fds[0]);
			close(fds[1]);
		}
	} else {
		f->loglik = loglik_range(x, 0, n, f);
	}
	free(resp);
	return save_fit(dir, index, n, f);
}

int main(int argc, char **argv)
{
	static const struct {
		size_t n;
		int flags;
	} fits[] = {
		{ 20000, 0 }, { 40000, 0 }, { 80000, 0 }, { 40000, FIT_SPIKE },
		{ 120000, 0 }, { 60000, FIT_HELPER }, { 30000, 0 }, { 100000, 0 },
	};
	const char *dir = argc > 1 ? argv[1] : "fits";
	size_t nfits = sizeof(fits) / sizeof(fits[0]);

	mkdir(dir, 0755);
	for (size_t i = 0; i < nfits; i++) {
		double *x = make_data(fits[i].n);
		struct fit f;

		if (!x || fit_unit(x, fits[i].n, fits[i].flags, &f, dir, (int)i)) {
			fprintf(stderr, "fit_demo: fit %zu failed\n", i);
			return 1;
		}
		printf("fit %zu: n=%zu loglik=%.1f means=%.2f %.2f %.2f\n", i, fits[i].n, f.loglik,
		       f.mean[0], f.mean[1], f.mean[2]);
		free(x);
	}
	return 0;
}
