#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# gate-push.sh again with the gate in --fast exact, after the default mode:
# every accept decided in the supervisor, no thread waiting in the kernel.
GATE_PUSH_FAST=exact exec "$(dirname "$0")/gate-push.sh"
