#!/usr/bin/env bash
# suite.sh runs the whole benchmark suite from a prebuilt bench binary, each
# step under its own time limit, writing everything under one directory:
#
#   selftest-w2/   A/A false-alarm rate and planted-slowdown detection, 2 workers
#   w2/            sweeps (batch, spins, parkspin, order, wake, steal) and saturation at 2 workers
#   matrix/        policies × workloads × workers 1..MAXW, with every peer
#   wMAXW/         sweeps and saturation at MAXW workers (when MAXW > 2)
#
# It is how the committed results were made (see README.md): on the 2-core
# development machine with the defaults below, and on a 16-core machine
# with MAXW=16 (batch left out there: it parses $GOROOT/src, which a bare
# machine lacks).
#
#   go build -o bench-out/bin/bench -ldflags "-X github.com/wsched/wsched/benchmarks/harness.BuildCommit=$(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- .. || echo -dirty)" ./cmd/bench
#   BENCH=bench-out/bin/bench OUT=bench-out/suite MAXW=2 scripts/suite.sh
set -u
B=${BENCH:-bench-out/bin/bench}
OUT=${OUT:-bench-out/suite}
MAXW=${MAXW:-$(nproc)}
WL=${WORKLOADS:-fanout,spawn,uniform,forkjoin,irregular,gcmark,prepare,batch}
K=${COUNT:-6}
I=${ITERS:-3}
TRIALS=${TRIALS:-100}
SCALE=${SCALE:-1} # multiplies every time limit
mkdir -p "$OUT"
ws=1
list=1
while [ $((ws * 2)) -le "$MAXW" ]; do ws=$((ws * 2)); list="$list,$ws"; done
[ "$ws" -ne "$MAXW" ] && list="$list,$MAXW"

. "$(dirname "$0")/step.sh"

step selftest-w2 80 "$B" selftest -workers 2 -trials "$TRIALS" -count 8 -iters 2 -out "$OUT/selftest-w2"
step sweeps-w2 120 "$B" sweep -workers 2 -count "$K" -iters "$I" -warmup 1 -workloads "$WL" -out "$OUT/w2" batch spins parkspin order wake steal
step matrix 150 "$B" -workers "$list" -count "$K" -iters "$I" -warmup 1 -workloads "$WL" -out "$OUT/matrix"
step saturate-w2 40 "$B" saturate -workers 2 -step 100ms -out "$OUT/w2"
if [ "$MAXW" -gt 2 ]; then
	step saturate-w$MAXW 40 "$B" saturate -workers "$MAXW" -step 100ms -out "$OUT/w$MAXW"
	step sweeps-w$MAXW 90 "$B" sweep -workers "$MAXW" -count "$K" -iters "$I" -warmup 1 -workloads "$WL" -out "$OUT/w$MAXW" batch spins parkspin order wake steal
fi
cat /proc/loadavg >"$OUT/loadavg-end.txt"
