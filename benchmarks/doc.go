// Package benchmarks holds wsched's benchmarks against itself and against
// the executors Go programs use today. It is its own module, so that the
// peers (ants, pond, conc, errgroup) and the plotting and statistics
// libraries stay out of wsched's go.mod.
//
// The workloads run as ordinary testing.B benchmarks in this package
// (go test -bench . -benchmem) and from the harness, cmd/bench, which runs
// the matrix of policies × workloads × worker counts with interleaved
// invocations, environment fingerprints, confidence intervals and
// verdicts computed with golang.org/x/perf. See README.md.
//
// Packages:
//   - workload: task trees (fan-out, spawn, fork-join, irregular) and the
//     calibrated spin that stands for packet work.
//   - system: one interface over wsched and the peers.
//   - harness: the matrix runner, fingerprint, statistics, reports,
//     plots, sweeps, saturation curves and self-tests.
package benchmarks
