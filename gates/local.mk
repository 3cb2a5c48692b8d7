# SPDX-License-Identifier: GPL-2.0-or-later
# gates: filled in by its issue.
