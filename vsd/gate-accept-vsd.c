// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The VS table from vsd over its control socket. Filled in when the vsd core
 * lands (issue 2); until then the gate takes --vs-table files.
 */
#include "config.h"

#include <errno.h>

#include "gate-accept.h"

int
vstab_load_vsd(struct vstab *t, const char *sockpath)
{
	(void)t;
	(void)sockpath;
	return -ENOTSUP;
}
