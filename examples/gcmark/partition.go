package gcmark

import (
	"sync"
	"sync/atomic"

	"github.com/wsched/wsched/scheduler"
)

// The partitioned Closure (TracePartitioned) cuts the objects into
// partitions of consecutive ids, each a range of whole lines of the mark
// bitmap (NewBitmap starts it on a line), and marks each partition from
// one packet at a time: the partition's packet is the only writer of the
// partition's mark bits while it runs, so it sets them plainly, and no
// line of the bitmap is written from two CPUs at once. A packet scans
// depth-first from its partition's stack as the dfs design does; a
// referent in another partition goes, unmarked, into that partition's
// inbox (gathered in a buffer per worker and partition, handed over when
// forwardBatch are there and, for the rest, when the sending packet's
// stack is empty), and starts a packet for that partition if none is
// queued or running. Root slots go to their partitions' inboxes in
// Prepare, all at the end of each root packet; Closure starts with one
// packet per partition.
//
// The protocol, per partition, under its mutex: active says that a
// packet for the partition is queued or running and will take what is
// in the inbox before it ends. A forwarder appends to the inbox and, if
// active is clear, sets it and spawns a packet. A packet looks at the
// inbox's count every partitionCheck objects and takes the inbox when the
// count is non-zero; when its stack is empty and it has handed on its
// own forwards, it clears active if the inbox is empty (else takes it
// and goes on). So a referent is never left in an inbox with no
// packet to take it, and two packets of one partition never run at once:
// a new one is spawned only after the last one cleared active, under the
// same mutex, which also orders the last one's plain mark bits before
// the next one's.

// forwardBatch is how many referents for one partition a worker gathers
// before it hands them over.
const forwardBatch = 64

// partitionCheck is how many objects a partition's packet scans between
// two looks at its inbox.
const partitionCheck = 256

// partLine is the partitions' granularity in objects: 512 mark bits, one
// 64-byte line of the bitmap.
const partLine = 512

// partition is one partition's inbox and flag (see above). Padded so that
// two partitions' locks never share a cache line.
type partition struct {
	mu     sync.Mutex
	items  []uint32     // referents forwarded to it, not yet marked
	spare  []uint32     // the buffer items had before the last take (its packet's)
	active bool         // a packet for it is queued or running
	n      atomic.Int32 // len(items), read without the lock
	_      [64]byte
}

// markPartition is a packet of the partitioned Closure: it marks
// partition p until p's stack and inbox are empty. A value packet.
type markPartition struct {
	m *Marker
	p uint32
}

// PacketName names the packet.
func (k markPartition) PacketName() string { return "MarkPartition" }

func (k markPartition) Run(w *scheduler.Worker) error {
	m := k.m
	t := m.clock.Now()
	m.drainPartition(w, &m.workers[w.ID()], k.p)
	m.clock.Done(w.ID(), int(stageClosure), t)
	return nil
}

// partitionOf returns the partition of object o.
func (m *Marker) partitionOf(o uint32) uint32 { return o / m.partSize }

// drainPartition marks partition p (see the protocol above).
func (m *Marker) drainPartition(w *scheduler.Worker, ws *workerState, p uint32) {
	pt := &m.parts[p]
	lo := p * m.partSize
	n := min(m.partSize, uint32(m.heap.Objects())-lo)
	stack := ws.big[:0]
	ws.big = nil
	var slots, scanned int64
	for {
		stack = m.takeInbox(pt, stack)
		for len(stack) > 0 {
			var s, k int64
			if len(m.parts) == 1 {
				// Nothing to forward, nothing forwarded: seq-dfs's own
				// loop (a second loop with a test a slot for the
				// partition's bounds ran 12% slower alone), returning
				// every cancelCheck objects only to watch for the
				// cycle's end. (With more partitions the packets are
				// short, 2-6 ms at the longest on the default heap, and
				// a cancelled cycle ends within a millisecond without
				// a look: BenchmarkCancelLatency.)
				stack, s, k = scanDFS(m.heap, m.marks, true, m.opts.Batch, stack, cancelCheck)
				slots, scanned = slots+s, scanned+k
				if ended(w.Context().Done()) {
					// The cycle ended early (a failure, a cancel): its
					// marks are abandoned, and Prepare resets the inbox.
					ws.big = stack[:0]
					return
				}
				continue
			}
			stack, ws.far, s, k = scanPartition(m.heap, m.marks, lo, n, m.opts.Batch, stack, ws.far, partitionCheck)
			slots, scanned = slots+s, scanned+k
			if len(ws.far) > 0 {
				m.route(w, ws)
			}
			if pt.n.Load() > 0 {
				stack = m.takeInbox(pt, stack)
			}
		}
		for d, out := range ws.out {
			if len(out) > 0 {
				m.forward(w, ws, uint32(d))
			}
		}
		pt.mu.Lock()
		if len(pt.items) == 0 {
			pt.active = false
			pt.mu.Unlock()
			break
		}
		pt.mu.Unlock()
	}
	ws.slots += slots
	ws.marked += scanned
	ws.big = stack[:0]
}

// takeInbox marks the referents in pt's inbox, pushing those it marked.
// Only pt's packet calls it.
func (m *Marker) takeInbox(pt *partition, stack []uint32) []uint32 {
	pt.mu.Lock()
	items := pt.items
	pt.items = pt.spare[:0]
	pt.n.Store(0)
	pt.mu.Unlock()
	for _, c := range items {
		if plainMark(m.marks, c) {
			stack = append(stack, c)
		}
	}
	pt.spare = items[:0]
	return stack
}

// route sorts the referents in ws.far into ws.out by partition, handing a
// batch over when it is full.
func (m *Marker) route(w *scheduler.Worker, ws *workerState) {
	for _, c := range ws.far {
		d := m.partitionOf(c)
		ws.out[d] = append(ws.out[d], c)
		if len(ws.out[d]) >= forwardBatch {
			m.forward(w, ws, d)
		}
	}
	ws.far = ws.far[:0]
}

// forward hands ws.out[d] to partition d's inbox, and spawns a packet
// for d if none is queued or running.
func (m *Marker) forward(w *scheduler.Worker, ws *workerState, d uint32) {
	start := m.parts[d].put(ws.out[d])
	ws.forwarded += int64(len(ws.out[d]))
	ws.out[d] = ws.out[d][:0]
	if start {
		scheduler.Spawn(w, markPartition{m: m, p: d})
	}
}

// scanPartitionRoots is scanRoots for TracePartitioned: each root
// referent goes to its partition's inbox (every partition has a packet
// queued in Closure, so nothing is spawned).
func (m *Marker) scanPartitionRoots(ws *workerState, slots []uint32) {
	rounds := m.opts.RootSlotWork
	for _, v := range slots {
		if rounds > 0 {
			ws.sink += decode(v, rounds)
		}
		if v == Null {
			continue
		}
		ws.slots++
		d := m.partitionOf(v)
		ws.out[d] = append(ws.out[d], v)
	}
	for d, out := range ws.out {
		if len(out) > 0 {
			m.parts[d].put(out) // active since queuePrepare: no packet to start
			ws.out[d] = out[:0]
		}
	}
}

// put appends items to pt's inbox and sets active, reporting whether it
// was clear: then the caller must start a packet for pt.
func (pt *partition) put(items []uint32) (start bool) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	pt.items = append(pt.items, items...)
	pt.n.Store(int32(len(pt.items)))
	start = !pt.active
	pt.active = true
	return start
}

// scanPartition is scanDFS with plain bits for the partition [lo, lo+n):
// a referent outside it goes on far, unmarked.
func scanPartition(h *Heap, marks Bitmap, lo, n uint32, batch int, stack, far []uint32, budget int) (_, _ []uint32, slots, scanned int64) {
	off, words := h.Offsets, h.Words
	var at, hd [MaxBatch]uint32
	for budget > 0 && len(stack) > 0 {
		k := min(batch, len(stack))
		for i, o := range stack[len(stack)-k:] { // independent loads
			at[i] = off[o]
			hd[i] = words[at[i]]
		}
		stack = stack[:len(stack)-k]
		budget -= k
		for i := k - 1; i >= 0; i-- {
			s := words[at[i]+1 : at[i]+1+hd[i]]
			for j := len(s) - 1; j >= 0; j-- {
				c := s[j]
				if c == Null {
					continue
				}
				slots++
				if c-lo >= n { // another partition's
					far = append(far, c)
				} else if plainMark(marks, c) {
					stack = append(stack, c)
				}
			}
		}
		scanned += int64(k)
	}
	return stack, far, slots, scanned
}
