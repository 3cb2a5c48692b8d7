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

/* The index of S in NAMES[N], or -1. */
static int
name_index(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

const char *
rules_gate_name(enum rules_gate g)
{
	return (unsigned)g < RULES_GATE_MAX ? gate_names[g] : "?";
}

int
rules_gate_from_name(const char *s)
{
	return name_index(gate_names, RULES_GATE_MAX, s);
}

static const char *const proto_names[RULES_PROTO_MAX] = {
	[RULES_PROTO_FASTCGI] = "fastcgi",
	[RULES_PROTO_MYSQL] = "mysql",
	[RULES_PROTO_OTHER] = "other",
};

const char *
rules_proto_name(enum rules_proto p)
{
	return (unsigned)p < RULES_PROTO_MAX ? proto_names[p] : "?";
}

int
rules_proto_from_name(const char *s)
{
	return name_index(proto_names, RULES_PROTO_MAX, s);
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
