package scheduler

import (
	"fmt"

	"github.com/wsched/wsched/bucket"
)

// AddSlice queues the packets of ps in stage st's bucket, in order, as
// BulkAdd does, but without copying them: the scheduler keeps ps and its
// workers read it in place, each bucket take claiming the next run of it
// with one atomic add. The caller's cost is O(1), whatever len(ps), and
// nothing is allocated for the packets; BulkAdd first checks and copies
// every packet into the bucket's blocks (about 3–4 ns a packet here, and
// 24 bytes each until the cycle ends).
//
// ps is lent: the caller must not modify its elements until every packet
// of it has been taken, which it knows for certain once the Run that
// drains stage st has returned (or Close has). Reading ps meanwhile is
// fine. AddSlice does not look at the elements, so a nil one is found
// only when a worker takes it: it then ends the cycle like a panicking
// packet, with a *PanicError named "nil AddSlice element" whose Value
// wraps ErrNilPacket and gives the element's index (BulkAdd rejects the
// whole slice instead). Wakes like BulkAdd.
//
// The bucket serves its queued packets (Add, BulkAdd) before the slices
// queued with AddSlice, and those in the order they were added. A bucket
// keeps up to bucket.MaxSpans (64) slices per cycle; past that, AddSlice
// copies ps as BulkAdd does, into the queue, so those packets are served
// before the lent slices still waiting. A lent slice is released (the
// scheduler drops its reference) at the end of the first cycle that finds
// every slice of its stage taken, or by Close. There is no priority-lane
// form: priority packets are taken one at a time, so there is no copy to
// save.
func (s *Scheduler) AddSlice(st StageID, ps []Packet, opts ...AddOption) error {
	b, err := s.addTarget(st)
	if err != nil {
		return err
	}
	o, err := s.addOpts(opts)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		return nil
	}
	stamp := s.queued(nil, st) // one stamp for the whole slice, as BulkAdd
	n, ok, err := b.AddSpan(len(ps), func(slot int) bucket.Source[task] {
		// Under the bucket's span lock: slot is ours until Release.
		srcs := s.spanSrcs[st]
		if srcs == nil {
			srcs = new([bucket.MaxSpans]sliceSource)
			s.spanSrcs[st] = srcs
		}
		src := &srcs[slot]
		src.ps, src.stamp = ps, stamp
		return src
	})
	if err != nil {
		return ErrClosed
	}
	if !ok {
		return s.copyAdd(st, ps, false, true, opts) // every span slot in use
	}
	if n > 0 {
		s.wakeForAdd(n, o.wake, -1)
	}
	return nil
}

// sliceSource is an AddSlice: the caller's packets and the stage (and
// trace stamp) that every task made from them carries. The bucket calls
// Fill from the workers that take runs of it, and Release when it forgets
// the span.
type sliceSource struct {
	ps    []Packet
	stamp task
}

func (src *sliceSource) Fill(dst []task, lo int) {
	t := src.stamp
	for i, p := range src.ps[lo : lo+len(dst)] {
		if p == nil {
			p = nilElement{lo + i}
		}
		t.p = p
		dst[i] = t
	}
}

// nilElement stands in for a nil element of a slice lent by AddSlice,
// which does not look at its elements when it queues them: running it
// ends the cycle like a panicking packet, with an error that says which
// element it was.
type nilElement struct{ index int }

func (e nilElement) Run(*Worker) {
	panic(fmt.Errorf("%w: element %d of a slice lent by AddSlice", ErrNilPacket, e.index))
}

func (nilElement) PacketName() string { return "nil AddSlice element" }

func (src *sliceSource) Release() { src.ps = nil }
