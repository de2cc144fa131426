package simulate

// Costs are the scheduler's own costs, in nanoseconds, that a replay adds
// to the recorded packets' run times. A packet's recorded time already
// holds what it does inside Run: its spawns and adds.
type Costs struct {
	// Local: from a packet's end to the next one's start when the next
	// comes from the worker's own queues (private stack, held batch,
	// deque, designated queue): the per-packet path of a value spawn
	// chain on one worker.
	Local int64
	// Trace: the two tracing hooks of a packet (begin and end), paid by a
	// traced run (Config.Tracer) only.
	Trace int64
	// Take and TakePer: a bucket take, and each packet it moves.
	Take, TakePer int64
	// Steal and StealPer: a steal, and each packet it moves.
	Steal, StealPer int64
	// Round: one empty search round (a pass over the other workers'
	// deques, runtime.Gosched, the worker's queues and the open buckets).
	Round int64
	// Park: a worker's park, and the last-parked decision when it is the
	// last (open the next stage, wake).
	Park int64
	// WakePolled and WakeBlocked: from a wake-up sent to the woken worker's
	// first search, when it was polling for its token (Config.ParkSpin)
	// and when it had blocked (the OS must run its thread; on a virtual
	// machine, the host must run its virtual CPU).
	WakePolled, WakeBlocked int64
}

// MeasuredCosts are Costs measured on the project's 2-vCPU AMD EPYC
// (family 26) virtual machine, Go 1.26.8, GOMAXPROCS=2, nothing else
// running; medians of 5 runs, from
//
//	go test -run '^$' -bench 'ReplayCosts' -count 5 ./scheduler/
//	go test -run '^$' -bench 'TraceEvent/On$' -count 5 ./internal/tracebuf/
//
// ReplayCosts reports each cost under its name (local-ns, take-ns,
// take-per-ns, steal-ns, steal-per-ns, round-ns, park-ns, wake-polled-ns,
// wake-blocked-ns); Trace is twice TraceEvent/On. WakeBlocked, a wake-up
// of a worker blocked for a millisecond, is the host running a halted
// virtual CPU again: 164-189 µs here, and two to four times that while
// other jobs kept the host busy (docs/simulate.md).
var MeasuredCosts = Costs{
	Local:       20,
	Trace:       24,
	Take:        15,
	TakePer:     1,
	Steal:       8,
	StealPer:    7,
	Round:       124,
	Park:        37,
	WakePolled:  2044,
	WakeBlocked: 168822,
}
