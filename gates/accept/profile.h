/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Optional per-phase timing of the accept path (wall clock, CLOCK_MONOTONIC),
 * for benchmarks/results/accept-cost.md. Off by default:
 *   make CPPFLAGS=-DGATE_PROF gates/accept/vsd-gate
 * and vsd-gate prints the average time of each phase on exit (stderr).
 */
#ifndef VSD_GATE_ACCEPT_PROF_H
#define VSD_GATE_ACCEPT_PROF_H

enum prof_phase {
	PROF_RECV, PROF_THREAD, PROF_LISTENER, PROF_BACKLOG, PROF_ACCEPT4, PROF_CLASSIFY,
	PROF_DEAD, PROF_ADDFD, PROF_CLOSE, PROF_FCNTL, PROF_POLL, PROF_FAST, PROF_MAX,
};

#ifdef GATE_PROF
#include <stdint.h>
extern uint64_t prof_ns[PROF_MAX], prof_n[PROF_MAX];
/* PROF_BEGIN declares the clock; PROF_MARK(p) charges the time since the last mark to p */
#define PROF_BEGIN()	uint64_t prof_t_ = now_ns()
#define PROF_RESTART()	(prof_t_ = now_ns())
#define PROF_MARK(p)	do { uint64_t t_ = now_ns(); prof_ns[p] += t_ - prof_t_; prof_n[p]++; prof_t_ = t_; } while (0)
void prof_dump(void);
#else
#define PROF_BEGIN()	do { } while (0)
#define PROF_RESTART()	do { } while (0)
#define PROF_MARK(p)	do { } while (0)
#define prof_dump()	do { } while (0)
#endif

#endif
