#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Run the Criterion suite. Two jobs: the machine has two cores, and the CPU-accuracy tests
# compare against the workloads' own clocks, which stay exact under contention.
set -eu
bin=$1
shift
# --timeout: the hang guard on a real machine (the suites allow more for emulated guests). The
# longest test, the SLURM suite's one, takes 2-2.5 minutes: its array has a task killed at its
# time limit, which SLURM sets in whole minutes and checks every 30 s.
exec "$bin" --jobs 2 --timeout 300 "$@"
