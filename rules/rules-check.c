// SPDX-License-Identifier: GPL-2.0-or-later
/* The tests' stand-in for `vsctl check`: rules/rules-check [--dump] FILE. */
#include "config.h"

#include "rules.h"

int
main(int argc, char **argv)
{
	return rules_check_main(argc, argv);
}
