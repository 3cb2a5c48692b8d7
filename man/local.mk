# SPDX-License-Identifier: GPL-2.0-or-later
# Manual pages: the daemon (8), the client (8), the accept gate (8) and the
# rule-file language (5).
dist_man_MANS += man/vsd.8 man/vsctl.8 man/vsctl-run.8 man/vsrules.5
