// SPDX-License-Identifier: GPL-2.0-or-later
/* The language's keywords for gates and actions, both ways: the bottom layer
 * that the parser, the checks, the compiler and the dump all name things by. */
#include "config.h"

#include <string.h>

#include "rules.h"

static const char *const gate_names[RULES_GATE_MAX] = {
	[RULES_GATE_ACCEPT] = "accept",
	[RULES_GATE_SOCKET] = "socket",
	[RULES_GATE_FORK] = "fork",
};

const char *
rules_gate_name(enum rules_gate g)
{
	return (unsigned)g < RULES_GATE_MAX ? gate_names[g] : "?";
}

int
rules_gate_from_name(const char *s)
{
	int g;

	for (g = 0; g < RULES_GATE_MAX; g++)
		if (strcmp(s, gate_names[g]) == 0)
			return g;
	return -1;
}

const char *
rules_action_name(enum rules_action a)
{
	switch (a) {
	case RULES_STAY:	 return "stay";
	case RULES_TO_VS:	 return "vs";
	case RULES_TO_CREATOR:	 return "creator";
	case RULES_TO_REQUESTER: return "requester";
	case RULES_TO_HOME:	 return "home";
	}
	return "?";
}
