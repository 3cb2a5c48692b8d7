# SPDX-License-Identifier: GPL-2.0-or-later
# fcgi-demo: filled in by its issue.
