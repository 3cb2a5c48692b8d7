// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the gate cannot see, it refuses (vsctl-run(8), "Refused calls").
 *
 * The filter sends the service's accept and accept4 to the supervisor. Two
 * other ways to accept would not reach it, so the filter sends them too,
 * only to be refused, counted, and logged once per supervisor:
 * - io_uring: an IORING_OP_ACCEPT runs in the kernel without a system call
 *   the filter sees. io_uring_setup (and io_uring_enter and
 *   io_uring_register, for a ring made outside the service and passed in)
 *   fail with ENOSYS, what a kernel without io_uring returns: liburing
 *   users and glibc-style fallbacks take that as "not here" and use
 *   accept() instead, where EPERM is often taken as a hard error;
 * - the 32-bit (int 0x80, ia32) and x32 system call ABIs, whose numbers the
 *   native filter does not match: their accept, accept4 and socketcall
 *   (SYS_ACCEPT, SYS_ACCEPT4; libseccomp matches socketcall's call number
 *   for accept on x86) fail with EPERM. Every other call of those ABIs runs,
 *   so a 32-bit program still works; it cannot serve connections.
 * An ABI the filter does not name at all is killed (SCMP_FLTATR_ACT_BADARCH):
 * on x86-64 every ABI is named.
 *
 * A listener of the service's own. The kernel runs every filter of a task
 * and keeps the action of highest precedence; of two USER_NOTIF it keeps
 * the filter installed last (seccomp_run_filters(); include/uapi/linux/
 * seccomp.h: the newer filter "can override any SECCOMP_IOCTL_NOTIF_SEND
 * from earlier filters"). A filter a process of the service added, sending
 * accept to a listener it answers with CONTINUE, would see the accepts
 * before the gate. The kernel refuses a second listener among one task's
 * filters while the first is open (EBUSY, seccomp(2): "at most one"; Linux
 * 5.0), but that ends with our listener. So seccomp(2) whose flags (a
 * register: no user memory read) include SECCOMP_FILTER_FLAG_NEW_LISTENER
 * comes here on every ABI and fails with EBUSY, what the kernel answers
 * anyway, so software sees no change; with vsd-gate gone the filter's
 * USER_NOTIF fails it with ENOSYS, where the kernel's check would have let
 * a listener in. A listener is the only way to get USER_NOTIF answered:
 * the notification fd comes only from that flag (seccomp_unotify(2)),
 * PR_SET_SECCOMP takes no flags, and USER_NOTIF with no listener fails
 * the call with ENOSYS, which hurts only its caller. (A proposed flag,
 * SECCOMP_FILTER_FLAG_ALLOW_NESTED_LISTENERS, would let a listener nest
 * only under listeners that set it; ours does not.) Filters without a
 * listener, a program sandboxing itself, install as before.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <seccomp.h>

#include "gate.h"
#include "lib/log.h"

#define X32_SYSCALL_BIT		0x40000000u
/* io_uring_setup, _enter, _register: one number on every ABI (Linux 5.1
 * numbered new calls alike everywhere; x32 adds its bit) */
#define NR_IO_URING_FIRST	425u
#define NR_IO_URING_LAST	427u

/* The ABIs a native one runs besides itself. */
static const struct {
	uint32_t native, compat[2];
} abis[] = {
	{ SCMP_ARCH_X86_64, { SCMP_ARCH_X86, SCMP_ARCH_X32 } },
	{ SCMP_ARCH_AARCH64, { SCMP_ARCH_ARM, 0 } },
};

/* io_uring, and seccomp(2) asking for a listener, of each ABI of ctx */
static int
add_ring_rules(scmp_filter_ctx ctx)
{
	static const char *const calls[] = { "io_uring_setup", "io_uring_enter", "io_uring_register" };
	size_t i;
	int r, nr;

	for (i = 0; i < ARRAY_SIZE(calls); i++) {
		if ((nr = seccomp_syscall_resolve_name(calls[i])) == __NR_SCMP_ERROR)
			return -ENOSYS;
		if ((r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0)) < 0)
			return r;
	}
	/* any operation: only SECCOMP_SET_MODE_FILTER takes the flag today */
	return seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(seccomp), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_FILTER_FLAG_NEW_LISTENER,
		SECCOMP_FILTER_FLAG_NEW_LISTENER));
}

/*
 * Add to ctx (the native filter, its attributes set) the refused calls: the
 * native ABI's io_uring, and a filter for the other ABIs merged in.
 */
int
refuse_filter_add(void *ctx)
{
	uint32_t native = seccomp_arch_native(), badarch, nnp;
	scmp_filter_ctx c;
	size_t i, k;
	int r;

	if ((r = add_ring_rules(ctx)) < 0)
		return r;
	for (i = 0; i < ARRAY_SIZE(abis) && abis[i].native != native; i++)
		;
	if (i == ARRAY_SIZE(abis))
		return 0;	/* no other ABI we know of: BADARCH kills its calls */
	if (!(c = seccomp_init(SCMP_ACT_ALLOW)))
		return -ENOMEM;
	/* seccomp_merge() wants the same attributes on both */
	if ((r = seccomp_attr_get(ctx, SCMP_FLTATR_ACT_BADARCH, &badarch)) < 0 ||
	    (r = seccomp_attr_get(ctx, SCMP_FLTATR_CTL_NNP, &nnp)) < 0 ||
	    (r = seccomp_attr_set(c, SCMP_FLTATR_ACT_BADARCH, badarch)) < 0 ||
	    (r = seccomp_attr_set(c, SCMP_FLTATR_CTL_NNP, nnp)) < 0 ||
	    (r = seccomp_arch_remove(c, SCMP_ARCH_NATIVE)) < 0)
		goto fail;
	for (k = 0; k < ARRAY_SIZE(abis[i].compat) && abis[i].compat[k]; k++)
		if ((r = seccomp_arch_add(c, abis[i].compat[k])) < 0)
			goto fail;
	if ((r = seccomp_rule_add(c, SCMP_ACT_NOTIFY, SCMP_SYS(accept), 0)) < 0 ||
	    (r = seccomp_rule_add(c, SCMP_ACT_NOTIFY, SCMP_SYS(accept4), 0)) < 0 ||
	    (r = add_ring_rules(c)) < 0)
		goto fail;
	if ((r = seccomp_merge(ctx, c)) == 0)
		return 0;	/* c is part of ctx now */
fail:
	seccomp_release(c);
	return r;
}

/* Of another ABI than native_arch (an audit arch)? x32 calls carry
 * x86-64's arch and their bit in the number. */
static int
foreign(const struct seccomp_notif *req, uint32_t native_arch)
{
	return req->data.arch != native_arch ||
	    (native_arch == AUDIT_ARCH_X86_64 && ((uint32_t)req->data.nr & X32_SYSCALL_BIT));
}

static int
ring_call(const struct seccomp_notif *req, uint32_t native_arch)
{
	uint32_t nr = (uint32_t)req->data.nr;

	if (native_arch == AUDIT_ARCH_X86_64)
		nr &= ~X32_SYSCALL_BIT;
	return nr >= NR_IO_URING_FIRST && nr <= NR_IO_URING_LAST;
}

/* seccomp(2) (the filter sends it only with NEW_LISTENER)? Another ABI's
 * number through libseccomp: its audit arch is its SCMP_ARCH_, but for x32,
 * whose calls carry x86-64's. */
static int
listener_call(const struct seccomp_notif *req, uint32_t native_arch)
{
	uint32_t arch = req->data.arch;

	if (!foreign(req, native_arch))
		return req->data.nr == SYS_seccomp;
	if (arch == native_arch)
		arch = SCMP_ARCH_X32;
	return req->data.nr == seccomp_syscall_resolve_name_arch(arch, "seccomp");
}

/* Is req a call the filter sends us only to be refused? */
int
refuse_wanted(const struct seccomp_notif *req, uint32_t native_arch)
{
	return foreign(req, native_arch) || ring_call(req, native_arch) ||
	    req->data.nr == SYS_seccomp;
}

/* Refuse req, count it, and log the first of each kind. */
void
refuse_call(struct gate *g, const struct seccomp_notif *req, uint32_t native_arch)
{
	struct seccomp_notif_resp resp = { .id = req->id };
	int ring = ring_call(req, native_arch), lsn = !ring && listener_call(req, native_arch);
	const char *abi = !foreign(req, native_arch) ? "" :
	    req->data.arch == native_arch ? "x32 " : "32-bit ";
	const char *what = ring ? "io_uring" : lsn ? "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER)" :
	    "accept";
	uint64_t *n = ring ? &g->refused_ring : lsn ? &g->refused_listener : &g->refused_compat;

	resp.error = ring ? -ENOSYS : lsn ? -EBUSY : -EPERM;
	/* ENOENT: the caller was interrupted or died meanwhile */
	if (ioctl(g->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		log_warn("%s: SECCOMP_IOCTL_NOTIF_SEND", __func__);
	if ((*n)++)
		return;
	log_warnx("refused %s%s (system call %u) of thread %d with %s: %s; further ones are "
	    "counted (status \"refused\"), not logged", abi, what, req->data.nr, (int)req->pid,
	    ring ? "ENOSYS" : lsn ? "EBUSY" : "EPERM", lsn ?
	    "a listener of its own would answer accepts before the gate" :
	    "the gate cannot see what it would accept");
}
