// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the accept gate's tracepoint fallback costs every other program:
 * where the kernel refuses fexit, the gate's accept records
 * (gates/socket/records.bpf.c) hang on the syscall exit tracepoints of
 * accept and accept4, and while any syscall tracepoint has a program, every
 * thread on the machine takes the kernel's slow path into and out of every
 * system call. This measures the cheapest call (getppid) in batches, with
 * and without a do-nothing program on syscalls:sys_exit_accept4 (the cost
 * is the slow path's, not the program's, which never runs here), the two
 * alternating in one run.
 *
 *   syscall-tax [-r REPS] [-n CALLS] [-o CSV]
 *
 * Prints ns per call off and on, median over the repetitions [min-max], and
 * the ratio off/on per repetition (1.0 = no cost). Root; tracefs mounted.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "lib/tracepoint.h"

#define TP "syscalls/sys_exit_accept4"

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static double
batch(long n)
{
	double t0 = now();
	long i;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	return (now() - t0) / n;
}

/* A program on the tracepoint; returns the perf event's fd. */
static int
attach(int prog)
{
	return tracepoint_attach(prog, TP);
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
stat3(double *v, int n, double out[3])
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	out[0] = v[n / 2];
	out[1] = v[0];
	out[2] = v[n - 1];
}

int
main(int argc, char **argv)
{
	struct bpf_insn prog[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 },	/* r0 = 0 */
		{ .code = 0x95 },				/* exit */
	};
	int reps = 15, c, i, pfd, fd;
	long n = 200000;
	const char *csv = NULL;
	double *off, *on, *ratio, s[3][3];
	FILE *out = NULL;

	while ((c = getopt(argc, argv, "r:n:o:")) != -1) {
		switch (c) {
		case 'r': reps = atoi(optarg); break;
		case 'n': n = atol(optarg); break;
		case 'o': csv = optarg; break;
		default:
			fprintf(stderr, "usage: syscall-tax [-r REPS] [-n CALLS] [-o CSV]\n");
			return 2;
		}
	}
	if (reps < 1 || n < 1000) {
		fprintf(stderr, "syscall-tax: -r >= 1, -n >= 1000\n");
		return 2;
	}
	pfd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "tax", "GPL", prog, 2, NULL);
	if (pfd < 0) {
		fprintf(stderr, "syscall-tax: cannot load a tracepoint program: %s\n", strerror(errno));
		return 1;
	}
	if ((fd = attach(pfd)) < 0) {
		fprintf(stderr, "syscall-tax: cannot attach to " TP ": %s (tracefs?)\n", strerror(errno));
		return 1;
	}
	close(fd);
	if (csv && !(out = fopen(csv, "w"))) {
		fprintf(stderr, "syscall-tax: %s: %s\n", csv, strerror(errno));
		return 1;
	}
	if (out)
		fprintf(out, "rep,off_ns,on_ns,ratio\n");
	off = calloc((size_t)reps, sizeof(*off));
	on = calloc((size_t)reps, sizeof(*on));
	ratio = calloc((size_t)reps, sizeof(*ratio));
	if (!off || !on || !ratio)
		return 1;
	batch(n / 4);	/* warm */
	for (i = 0; i < reps; i++) {
		/* alternate which goes first */
		if (i & 1)
			off[i] = batch(n);
		if ((fd = attach(pfd)) < 0) {
			fprintf(stderr, "syscall-tax: attach: %s\n", strerror(errno));
			return 1;
		}
		on[i] = batch(n);
		close(fd);
		if (!(i & 1))
			off[i] = batch(n);
		ratio[i] = off[i] / on[i];
		if (out)
			fprintf(out, "%d,%.1f,%.1f,%.4f\n", i + 1, off[i], on[i], ratio[i]);
	}
	stat3(off, reps, s[0]);
	stat3(on, reps, s[1]);
	stat3(ratio, reps, s[2]);
	printf("getppid, %ld calls a batch, %d repetitions, median [min-max]\n", n, reps);
	printf("off    %7.1f ns [%.1f-%.1f]\n", s[0][0], s[0][1], s[0][2]);
	printf("on     %7.1f ns [%.1f-%.1f]  (a program on " TP ")\n", s[1][0], s[1][1], s[1][2]);
	printf("ratio  %7.3f    [%.3f-%.3f]  off/on per repetition\n", s[2][0], s[2][1], s[2][2]);
	if (out)
		fclose(out);
	return 0;
}
