// Package analyze explains a Perfetto trace written by wsched
// (trace/perfetto): per cycle and per stage, how long it took against what
// was possible, and where the time went. `wsched analyze FILE` prints it.
//
// # Verdicts
//
// The report leads with a verdict for each stage of each cycle that ran
// over VerdictThreshold (1.1) times its lower bound: the cause, from the
// figures below (one packet longer than the rest can balance, begun late
// and ending the stage; workers asleep while work was queued: late
// wake-ups; workers awake and idle while work sat queued on another;
// otherwise too little work at a time), the fix among the scheduler's
// options, and the ratio trace/simulate's replay predicts with it beside
// the replay's ratio of the stage as recorded. The replay tries the fixes
// the causes call for (Priority for the heavy packet when an add queued
// it; the other wake policies, the add calls' wake option and a longer
// ParkSpin for late wake-ups; the other steal and take policies and
// LocalLIFO for idle workers) on the recorded workers and keeps the best
// if it gains more than 0.02; when none does, the verdict says so and what
// is left (split the packet, queue more work at a time). Then one line
// sums each stage up over the cycles: its median ratio, range, how many
// cycles went over, their causes and the most frequent fix with its median
// predicted ratio. Then the details below, cycle by cycle.
//
// A stage's ratio in verdicts and summary is its makespan from when its
// work could start (its opening, or its first packet's queuing if later)
// to its last packet's end, over its bound: the definition of `wsched
// demo` and `wsched simulate`. The details print it ("from when its work
// could start") above the stage's window figures, which run from its
// opening. Traces that do not say when their packets were queued (written
// without perfetto.Options.Origins, or by older wsched) have only the
// window's ratio, and no predictions (Report.PredictionNote says why).
//
// # Figures
//
// For each cycle (a "cycle" slice on the control track; a trace without
// cycles is one window) and for each stage in it (a slice on the stage
// track, from the stage's opening to the next opening or its close):
//
//   - makespan: the window's length;
//   - lower bound: max(longest packet, work ÷ workers), where work is the
//     summed duration of the window's packets (a stage's own packets for a
//     stage). No schedule on that many workers finishes sooner; ratio =
//     makespan ÷ lower bound, 1.00 is perfect. Unconstrained (stage 0) has
//     no bound: its packets run beside every stage over the whole cycle.
//     A stage's window starts when it opens, so it includes whatever ran
//     before its work could start (in the prepare example, the packet that
//     waits for the mutators to stop), and designated packets count under
//     stage 0; `wsched demo` times a stage from when its work could start
//     (examples/stagetime), as the verdicts do, so its figures for the
//     same run are lower;
//   - busy %: per worker, the share of the window spent inside packets (any
//     stage's). Every worker is listed unless the trace claims too many
//     workers for its size (see Input);
//   - steals and packets moved;
//   - wake-up latency p50/p99/max: from a "wake" instant aimed at a worker
//     to that worker's next packet; a wake after which the worker parks
//     again without running a packet is counted as futile instead. Split
//     by the worker's next "woken" instant (its "blocked" argument): wakes
//     to a
//     blocked worker, whose OS thread the system had to wake, and wakes to
//     a polling one (or one that had not finished parking), with each
//     group's median;
//   - heaviest packet types by total time, with count and maximum.
//
// # Idle time and the critical path
//
// Each window also reports
//
//   - idle while work was queued elsewhere: per worker, the time it ran no
//     packet while an open stage's bucket or another worker's local deque
//     held packets, according to the counter tracks, and how much of it
//     the worker spent parked (asleep until a wake-up; the rest it was
//     awake between packets: searching, taking, stealing, the scheduler's
//     own work, or off its CPU); gaps of at least 10 µs are counted and the
//     longest is named. This is as good as the
//     scheduler's samples: bucket depth at a stage's opening and after
//     every bucket take, a deque's length after its owner took a batch
//     from a bucket or stole, and the victim's after each steal (not after
//     spawns, which would cost an event per packet). A value holds until
//     the next sample, except that a park empties the parking worker's
//     deque and a stage's close empties the open buckets (both implied by
//     the scheduler's protocol). So work a worker spawned for itself counts
//     only once a thief has sampled it;
//   - critical path, approximate: the chain that ends with the window's
//     last packet to finish, followed back to the window's start. A step
//     back from a stolen packet follows its steal arrow to the packet that
//     was running where and when the stolen one was queued: the packet
//     that spawned it (an arrow from the control track, an add from
//     outside the workers, is not followed; an arrow drawn from the victim
//     at the steal, whose origin was not recorded, leads to the packet the
//     victim was running then). From any other packet the step goes to
//     the previous one on its worker (which held the worker or spawned
//     it). Reported: its length, its busy time against its span (the rest is waiting:
//     search, wake-ups, steals), the steals it crosses, its longest
//     packets. A cycle's chain joins its stages' (stages are barriers).
//
// # Timeline picture
//
// [SVG] draws one window of a trace as an SVG picture, with the standard
// library alone (`wsched analyze -svg OUT`): a row per worker with its
// packet slices coloured by packet type (the ten with the most time in the
// window have colours of their own, listed in a legend), the time it was
// parked, the time it was idle while work was queued elsewhere (as in the
// figures above), a mark where it stole and an arrow from where the stolen
// packet was queued, and a mark where it was woken. The window is the
// stage that lost the most time against its lower bound (makespan −
// bound; ties: the worse ratio) unless SVGOptions name a stage, a cycle,
// or both. The picture is deterministic and bounded: at
// most 128 workers and 2,000 packet rectangles (and as many parked and idle
// bars), slices too narrow to see merged with their neighbours, twice as
// many each time until the bound holds, each merged rectangle coloured as
// its longest slice and as opaque as the worker was busy in it (the
// picture says so); 300 steal arrows, 500 marks of each kind; under 2 MB.
// docs/timeline.svg is an example, drawn from a simulated trace by
//
//	go test ./trace/analyze/ -run TestTimelineExample -update
//
// # Input
//
// Only wsched's own traces are accepted: the file must decode as Perfetto
// packets and hold the process track described "wsched trace v1". A
// truncated file, garbage, JSON or another program's trace gives an error
// (ErrNotWsched for a foreign trace), never a panic (FuzzAnalyze); the
// rules and messages are simulate's too (one loader, trace/internal/wsfile).
// What only the verdicts' replays read, the recorded configuration and the
// add calls, does not stop a report: a file whose add calls cannot be read
// gets its verdicts with no predictions, Report.PredictionNote saying why.
//
// A file costs what it holds, not what it claims (see Costs):
//
//   - the process track's "workers=N" (at most 65,536) is the number of
//     workers for the lower bound and the listings, but a worker takes
//     room only once the file describes its track;
//   - a window lists a worker when one of its packet or park slices begins
//     or ends in the window, or when all the work queued during part of
//     the window sat in that worker's own deque. Any other worker did one
//     thing throughout the window: ran one packet, slept, or was idle and
//     awake. When the file describes a track for every worker it claims
//     and workers × windows (cycles, their stages and their Unconstrained
//     packets) is at most the file's size in bytes, as in the traces of
//     `wsched demo` (wsched's writer describes every worker's track, and
//     a worker's wakes, parks and packets take bytes in every stage it
//     works in), every window lists those workers too, each with its
//     figures (TestClaimedWorkersListed). Otherwise they are summed up in
//     Window.Others: how many ran a packet throughout, how many slept
//     throughout, and the idle time while work was queued (and its gaps)
//     that each idle one had, the same for all of them.
//     Window.LongestGapWork is then -1 when the longest gap was one of
//     theirs;
//   - wsched draws cycles one after another and stage slices one after
//     another (trace/internal/timeline closes the open one before it opens
//     the next), so a file whose cycles overlap, such as a cycle nested in
//     another, or whose stage slices overlap is rejected with an error
//     that names the two slices: every stage of such a file would
//     otherwise be analysed again in every cycle around it. Cycles may
//     touch. Each stage belongs to one cycle: the last one to begin at or
//     before the stage's opening, if it has not ended before then (a stage
//     that opens where one cycle ends and the next begins belongs to the
//     next). Stages outside every cycle are not reported;
//   - a critical path is followed over at most as many steps as packets
//     start in its window, whatever loop a hand-made file's steal arrows
//     draw.
//
// # Roles
//
// [File] and [Bytes] are safe to call from any goroutine; a [Report] is a
// plain value. `wsched analyze FILE` (cmd/wsched) is the command-line face.
//
// # Costs
//
// What a file holds sets the cost, not what it claims (see Input): the
// model takes a few words per event; each window finds its events by
// binary search and costs those, plus one entry per worker it lists; the
// queue sweep keeps one segment per change in what is queued, whatever
// the number of workers, and each worker's idle time while work was queued
// comes from prefix sums and a max tree over its runs. Time is thus
// O(n log n) in the events (sorts and searches) and memory O(n).
// The file is decoded once (trace/internal/wsfile), and the verdicts'
// replays read that decoding (simulate.FromFile). BenchmarkAnalyze, per
// byte of file, on `wsched demo`'s traces (2 workers, scale 0.05, 3
// cycles, recorded by the benchmark), simulated ones, and files that claim
// 65,536 workers or nest 1,000 cycles (rejected: the figure is the cost of
// finding out); medians of 5 runs, on a 2-vCPU AMD EPYC guest (Go names it
// "Oxide Virtual Turin-like Processor"), Go 1.26.8, shared with other
// jobs (benchmarks/results/epyc2/one-loader):
//
//	go test -run XXX -bench Analyze -benchtime 10x ./trace/analyze/
//
//	                                          file     ns/byte  B/byte
//	demo/prepare-b                            65 KB         42    16.1
//	demo/gcmark-n-half                        79 KB         42    20.3
//	synth/10Cycles (36,660 packets)          2.2 MB         36    20.4
//	synth/500Cycles (37,132 packets)         3.3 MB         53    21.0
//	claims/65536Workers100EmptyCycles        4.8 KB         25    24.3
//	claims/65536Workers300EmptyCycles         14 KB         20    31.1
//	claims/65536Workers3000Samples            51 KB         20    16.4
//	claims/65536Workers10000Samples          170 KB         21    17.7
//	claims/1000CyclesNestedAround1000Stages   91 KB         16     6.1
//
// The verdicts' replays (package simulate, at most 1 + 9 runs of the
// trace's cycles) run at the recorded worker count, which simulate
// holds to the workers whose tracks hold events: a file that claims more
// gets its verdicts from the windows and no predictions, saying why
// (simulate.ErrClaimedWorkers; TestVerdictClaimedWorkers). Each replay
// is O(e (log w + log s)) in its simulated events, workers and stages,
// and at the recorded count e follows a real recording, which holds each
// wake-up, park and packet the replay makes at that count. A forged file
// with one event on each of thousands of worker tracks and many stages
// backs its claim cheaply: under wake-all its replay simulates about
// three events per worker per stage opening, more than the file holds.
// A verdict
// finds its replayed ratio by one lookup, not a pass over the cycles.
// `wsched analyze` on recordings of `wsched demo -workers 2 -cycles 300
// -scale 0.05 -policy b,e` (prepare-b under wake-all, prepare-e under
// wake-n, 8.8 and 8.6 MB), those files with their claim rewritten to
// 4,094 workers, and a 2-worker wake-all recording of 30 cycles of 2,047
// stages (25 MB), written by
//
//	WSCHED_HOSTILE_DIR=DIR WSCHED_HOSTILE_CLAIM=DIR/prepare-b.pftrace go test ./trace/simulate/ -run TestWriteHostile
//	/usr/bin/time -f "%e s %M KB" wsched analyze FILE >/dev/null
//
// on a 2-vCPU KVM guest (Intel Xeon), Go 1.26.8, shared with other jobs:
//
//	                                     s     MiB  text report
//	prepare-b                         1.49      86       1.3 MB
//	prepare-e                         1.56      94       1.3 MB
//	prepare-b claiming 4,094          0.95      84       1.4 MB  (no predictions)
//	prepare-e claiming 4,094          1.16      84       1.4 MB  (no predictions)
//	2,047 stages × 30 cycles          4.14     316        45 MB
//
// Replayed at the claim, with every window listing every claimed worker,
// a rewritten file takes 27-29 s, 736 MiB and a 135 MB report; a pass over
// every open stage per find and over every stage per verdict takes 15.6 s
// on the 2,047-stage file.
//
// FuzzAnalyze holds every input to at most 128 bytes allocated per byte
// plus 256 KiB, ten simulated events per byte plus 10,000 for the replays
// together, and a text report of 64 bytes per byte plus 64 KiB, and with
// WSCHED_STRESS=1 to 5 µs per byte plus 250 ms (ten times that under the
// race detector); FuzzSVG holds a picture to the same budget and 2 MiB.
//
// A picture costs the analysis plus a pass over the window's events for
// each drawn worker: BenchmarkSVG, on the simulated traces above, the worst
// stage or the whole of cycle 1, same machine:
//
//	go test -run XXX -bench SVG -benchtime 10x ./trace/analyze/
//
//	                                   ns/byte  B/byte  picture
//	synth/10Cycles   worst stage            55    18.8   246 KB
//	synth/10Cycles   cycle 1                82    20.2   428 KB
//	synth/500Cycles  worst stage            72    17.6   6.8 KB
//	synth/500Cycles  cycle 1                44    17.6    20 KB
package analyze
