# SPDX-License-Identifier: GPL-2.0-or-later
# Manual pages.
#
# Later issues add their pages below this line.
dist_man_MANS += man/vsd.8 man/vsctl.8
