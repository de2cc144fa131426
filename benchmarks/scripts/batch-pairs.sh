#!/usr/bin/env bash
# batch-pairs.sh runs the batch job (examples/batch: parse every Go file
# under GOROOT/src) with errgroup and with wsched (BenchmarkBatch of
# benchmarks/batchbase) in PAIRS pairs of separate processes, the order
# alternating, one timed op each, and prints one line per process:
# "errgroup NS" or "wsched NS". Separate processes keep one side's heap and
# GC state from the other's; alternating the order makes drift hit both
# alike. CPUS pins the processes (taskset -c LIST), and GOMAXPROCS follows
# it. Run it from the repository's root.
#
#   (cd benchmarks && CGO_ENABLED=0 go test -c -o ../devbin/batch.test ./batchbase)
#   PAIRS=20 CPUS=0,1 benchmarks/scripts/batch-pairs.sh
set -u
BIN=${BIN:-devbin/batch.test}
N=${PAIRS:-20}
CPUS=${CPUS:-}
run() {
	${CPUS:+taskset -c "$CPUS"} "$BIN" -test.run '^$' -test.bench "Batch/$1\$" -test.benchtime 1x |
		awk -v s="$1" '/^BenchmarkBatch/ {print s, $3}'
}
for i in $(seq 1 "$N"); do
	if [ $((i % 2)) = 1 ]; then
		run errgroup
		run wsched
	else
		run wsched
		run errgroup
	fi
done
