package scheduler

import (
	"runtime/pprof"
	rtrace "runtime/trace"
	"time"

	"github.com/wsched/wsched/trace"
)

// The per-packet path when timing, tracing, runtime/trace regions or
// pprof labels are on (Config.PacketTiming and the rest).

// traceLocalLen records the deque's length (what thieves can take from
// w) for `wsched analyze`, after the deque gained packets. Owner.
func (w *Worker) traceLocalLen() {
	if w.tb != nil {
		w.tb.Counter(trace.CounterLocalLen, w.id, int64(w.local.Len()))
	}
}

// execInstrumented runs t with timing, tracing, runtime/trace regions or
// pprof labels, and counts it.
func (w *Worker) execInstrumented(t task) error {
	w.cur = t
	s := w.s
	var idx int
	if t.meta&slotBit != 0 {
		idx = t.p.(valuePacket).statIndex(w) // before it runs: the slot holds its value
	} else {
		idx = w.statIndex(t.p)
	}
	if s.cfg.PprofLabels && t.stage() != w.labelStage {
		pprof.SetGoroutineLabels(s.stageLabel[t.stage()])
		w.labelStage = t.stage()
	}
	if w.tb != nil {
		// Where and when it was queued (the replay of `wsched simulate`
		// needs it): packed into the begin event, no extra event.
		w.tb.PacketBeginQueued(w.types[idx].nameID, int(t.stage()), w.flow, t.origin(), t.born(), w.prio)
		w.flow, w.prio = 0, false
		w.inPacket = true
	}
	// PacketTiming reads the clock once per packet: in a burst, a packet's
	// end is the next one's start, so a packet's time includes the few
	// nanoseconds of scheduler work that precede it.
	var start time.Duration
	if s.timing {
		if !w.clockOK {
			w.clock, w.clockOK = time.Since(s.epoch), true
		}
		start = w.clock
	}
	w.types[idx].count++
	var err error
	if s.cfg.RuntimeTrace {
		r := rtrace.StartRegion(s.traceCtx, w.types[idx].name)
		err = t.p.Run(w)
		r.End()
	} else {
		err = t.p.Run(w)
	}
	if s.timing {
		w.clock = time.Since(s.epoch)
		w.types[idx].observe(w.clock - start)
		if s.cfg.LearnHeavy {
			w.observeLearn(t, idx, w.clock-start)
		}
	}
	if w.tb != nil {
		w.tb.PacketEnd()
		w.inPacket = false
	}
	return err
}
