package tracebuf

import "iter"

// Snapshot is a copy of a recorder's events, in nanoseconds since the
// recorder started, for exporters and tests.
type Snapshot struct {
	// Names maps a NameID to its string; Names[0] is "".
	Names []string
	// Buffers holds worker 0..Workers-1's buffers, then the control buffer.
	Buffers []Buffer
	// Overwrite is the recorder's full-buffer policy.
	Overwrite bool
	// End is when the snapshot was taken (ns since start); no event is later.
	End int64
	// Config is what the writer recorded with Recorder.SetConfig ("" if
	// nothing): the scheduler's policies and limits, as "key=value" pairs
	// separated by spaces.
	Config string
}

// Buffer is one buffer's events in a Snapshot.
type Buffer struct {
	// Worker is the worker index, or -1 for the control buffer.
	Worker int
	// Events are in recording order, with non-decreasing Time.
	Events []Event
	// Dropped counts events lost to the full-buffer policy: in stop mode the
	// newest (after Events), in Overwrite mode the oldest (before Events).
	Dropped uint64
	// DropStart and DropEnd bound the times of the dropped events in stop
	// mode (0 when none were dropped or in Overwrite mode).
	DropStart, DropEnd int64
}

// Workers is the number of worker buffers.
func (s *Snapshot) Workers() int { return len(s.Buffers) - 1 }

// Control is the control buffer.
func (s *Snapshot) Control() *Buffer { return &s.Buffers[len(s.Buffers)-1] }

// Name returns the string for id ("" for 0 or an unknown id).
func (s *Snapshot) Name(id NameID) string {
	if int(id) < len(s.Names) {
		return s.Names[id]
	}
	if id == nameIDOverflow {
		return overflowName
	}
	return ""
}

// Dropped is the total number of dropped events.
func (s *Snapshot) Dropped() uint64 {
	var n uint64
	for i := range s.Buffers {
		n += s.Buffers[i].Dropped
	}
	return n
}

// Snapshot copies out all events recorded so far. It must not run
// concurrently with a hook of r's worker buffers (see Recorder); it takes
// the control buffer's lock (SetControlLock) while it copies that one, so
// it may run while the writer records adds. Recording may continue
// afterwards. Cost: O(events) time and a copy of the events
// (24 bytes each). A nil recorder returns nil.
func (r *Recorder) Snapshot() *Snapshot {
	if r == nil {
		return nil
	}
	var cal calibration
	var end int64
	if r.opts.Clock != nil {
		cal = calibration{scale: 1}
		end = r.opts.Clock()
	} else {
		cal = calibrate(r.start, r.tick0)
		end = r.Now()
	}
	r.mu.Lock()
	names := append([]string(nil), r.names...)
	config := r.config
	r.mu.Unlock()
	s := &Snapshot{Names: names, Overwrite: r.opts.Overwrite, Config: config}
	s.Buffers = make([]Buffer, 0, len(r.workers)+1)
	for _, w := range r.workers {
		s.Buffers = append(s.Buffers, w.snapshot(cal))
	}
	mu := r.controlMu.Load()
	if mu != nil {
		mu.Lock()
	}
	s.Buffers = append(s.Buffers, r.control.snapshot(cal))
	if mu != nil {
		mu.Unlock()
	}
	for i := range s.Buffers {
		b := &s.Buffers[i]
		if n := len(b.Events); n > 0 && b.Events[n-1].Time > end {
			end = b.Events[n-1].Time
		}
		if b.DropEnd > end {
			end = b.DropEnd
		}
	}
	s.End = end
	return s
}

// snapshot copies w's events in order, converting and clamping times.
// Caller: Recorder.Snapshot, with the owner quiescent.
func (w *Buf) snapshot(cal calibration) Buffer {
	b := Buffer{Worker: w.worker}
	var parts [2][]Event
	if w.laps > 0 {
		parts = [2][]Event{w.buf[w.pos:], w.buf[:w.pos]}
		b.Dropped = (w.laps-1)*uint64(len(w.buf)) + uint64(w.pos)
	} else {
		parts[0] = w.buf[:w.pos]
		b.Dropped = w.dropped.Load()
	}
	b.Events = make([]Event, 0, len(parts[0])+len(parts[1]))
	var last int64
	for _, p := range parts {
		for _, e := range p {
			raw := e.Time
			e.Time = max(cal.ns(e.Time), last, 0)
			last = e.Time
			switch e.Kind() {
			case KindStealOrigin:
				// A birth stamp read on another core: clamp it into
				// [0, the steal's time].
				e.val = uint64(min(max(cal.ns(int64(e.val)), 0), e.Time))
			case KindPacketBegin, KindAdd:
				if e.HasBorn() || e.Kind() == KindAdd {
					// The stamp, or its low StampBits bits: rebuild the
					// raw time nearest the event's, then clamp as above.
					e.val = uint64(min(max(cal.ns(nearest(raw, int64(e.val))), 0), e.Time))
				}
			}
			b.Events = append(b.Events, e)
		}
	}
	if !w.overwrite && b.Dropped > 0 {
		b.DropStart = max(cal.ns(w.dropFirst), last)
		b.DropEnd = max(cal.ns(w.dropLast), b.DropStart)
	}
	return b
}

// All yields every event of every buffer in time order, with the worker
// index of its buffer (-1 for control). At equal times the control buffer
// comes first, then workers in index order, and each buffer keeps its own
// order (so an END recorded before a BEGIN stays before it).
func (s *Snapshot) All() iter.Seq2[int, Event] {
	return func(yield func(int, Event) bool) {
		// A binary min-heap of buffer cursors keyed by (time, order), where
		// order puts control (the last buffer) first.
		type cursor struct {
			buf   int // index into s.Buffers
			order int
			next  int
		}
		n := len(s.Buffers)
		h := make([]cursor, 0, n)
		less := func(a, b cursor) bool {
			ta := s.Buffers[a.buf].Events[a.next].Time
			tb := s.Buffers[b.buf].Events[b.next].Time
			if ta != tb {
				return ta < tb
			}
			return a.order < b.order
		}
		down := func(i int) {
			for {
				l := 2*i + 1
				if l >= len(h) {
					return
				}
				m := l
				if r := l + 1; r < len(h) && less(h[r], h[l]) {
					m = r
				}
				if !less(h[m], h[i]) {
					return
				}
				h[i], h[m] = h[m], h[i]
				i = m
			}
		}
		for i := range s.Buffers {
			if len(s.Buffers[i].Events) > 0 {
				order := i + 1
				if i == n-1 {
					order = 0
				}
				h = append(h, cursor{buf: i, order: order})
			}
		}
		for i := len(h)/2 - 1; i >= 0; i-- {
			down(i)
		}
		for len(h) > 0 {
			c := &h[0]
			b := &s.Buffers[c.buf]
			if !yield(b.Worker, b.Events[c.next]) {
				return
			}
			c.next++
			if c.next == len(b.Events) {
				h[0] = h[len(h)-1]
				h = h[:len(h)-1]
			}
			down(0)
		}
	}
}

// nearest returns the time nearest t whose low StampBits bits are born's:
// a stamp cut to those bits comes back whole if it was taken within
// 2^(StampBits-1) ticks of t.
func nearest(t, born int64) int64 {
	const mask = 1<<StampBits - 1
	d := (t - born) & mask
	if d > mask/2 {
		d -= mask + 1 // negative: the stamp is after t
	}
	return t - d
}
