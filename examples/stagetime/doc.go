// Package stagetime measures, per stage of a scheduler cycle, the makespan
// and the lower bound no schedule can beat, from the packets' own timings.
//
// For a stage run by W workers whose packets took t₁ … tₙ,
//
//	lower bound = max(max tᵢ, Σ tᵢ / W)
//
// No schedule finishes sooner: the longest packet runs on one worker, and the
// work cannot be shared by more than W. The ratio makespan ÷ lower bound is
// what the scheduler's policies cost (1.00 is perfect). The bound ignores
// dependencies between packets (a packet that spawns another must run
// first), so a stage whose work is a chain can sit above 1 for reasons no
// policy can fix.
//
// A stage's makespan runs from the moment its work could start to the end of
// its last packet. The start is, in order of preference, the time given to
// [Clock.Open] (for example by the packet that adds the stage's work), the
// end of the previous stage's last packet, or the cycle start ([Clock.Start]).
//
// # Roles
//
//   - The goroutine that runs the cycle calls New once, Start before each
//     cycle and Stages after it, while no packet runs.
//   - A packet running on worker w calls Now when it starts and Done(w, …)
//     when it ends; each worker's accumulators are written only by that
//     worker, so Done takes no lock and touches no shared cache line.
//   - Any packet may call Open.
//
// Reading the clock costs about 35 ns per call on the 2-vCPU AMD
// EPYC KVM guest (Go 1.26.8: time.Since through the vDSO), so
// two reads per packet are noise for packets longer than a few microseconds.
package stagetime
