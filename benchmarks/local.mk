# SPDX-License-Identifier: GPL-2.0-or-later
# benchmarks: filled in by its issue.
