package synth

import (
	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
)

// Small records, by hand and with a fake clock, a two-worker, one-cycle run
// that uses every hook and every counter kind once or more: parks and wakes
// by the control goroutine and by a worker, a stamped steal (its flow
// starts where the stolen packet was spawned), END and BEGIN at the same
// time, an Unconstrained packet, two stages, packets that say how they
// were queued (an add, a spawn, a steal, a designated packet). Golden tests write it; its
// events are listed below in recording order.
func Small() *trace.Snapshot {
	var now int64
	r := tracebuf.NewRecorder(2, tracebuf.Options{MaxBytes: 1 << 16, Clock: func() int64 { return now }})
	scan, mark, fin := r.Intern("ScanStack"), r.Intern("MarkObjects"), r.Intern("Finalize")
	prep, clos := r.Intern("Prepare"), r.Intern("Closure")
	c, w0, w1 := r.Control(), r.Worker(0), r.Worker(1)
	at := func(t int64) { now = t }

	at(1000)
	w0.Park()
	w1.Park()
	at(2000)
	added := c.Stamp() // the stamp of an add (not recorded here) of ScanStack
	c.CycleBegin(1)
	c.StageOpen(1, prep)
	c.Counter(trace.CounterBucketDepth, 1, 1)
	c.WakeSent(0)
	c.Counter(trace.CounterParked, 0, 1)
	at(3000)
	w0.Unpark()
	w0.WakeReceived(true) // it had blocked: 1 ms after the wake-up was sent
	w0.Counter(trace.CounterBucketDepth, 1, 0)
	w0.PacketBeginQueued(scan, 1, 0, -1, added, false)
	at(3500)
	born := w0.Stamp()                      // worker 0 spawns two packets (stamped 3500)...
	w0.Counter(trace.CounterLocalLen, 0, 2) // ...and queues them
	w0.WakeSent(1)
	w0.Counter(trace.CounterParked, 0, 0)
	at(4000)
	w1.Unpark()
	w1.WakeReceived(false) // found its token while polling
	at(4200)
	// ...one of which worker 1 steals: flow id with thief 1+1 in the top
	// bits, as the scheduler does; the arrow starts at its spawn on w0.
	w1.StealStamped(0, 1, 2<<40|1, born, 0)
	w1.Counter(trace.CounterLocalLen, 1, 0)
	w1.PacketBegin(mark, 1, 2<<40|1)
	at(5000)
	w0.PacketEnd()
	w0.PacketBeginQueued(mark, 1, 0, 0, born, false) // END and BEGIN at the same time; the other packet spawned at 3500
	w0.Counter(trace.CounterLocalLen, 0, 0)
	at(6000)
	w1.PacketEnd()
	w1.PacketBeginQueued(fin, 0, 0, -2, 0, false) // an Unconstrained packet, designated
	at(6500)
	w1.PacketEnd()
	w1.Park()
	w1.Counter(trace.CounterParked, 0, 1)
	at(7000)
	w0.PacketEnd()
	c.StageClose(1)
	c.StageOpen(2, clos)
	c.Counter(trace.CounterBucketDepth, 2, 0)
	at(7100)
	w0.Park()
	w0.Counter(trace.CounterParked, 0, 2)
	c.StageClose(2)
	c.CycleEnd(1)
	at(8000)
	return r.Snapshot()
}
