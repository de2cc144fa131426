// Package synth generates deterministic scheduler traces for tests: a
// discrete-event simulation of a staged work-stealing scheduler that drives
// a real recorder (internal/tracebuf's, which trace.Recorder is) through
// its hooks with a simulated clock, so the
// exporters and the analyser can be tested on known workloads without a
// scheduler and without timing noise.
package synth
