package scheduler

import (
	"fmt"

	"github.com/wsched/wsched/bucket"
)

// lend queues ps into a.stage's bucket without copying it (AddAll with
// Lend): the bucket keeps a span of len(ps) packets whose source is ps,
// and workers read it in place, each take claiming the next run with one
// atomic add. Past a bucket's span slots it copies (copyAdd).
func (s *sched) lend(ps []Packet, a addOptions) error {
	st := a.stage
	b := s.buckets[st]
	stamp := s.queued(nil, st) // one stamp for the whole slice, as a copy
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
		s.unqueue(int(st), len(ps)) // refused whole
		return ErrClosed
	}
	if !ok {
		return s.copyAdd(ps, a, 0) // every span slot in use
	}
	if s.ctl != nil {
		s.recordAdd(stamp, false, len(ps), a)
	}
	if n > 0 {
		s.wakeForAdd(n, a.wake, -1)
	}
	return nil
}

// sliceSource is a lent slice: the caller's packets and the stage (and
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

func (src *sliceSource) Release() { src.ps = nil }

// nilElement stands in for a nil element of a lent slice, which AddAll
// does not look at when it queues it: running it ends the cycle like a
// failing packet, with an error that says which element it was.
type nilElement struct{ index int }

func (e nilElement) Run(*Worker) error {
	return fmt.Errorf("%w: nil Packet at index %d of a slice lent to AddAll", ErrInvalid, e.index)
}

func (nilElement) PacketName() string { return "nil lent element" }
