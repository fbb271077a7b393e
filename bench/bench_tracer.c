/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Speed of the live tracer (emu/tracer): single-steps examples/auxcap-example-loop under each
 * encoder and compares with the same program run natively in the same run.
 *
 * Usage: bench-tracer [ITERATIONS] [EXAMPLE_LOOP]   (default 20000 iterations)
 * Prints instructions, seconds, steps/s, trace bytes per instruction, slowdown vs native.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

#include "tracer.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int count_bytes(void *ctx, const void *bytes, size_t len)
{
	(void)bytes;
	*(size_t *)ctx += len;
	return 0;
}

static double run_native(char *const argv[])
{
	double t0 = now();
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return now() - t0;
}

int main(int argc, char **argv)
{
	const char *iters = argc > 1 ? argv[1] : "20000";
	const char *prog = argc > 2 ? argv[2] : getenv("AUXCAP_EXAMPLE_LOOP");
	char *cargv[] = { NULL, (char *)iters, NULL };
	double native;

	if (!prog) {
		fprintf(stderr, "bench-tracer: name the example loop program (argument 2 or "
				"AUXCAP_EXAMPLE_LOOP)\n");
		return 1;
	}
	cargv[0] = (char *)prog;
	if (!freopen("/dev/null", "w", stdout)) /* the example prints one line */
		return 1;
	native = run_native(cargv);
	for (int f = 0; f < AUXCAP_TRACER_FORMAT_MAX; f++) {
		struct auxcap_tracer_opts opts = { .sz = sizeof(opts),
						   .format = f,
						   .on_trace = count_bytes };
		struct auxcap_tracer_stats st;
		struct auxcap_tracer *tr;
		size_t bytes = 0;
		double t0, t;
		int r;

		opts.ctx = &bytes;
		r = auxcap_tracer_new(&opts, &tr);
		if (r < 0)
			return 1;
		t0 = now();
		r = auxcap_tracer_start(tr, cargv);
		while (r == 0 && (r = auxcap_tracer_step(tr, 0)) > 0)
			;
		t = now() - t0;
		auxcap_tracer_get_stats(tr, &st);
		auxcap_tracer_free(tr);
		if (r < 0) {
			fprintf(stderr, "bench-tracer: %s: error %d\n",
				auxcap_tracer_format_name(f), r);
			return 1;
		}
		fprintf(stderr,
			"%-9s %9llu insns %7.2f s %8.0f steps/s %6.3f bytes/insn  %8.0fx native "
			"(%.4f s)\n",
			auxcap_tracer_format_name(f), (unsigned long long)st.insns, t,
			(double)st.insns / t, (double)bytes / (double)st.insns, t / native, native);
	}
	return 0;
}
