#!/bin/sh
# Run the Criterion suite. Two jobs: the machine has two cores, and the CPU-accuracy tests
# compare against the workloads' own clocks, which stay exact under contention.
set -eu
bin=$1
shift
exec "$bin" --jobs 2 "$@"
