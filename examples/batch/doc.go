// Package batch is a real batch job on real data: parse every Go file
// under $(go env GOROOT)/src with go/parser and count the top-level
// declarations of each package.
//
//   - [Sequential] walks the tree and parses file by file: the reference.
//   - [Job] runs on a wsched scheduler in three stages. List: a packet per
//     directory reads it, spawns a packet per subdirectory and queues a
//     Parse packet per file (files of [BigFile] bytes or more in the
//     priority lane, so that the longest parses start first). Parse: a
//     packet per file, adding to its worker's own tally. Aggregate: one
//     packet merges the tallies.
//
// The comparison with what most Go programs would do, one goroutine
// walking the tree and starting a goroutine per file through an errgroup
// limited to the number of workers, results merged under a mutex, lives in
// the benchmarks module (its own go.mod, so that this module does not
// depend on golang.org/x/sync): package
// github.com/wsched/wsched/benchmarks/batchbase, built from this package's
// [Walk], [ParseFile] and [Tally], with its tests and BenchmarkBatch; the
// harness's batch workload (benchmarks/harness) runs it as the errgroup
// peer.
//
// Every way must give the same [Result] (the tests check it). Directories
// the go command ignores (testdata, names starting with . or _) are
// skipped; a file go/parser rejects is counted in Totals.ParseErrors, not
// in its package.
//
// # Measured
//
// With batchbase's BenchmarkBatch (sequential, errgroup and wsched in one
// test binary)
//
//	cd benchmarks && go test -run XXX -bench Batch -benchtime 1x -count 5 ./batchbase/
//
// over GOROOT/src of Go 1.26.8 (6,421 files, 86 MB, 988 packages, in the
// page cache), GOMAXPROCS=2. Each run allocates about 930 MB (23 M
// allocations) in go/parser, all three ways alike, so the Go GC takes a large
// share of the CPU.
//
//	AMD EPYC, 2-vCPU KVM guest, shared with other jobs:
//	  sequential 2.7–5.0 s, errgroup 1.8–3.0 s, wsched 1.7–2.6 s
//	  paired runs (errgroup and wsched alternating): wsched ÷ errgroup
//	  median 0.91 (10 pairs, wsched faster in 8) and 0.98 (20 pairs, 12)
//	Intel Xeon VM, taskset to 2 cores, quiet: 10 pairs, median errgroup
//	  2.05 s, wsched 1.86 s, ratio 0.97 (0.80–1.13), wsched faster in 8
//
// So wsched is not slower in any of these; a sign test on 8 of 10 gives
// p ≈ 0.11: no difference proven at 95% confidence. Longer series of
// process pairs, the order alternating (benchmarks/scripts/batch-pairs.sh),
// and the harness's smaller job ($GOROOT/src/go) prove no difference either
// way; their figures are in benchmarks/JOURNAL.md. The Parse stage runs
// within 1.002× of its lower bound.
//
// Parsing costs about 0.7 ms per file on one core and allocates; a
// scheduler's per-packet cost (well under a microsecond) is invisible here,
// and so is errgroup's goroutine per file. What the scheduler adds is
// parallel listing, the heavy files first, and no shared lock.
package batch
