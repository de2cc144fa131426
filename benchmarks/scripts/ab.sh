#!/usr/bin/env bash
# ab.sh measures an old and a new build side by side on one machine, the
# two alternating round by round so that drift hits both alike: the
# harness (wsched only) at WORKERS, the scheduler's benchmarks SCHEDBENCH
# (default: the fan-out ones) at -cpu 2 and MAXW, and `wsched demo`'s stage ratios at 2 and MAXW workers.
# From BIN it needs bench-{old,new}, sched-{old,new}.test and
# wsched-{old,new}, built for instance as
#
#   (cd benchmarks && CGO_ENABLED=0 go build -o ../devab/bench-new ./cmd/bench)
#   CGO_ENABLED=0 go test -c -o devab/sched-new.test ./scheduler
#   CGO_ENABLED=0 go build -o devab/wsched-new ./cmd/wsched
#
# and the same from a worktree of the old commit. Compare afterwards with
# benchstat OUT/matrix-old.txt OUT/matrix-new.txt (and sched-*.txt).
set -u
BIN=${BIN:-devab}
OUT=${OUT:-bench-out/ab}
ROUNDS=${ROUNDS:-4}
MAXW=${MAXW:-$(nproc)}
W=${WORKERS:-2,$MAXW}
WL=${WORKLOADS:-fanout,spawn,uniform,forkjoin,irregular,gcmark,prepare}
SB=${SCHEDBENCH:-FanoutPhases|BulkAddFanout} # the scheduler benchmarks to run
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
	# ABBA: the build that runs second in a round ran measurably slower on
	# the shared EPYC (fan-out and spawn at 1 worker, +5% and +8% with p <
	# 0.001 for the second of two identical-path builds; nothing with the
	# order reversed), so the order alternates too.
	order="old new"
	[ $((r % 2)) -eq 0 ] && order="new old"
	for v in $order; do
		"$BIN/bench-$v" -workers "$W" -workloads "$WL" -peers none -count 4 -iters 3 -warmup 1 \
			-plots=false -out "$OUT/m-$v-$r" >/dev/null 2>&1
		cat "$OUT/m-$v-$r/raw.txt" >>"$OUT/matrix-$v.txt"
		for c in $(printf '%s\n' 2 "$MAXW" | sort -un); do
			"$BIN/sched-$v.test" -test.run '^$' -test.bench "$SB" \
				-test.cpu "$c" -test.benchtime 200ms >>"$OUT/sched-$v.txt" 2>&1
			"$BIN/wsched-$v" demo -trace=false -workers "$c" -cycles 5 -policy a,b,c,d,e \
				>>"$OUT/demo-$v-w$c.txt" 2>/dev/null
		done
	done
	echo "round $r done"
done
