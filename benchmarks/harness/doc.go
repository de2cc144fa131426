// Package harness runs wsched's benchmark matrix and judges it: policies ×
// workloads × worker counts, plus the peer executors, K invocations × I
// iterations each, interleaved (round k starts at configuration k mod n, so
// drift in the machine falls on every configuration alike).
//
// # Model
//
// A Workload (workloads.go, examples.go) is something a Target (wsched
// under one policy, or a peer from package system) can run once per
// operation. An invocation builds a fresh scheduler or pool, runs the
// warm-up operations untimed, forces a GC, then times each iteration; its
// sample is the median of its iterations. Every sample carries
// allocations, bytes and GC cycles per operation from runtime.MemStats.
// Results are written in the Go benchmark format (benchfmt), headed by the
// environment fingerprint (fingerprint.go: CPU model, microcode, MHz,
// governor, kernel, Go version, GOMAXPROCS, commit, load average at start
// and end).
//
// Statistics come from golang.org/x/perf/benchmath, as in benchstat:
// medians, order-statistic 95% confidence intervals and Mann–Whitney U
// verdicts ("no difference proven at 95% confidence" when p ≥ 0.05).
// Compare warns first when two files' fingerprints differ. Sweep, Saturate
// and SelfTest build on the same machinery: sweeps of one scheduler
// setting, open-loop arrival curves (submit-to-start latency p50/p99 per
// rate), and the A/A false-alarm and planted-slowdown checks.
//
// # Caller roles
//
// cmd/bench is the only caller; every function runs on the calling
// goroutine and starts (and stops) the executors it measures.
//
// # Costs
//
// The harness adds a time.Now pair per timed iteration, and two
// runtime.ReadMemStats calls, a runtime.GC and two getrusage calls per
// invocation, outside the timed iterations (operations take 0.1–100 ms). -quick runs
// the whole matrix in about a minute on the project's 2-core machine; the
// measured tables are in ../README.md.
package harness
