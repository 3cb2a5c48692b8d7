# SPDX-License-Identifier: GPL-2.0-or-later
# The core benchmarks (issue 2): CPU-share fidelity and scale.
