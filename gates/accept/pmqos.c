// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --pm-qos on: a PM-QoS CPU latency request of 0 while connections come.
 *
 * A hand-over wakes the service thread on another CPU; if that CPU is idle
 * and halted (on a VM: a HLT the hypervisor must come back from) the wake-up
 * alone costs tens of microseconds. While a process holds
 * /dev/cpu_dma_latency open with 0 written to it, cpuidle governors pick no
 * state with an exit latency (haltpoll, menu and teo then poll), so idle
 * CPUs spin instead of halting and a wake-up is a few microseconds. That is
 * host-wide and costs a polling CPU's power (on a VM, a host CPU that the
 * vCPU no longer gives back), so the request is taken at the first accept
 * and dropped once no accept came for PMQOS_IDLE_NS; the kernel drops it as
 * well when the supervisor exits, however it exits (the request lives as
 * long as the open file). Off by default (vsctl-run(8), "Idle CPUs").
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"
#include "lib/log.h"

#define PMQOS_DEV	"/dev/cpu_dma_latency"
#define PMQOS_IDLE_NS	1000000000ull	/* drop the request 1 s after the last accept */
#define PMQOS_RETRY_NS	10000000000ull	/* after a failed open, try again in 10 s */
#define CPUIDLE_DRIVER	"/sys/devices/system/cpu/cpuidle/current_driver"

/*
 * Only a cpuidle driver reads the request: without one ("none", or no such
 * file: a VM with no haltpoll driver, a kernel without CONFIG_CPU_IDLE) the
 * idle loop halts whatever is asked. Said once, the first time it is taken.
 */
static void
say_if_no_driver(void)
{
	static int said;
	char drv[64] = "";
	FILE *f;

	if (said)
		return;
	said = 1;
	if ((f = fopen(CPUIDLE_DRIVER, "re"))) {
		if (!fgets(drv, sizeof(drv), f))
			drv[0] = '\0';
		fclose(f);
	}
	drv[strcspn(drv, "\n")] = '\0';
	if (!drv[0] || strcmp(drv, "none") == 0)
		log_warnx("--pm-qos: no cpuidle driver on this machine (%s: %s): the request "
		    "is held but changes nothing", CPUIDLE_DRIVER, drv[0] ? drv : "missing");
}

/* An accept came: hold the request (open it if it is not held). */
void
pmqos_note(struct gate *g, uint64_t now)
{
	int32_t zero = 0;
	int fd;

	if (!g->pmqos)
		return;
	g->pmqos_last = now;
	if (g->pmqos_held || (g->pmqos_failed && now - g->pmqos_failed < PMQOS_RETRY_NS))
		return;
	if ((fd = open(PMQOS_DEV, O_WRONLY | O_CLOEXEC)) < 0 ||
	    write(fd, &zero, sizeof(zero)) != (ssize_t)sizeof(zero)) {
		if (!g->pmqos_failed)
			log_warn("--pm-qos: %s", PMQOS_DEV);
		g->pmqos_failed = now ? now : 1;
		if (fd >= 0)
			close(fd);
		return;
	}
	g->pmqos_failed = 0;
	g->pmqos_fd = fd;
	g->pmqos_held = 1;
	g->pmqos_holds++;
	say_if_no_driver();
	log_debug("pm-qos: CPU latency request 0 held");
}

/* From the tick: drop the request once accepts stopped coming. */
void
pmqos_tick(struct gate *g, uint64_t now)
{
	if (g->pmqos_held && now - g->pmqos_last >= PMQOS_IDLE_NS)
		pmqos_release(g);
}

void
pmqos_release(struct gate *g)
{
	if (!g->pmqos_held)
		return;
	close(g->pmqos_fd);	/* the kernel removes the request with the file */
	g->pmqos_held = 0;
	log_debug("pm-qos: CPU latency request dropped");
}
