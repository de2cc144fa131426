#!/usr/bin/env bash
# scaling.sh runs the many-core measurements from prebuilt binaries, each
# step under its own time limit, writing everything under one directory:
#
#   matrix/     policies × workloads × workers 1,2,4,…,MAXW, with every peer
#   scaling/    gcmark and prepare (wsched only) at every worker count 1..MAXW:
#               the speedup curves
#   deque.log   the deque micro-benchmarks and their baselines at -cpu 2,MAXW
#   wMAXW/      sweeps (batch, spins, wake, steal) and saturation at MAXW workers
#   demo-wN.log `wsched demo` at 2 and MAXW workers: makespan / lower bound
#
# It is how the committed many-core results were made (see README.md), on a
# machine that has no Go toolchain: build the binaries first, from the
# repository root,
#
#   C=$(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD || echo -dirty)
#   (cd benchmarks && CGO_ENABLED=0 go build -o ../devbin/bench \
#       -ldflags "-X github.com/wsched/wsched/benchmarks/harness.BuildCommit=$C" ./cmd/bench)
#   CGO_ENABLED=0 go build -o devbin/wsched ./cmd/wsched
#   CGO_ENABLED=0 go test -c -o devbin/deque.test ./deque
#   BIN=devbin OUT=/tmp/scaling benchmarks/scripts/scaling.sh
#
# batch is left out: it parses $GOROOT/src, which such a machine lacks.
# QUICK=1 shrinks every step to a smoke run (to check the script).
set -u
BIN=${BIN:-devbin}
OUT=${OUT:-bench-out/scaling}
MAXW=${MAXW:-$(nproc)}
K=${COUNT:-8}
I=${ITERS:-3}
SCALE=${SCALE:-1} # multiplies every time limit
BT=${BENCHTIME:-200ms}
DC=${DEQUECOUNT:-8}
if [ "${QUICK:-0}" = 1 ]; then K=2 I=1 BT=10ms DC=1; fi
mkdir -p "$OUT"
ws=1
list=1
while [ $((ws * 2)) -le "$MAXW" ]; do ws=$((ws * 2)); list="$list,$ws"; done
[ "$ws" -ne "$MAXW" ] && list="$list,$MAXW"
all=$(seq -s, 1 "$MAXW")

. "$(dirname "$0")/step.sh"

cat /proc/loadavg >"$OUT/loadavg-start.txt"
step deque 90 "$BIN/deque.test" -test.run '^$' -test.cpu "2,$MAXW" -test.count "$DC" -test.benchtime "$BT" \
	-test.bench '^Benchmark(DequePushPop|MutexDequePushPop|ChanPushPop|ChaseLevPushPop|DequeSteal|MutexDequeSteal|DequeStealContended|InjectorPushSteal|DequeVsMutexPushPop)$'
step matrix 200 "$BIN/bench" -workers "$list" -count "$K" -iters "$I" -warmup 1 \
	-workloads fanout,spawn,uniform,forkjoin,irregular,gcmark,prepare -out "$OUT/matrix"
step scaling 150 "$BIN/bench" -workers "$all" -count "$K" -iters "$I" -warmup 1 -peers none \
	-workloads gcmark,prepare -out "$OUT/scaling"
step sweeps-w$MAXW 120 "$BIN/bench" sweep -workers "$MAXW" -count "$K" -iters "$I" -warmup 1 \
	-workloads fanout,spawn,uniform,forkjoin,irregular,gcmark -out "$OUT/w$MAXW" batch spins parkspin wake steal
step saturate-w$MAXW 40 "$BIN/bench" saturate -workers "$MAXW" -step 100ms -out "$OUT/w$MAXW"
for w in $(printf '%s\n' 2 "$MAXW" | sort -un); do
	step demo-w$w 60 "$BIN/wsched" demo -workers "$w" -trace=false
done
cat /proc/loadavg >"$OUT/loadavg-end.txt"
