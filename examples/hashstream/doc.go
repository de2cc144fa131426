// Package hashstream is a streaming batch job on real data: the SHA-256 of
// every regular file under a tree (by default $(go env GOROOT)/src), then
// a per-directory aggregate, with the walk outside the workers.
//
//   - [Job] (and [Stream]) walks the tree on the calling goroutine and adds
//     a Hash packet per file through a scheduler.Hold: the hold keeps the
//     cycle open while the walk adds, with no worker blocked (a cycle
//     otherwise ends as soon as its stages drain and the workers idle).
//     Under Config.MaxQueued (DefaultMaxQueued, 256) with the Block option
//     the walk waits for room, so however much faster it is than the
//     hashing, at most MaxQueued × (1 + Workers) files are in flight: the
//     stage's queue, and each worker's take of at most what the queue
//     held. Each packet hashes into its worker's sums (a
//     scheduler.Reducer: no lock); once the walk releases its hold and the
//     Hash stage drains, one Aggregate packet merges them.
//   - [Sequential] is the reference, [Pipeline] the channel pipeline most
//     Go programs would write (a walker sending on a channel of 256 slots,
//     a goroutine per worker). The errgroup baseline (a goroutine per file
//     through an errgroup with SetLimit) is in the benchmarks module,
//     package github.com/wsched/wsched/benchmarks/batchbase, so that this
//     module does not depend on golang.org/x/sync.
//
// A file that cannot be read ends the cycle: Run returns a
// *scheduler.CycleError whose Item is the file's path (the packet's String,
// asked only on failure), the walk stops at its next add, and every file
// the walk added ran or was dropped and counted (added = ran + dropped,
// [Job.Walked]). A walk that fails on its own (a directory it cannot list)
// cancels the cycle and returns the walk's error.
//
// # Measured
//
// Intel Xeon, 2 vCPU, shared and noisy; Go 1.26.8; GOROOT/src (11,478
// files, 127.6 MB, 1,190 directories) in the page cache; 2 workers.
// Results with the command and commit: benchmarks/results/xeon2/hashstream.
//
// Against the other shapes, in one binary, the three in turn and the order
// rotating op by op (31 ops; medians, and the 95% confidence interval of
// the median op-by-op ratio):
//
//	cd benchmarks && go test -run '^$' -bench HashStream -benchtime 31x ./batchbase/
//
//	wsched 128.4 ms, channel pipeline 132.3 ms, errgroup + SetLimit 206.1 ms
//	wsched ÷ pipeline 0.965 (0.940–0.997), faster in 22 of 31 ops
//	wsched ÷ errgroup 0.624 (0.615–0.635), faster in all 31
//
// errgroup's SetLimit bounds the goroutines, not a queue: with as many
// goroutines as workers the walk stops each time all of them run, and a
// worker that finishes waits for the walk to find the next file.
//
// Memory, with the walk made 100× faster than the workers (each file
// hashed 22 times; `go run ./examples/hashstream/main -mem`), the live
// heap once the walk has added every file, over the heap before the run
// (a job that ran once already): MaxQueued 256, at most 376 files in
// flight, +126 KiB, which includes the per-directory sums of the 11,100
// files hashed by then; unbounded, 11,233 files in flight, +1,665 KiB
// (152 B a queued file). TestStreamBoundsInFlight checks it on a
// generated tree of 3,000 files in 91 directories: bounded (MaxQueued 32)
// at most 47–60 in flight and +5–92 KiB, unbounded 2,900 and +1.4–4.1 MiB.
//
// Many small items from one producer are the shapes' own cost
// (benchmarks/batchbase BenchmarkStreamSmall: 131,072 records of 64 bytes,
// SHA-256 each, about 0.3 µs): wsched 0.36× errgroup's time (a goroutine
// per item), but 1.58× the channel pipeline's (1.30× with Config.ParkSpin
// off): an add from outside the workers costs about 250 ns (admission,
// the bucket, a wake-up when a worker is parked) against a channel send's
// 100, and on 2 vCPUs idle workers that spin before parking take the
// producer's CPU. For items that small, add them in slices (AddAll), or
// produce them from packets (Spawn), where an add costs tens of
// nanoseconds.
package hashstream
