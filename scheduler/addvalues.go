package scheduler

import (
	"reflect"
	"slices"

	"github.com/wsched/wsched/bucket"
)

// AddValues queues a copy of vs in a stage's bucket, in order, as AddAll
// queues packets, without an interface value per element: vs is copied
// once into memory of its own (one allocation, and one for the span that
// lends it to the bucket), and workers run each element in place there.
// For a slice of value packets bigger than a pointer, where AddAll of a
// []Packet boxes each one (BenchmarkAddValues). The copy is kept until its
// last element has run. Options and errors are AddAll's, but for Lend,
// which does not apply (an error wrapping ErrInvalid). In Stats and
// errors the packets are named as P's values are.
func AddValues[P Packet](h *Scheduler, vs []P, opts ...Option) error {
	s := h.sched()
	a := s.options(nil, opts)
	switch {
	case a.err != nil:
		return a.err
	case a.lend:
		return invalid("Lend applies to AddAll: AddValues copies")
	}
	if k := reflect.TypeFor[P]().Kind(); k == reflect.Interface || k == reflect.Pointer {
		// Pointer-shaped already: an interface per element costs nothing.
		ps := make([]Packet, len(vs))
		for i, v := range vs {
			ps[i] = v
		}
		return h.AddAll(ps, opts...)
	}
	if _, err := s.addTarget(a.stage); err != nil {
		return err
	}
	if len(vs) == 0 {
		return nil
	}
	if s.bounded {
		if err := s.admit(a.stage, len(vs), a.block, nil); err != nil {
			return err
		}
	}
	c := slices.Clone(vs)
	if !a.prio {
		b := s.buckets[a.stage]
		stamp := s.queued(nil, a.stage)
		n, ok, err := b.AddSpan(len(c), func(int) bucket.Source[task] {
			return &valuesSource[P]{vs: c, stamp: stamp}
		})
		if err != nil {
			s.unqueue(int(a.stage), len(c)) // refused whole
			return ErrClosed
		}
		if ok {
			if s.ctl != nil {
				s.recordAdd(stamp, false, len(c), a)
			}
			if n > 0 {
				s.wakeForAdd(n, a.wake, -1)
			}
			return nil
		}
		// Every span slot in use: copy the tasks in (below).
	}
	ps := make([]Packet, len(c))
	for i := range c {
		ps[i] = valueAt[P]{&c[i]}
	}
	return s.copyAdd(ps, a, slotBit) // counted by valueAt.Run
}

// valuesSource is AddValues' copy, lent to the bucket as a span.
type valuesSource[P Packet] struct {
	vs    []P
	stamp task
}

func (src *valuesSource[P]) Fill(dst []task, lo int) {
	t := src.stamp
	t.meta |= slotBit // counted by valueAt.Run
	for i := range dst {
		t.p = valueAt[P]{&src.vs[lo+i]}
		dst[i] = t
	}
}

func (src *valuesSource[P]) Release() { src.vs = nil }

// valueAt is one element of an AddValues copy as a Packet: a pointer,
// which an interface holds without an allocation. Its tasks carry
// slotBit: it counts itself under P's stats, as a spawned value does.
type valueAt[P Packet] struct{ p *P }

func (v valueAt[P]) Run(w *Worker) error {
	if !w.instrument && !w.countRun(slotKey[P]()) {
		countSlot(w, v.p)
	}
	return (*v.p).Run(w)
}

func (v valueAt[P]) valueName() string { return valueName(*v.p) }

func (v valueAt[P]) describe() string { return describeValue(*v.p) }

func (v valueAt[P]) statIndex(w *Worker) int {
	if ti := w.s.reg.valueType(slotKey[P](), reflect.TypeFor[P]()); ti.namer && !ti.iface {
		return w.nameIndex(namerAt(v.p))
	}
	return valueIndex(w, *v.p)
}
