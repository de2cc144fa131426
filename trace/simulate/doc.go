// Package simulate replays the cycles of a wsched trace on any number of
// virtual workers and under other policies: a deterministic discrete-event
// simulation that predicts each stage's makespan without the machine.
// `wsched simulate` (cmd/wsched) is its command-line face, and `wsched
// analyze` uses it to predict what a fix would give.
//
// # Model
//
// [Load] reads a Perfetto trace that says how each packet was queued
// (written by perfetto.Write with Options.Origins, as `wsched demo` does)
// and keeps, per cycle, each packet's recorded run time, stage and name,
// and what queued it: the packet that spawned it and the order of its
// spawns, or the add call (Add or AddAll, into which stage and lane, with
// which wake option, made by which packet how far into its run, or from
// outside), or AddDesignated, or a stage's sentinel. [Run] replays the
// cycles one after another on [Config].Workers virtual workers: every
// worker has the scheduler's queues (designated queue, private stack, held
// batch, deque) and the stages their buckets (a priority and a normal
// lane); a packet runs for its recorded time, and makes its spawns and
// adds when it made them; between packets the replay does what the
// scheduler does, in virtual time, charging the scheduler's measured
// costs ([Costs]): taking from its own queues, bucket takes, steals from a
// pseudo-random victim (each worker's generator seeded as the scheduler
// seeds it), search rounds, parking, the last-parked decision that opens
// the next stage, and wake-ups, whose latency depends on whether the woken
// worker still polls for its token (Config.ParkSpin) or has blocked.
//
// # One decision code
//
// Every decision the scheduler makes by a rule of package internal/policy
// the replay makes by calling the same function: a bucket take's size
// (TakeLimit), whether a take or a steal is held (HoldTake, HoldSteal), a
// steal's size (StealLimit, StealCount), whom an add or a stage opening
// wakes (AddWakes, SingleWake, OpenWakes), the surplus rule (Surplus),
// what a worker offers idle ones (WantsWork, Offer), when a searcher
// parks (GiveUp), whether a parked worker still polls (Polling), the
// order in which a worker looks for work (FindOrder, which the replay
// walks after each packet), and which packet types LearnHeavy marks heavy
// (PickHeavy, CarryHeavy). The constants and limits are policy's too (the
// private stack's PrivCap, MaxTake, MaxWorkers, MaxStage, the defaults
// DefaultBucketBatch, DefaultSpins, DefaultParkSpin and the default
// policies), and a trace's configuration is written by the one
// policy.Settings.String that both sides call.
//
// The control flow between those decisions is the replay's own, each
// function named after the scheduler's (engine.go): find and its search
// rounds (find.go), park's steps P1-P6 and the wake-ups W2-W3 (wake.go),
// the last-parked decision advance (stage.go), push and offerAll
// (worker.go), Add, AddAll and AddDesignated (scheduler.go). The other
// design, driving the scheduler's own worker loop on a virtual clock, was
// weighed and not taken: that loop is goroutines parked on channels,
// lock-free deques and atomics, and a virtual clock would need every
// park, wake, steal and clock read behind an interface that the hot path
// pays for (a spawned packet costs the scheduler 6-21 ns, scheduler's doc;
// an indirect call at each of its half-dozen such points is a measurable
// share), or a
// second build of the loop under a tag, which is the second copy again.
// A replay also runs at 4,094 virtual workers on one goroutine, with
// nothing to schedule but events.
//
// What keeps the two flows together is tests that run the real scheduler
// and its replay and compare what each decided, one for one:
// TestReplayDecisionsOneWorker (a spawn tree whose packets add to a later
// stage, a priority packet and a designated one, three cycles on one
// worker) and TestReplayDecisionsTwoWorkers (two workers whose
// interleaving is fixed by millisecond gaps: spawns, two steals a cycle,
// an offer of the private stack to an idle worker, wakes and parks) and
// TestReplayDecisionsBucketsLendSentinels (one worker: bucket takes of an
// AddAll of 40 and the held batch, a lent slice, a sentinel that re-arms
// its stage twice) check every packet begun, on which worker, from which lane and stage, every
// steal's victim and size, every wake, park and add call and every stage
// opening and close. The scheduler's TestFindOrder and this package's run
// the same scenario (a designated packet, 257 spawns of which 128 spill
// to the deque, a held batch, a priority packet, a normal one) against
// policy.FindOrder. A change to either flow on those paths fails one of
// them. Not covered by a real-against-replay comparison: bucket takes,
// held batches, Lend and sentinels on two workers, and learning (whose
// replay, learnHeavy and its routing, is tested on built workloads:
// TestLearnHeavyReplay, TestLearnHeavyOnlyItsStage).
//
// # Approximations
//
// A replay is exact about the scheduler's decisions and approximate about
// time:
//
//   - A packet keeps its recorded run time. Run on more workers, packets
//     that share caches and memory bandwidth, or a host's CPUs with other
//     jobs, take longer than recorded; on fewer, shorter.
//   - A spawn's stamp is the spawning worker's newest event, not a clock
//     reading of its own (a spawn reads no clock), so the replay knows
//     only that a packet was spawned after its stamp and before the next
//     event on its parent's worker: it takes the latest moment the
//     recording allows, the earliest of that next event, the parent's end
//     and the child's begin if it began elsewhere (a steal while the
//     parent ran). A parent that spawns early and then computes long with
//     no event on its track in between gives its children away later in
//     the replay than it did.
//   - An add from a packet is placed in the packet that was running when
//     it was stamped (the most recently begun one if several were): the
//     add's call cannot tell which worker makes it.
//   - A join's continuation is replayed as a spawn by the member that
//     finished last in the recording.
//   - Under learn_heavy, a value packet (AddValues, SpawnValue) is learned
//     and routed like any other: a trace does not tell it apart, while
//     the scheduler's LearnHeavy leaves value packets as added. The
//     replay learns after every cycle it replays; the scheduler forgets a
//     cycle that aborted, which a trace does not mark. An add made during
//     one cycle for the next is routed by the set learned at the end of
//     the cycle that made it (the scheduler used the set in force when
//     the add was made, one cycle older), and a routed packet wakes by the
//     one-packet rule, not by its call's wake option.
//   - A designated packet goes to worker target mod Workers; a program
//     that adds one per worker adds as many as it had workers.
//   - The costs are medians measured on one machine; a wake-up's latency,
//     above all a blocked worker's, depends on what else the machine runs.
//   - Contention between workers (a steal racing another, a CAS retry) is
//     not modelled: the first steal of a pass succeeds.
//
// # Input
//
// Only wsched's own traces with origins are replayed: Load returns
// ErrNoOrigins for one without, and an error, never a panic, for input it
// cannot read (FuzzSimulate). Load decodes through the loader trace/analyze
// uses too (trace/internal/wsfile), so both give one error, word for word,
// for a file that is no wsched trace or breaks the rules its writer keeps
// (analyze's TestBadInput); what only the replay reads, the recorded
// configuration and the add calls, only simulate refuses (analyze then
// reports with no predictions). analyze replays a file from its own
// decoding (FromFile). A cycle whose stage slices do not record
// every stage it opened is skipped (Workload.Skipped); a packet whose
// queuing is lost is replayed as added before its cycle
// (Workload.Orphans). A trace may claim up to 65,536 workers, but Load
// holds the claim to the workers whose tracks hold events (every worker of
// a wsched run records its first park on its own track before it starts):
// a file that claims more is refused with ErrClaimedWorkers, naming the
// claim and the tracks it holds (TestClaimedWorkersRejected,
// TestClaims65536Workers), since a replay at the claim would cost what
// the claim says, not what the file holds. Run replays at most MaxWorkers
// (4,094, the scheduler's bound) and refuses more, saying so; any count up
// to it may be asked for (Config.Workers, `wsched simulate -workers`).
//
// # Costs
//
// Load is O(n log n) in time and O(n) in memory in the packets, add calls,
// stages and worker-track events the file holds, whatever it claims. Run is O(e (log w +
// log s)) in time for e simulated events on w workers and s stages (a
// packet's begin, its spawns and adds, its end; each wake-up, search and
// park; a stage opening under wake-all wakes every parked worker) and
// O(p + w + s) in memory for p packets (O(e) with Options.Record): each
// stage's bucket count sits in a Fenwick tree, so a find, a park's look
// for work and the last-parked decision visit one stage, not every open
// one, and the sentinels are found by a cursor that only moves forward.
// At the recorded worker count, which Load holds to the file's tracks, e
// follows a real recording, which under wake-all holds each woken
// worker's wake, unpark and park (a forged file with one event on each
// of thousands of worker tracks backs its claim and still replays about
// three events per worker per stage opening). A count asked for beyond it costs what it asks:
// under wake-all, about three events per virtual worker per stage opening.
// FuzzSimulate holds Load and a Run at up to three workers to 256 bytes
// allocated and one simulated event per byte of file (plus 1 MiB and
// 1,000 events); TestCostLinear checks that bytes, objects and events grow
// linearly in the packets and by O(w) in the workers;
// TestManyStagesStepsFollowEvents holds what a replay of 2,047 stages
// visits (Result.steps) to 4 per simulated event plus the workers and
// stages it sets up; BenchmarkRun gives the time per event at 2, 64 and
// 4,094 workers.
//
// `wsched simulate` on recordings of `wsched demo -workers 2 -cycles 300
// -scale 0.05 -policy b,e` (prepare-b under wake-all, prepare-e under
// wake-n, 8.8 and 8.6 MB), those files with their claim rewritten to
// 4,094 workers, and a 2-worker wake-all recording of 30 cycles of 2,047
// stages (25 MB), written by
//
//	WSCHED_HOSTILE_DIR=DIR WSCHED_HOSTILE_CLAIM=DIR/prepare-b.pftrace go test ./trace/simulate/ -run TestWriteHostile
//	/usr/bin/time -f "%e s %M KB" wsched simulate FILE >/dev/null
//
// on a 2-vCPU KVM guest (Intel Xeon), Go 1.26.8, shared with other jobs:
//
//	                                     s     MiB  simulated events
//	prepare-b                         0.36      74           328,456
//	prepare-b -workers 64             0.51      73           529,361
//	prepare-b -workers 4094           3.74      74        11,813,606
//	prepare-e                         0.59      73
//	prepare-b claiming 4,094          0.33      66  (refused: ErrClaimedWorkers)
//	prepare-e claiming 4,094          0.39      61  (refused)
//	2,047 stages × 30 cycles          0.75      86
//
// A pass over the open stages at each find, in place of the Fenwick
// tree, takes 1.94 s on the 2,047-stage file; a replay of a rewritten
// file at its claim costs what `-workers 4094` costs on prepare-b.
package simulate
