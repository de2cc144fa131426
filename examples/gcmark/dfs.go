package gcmark

import (
	"github.com/wsched/wsched/scheduler"
)

// markStack is the depth-first Closure packet: a mark stack. Its Run
// pops the newest object, scans it and pushes the referents it marks,
// until the stack is empty; every SplitEvery objects it asks
// Worker.ShouldSplit, and when a worker is idle it gives the oldest
// SplitShare of its stack away as a packet of its own (see split).
//
// A packet starts in one of three forms: objs holds referents still to be
// claimed (marked), in a buffer it owns (a root packet from Prepare), or
// in the heap itself (view: a chunk of a huge array, not written); or
// objs holds objects this worker's marks already claimed (a split-off
// stack), to be scanned. A stored by value packet (scheduler.Spawn puts
// it in the worker's arena): 40 bytes, no allocation.
type markStack struct {
	m       *Marker
	objs    []uint32
	claimed bool // objs are marked: scan them
	view    bool // objs is a slice of the heap: claim into a buffer of our own
}

// PacketName names the packet.
func (p markStack) PacketName() string { return "MarkStack" }

func (p markStack) Run(w *scheduler.Worker) error {
	m := p.m
	t := m.clock.Now()
	ws := &m.workers[w.ID()]
	stack := p.objs
	if !p.claimed {
		if p.view {
			stack = m.getStack(ws)
		} else {
			stack = stack[:0] // claimed referents overwrite the ones read
		}
		slots, marks := int64(0), m.marks
		for _, o := range p.objs {
			if o == Null {
				continue
			}
			slots++
			if casMark(marks, o) {
				stack = append(stack, o)
			}
		}
		ws.slots += slots
		ws.marked += int64(len(stack))
	}
	m.drain(w, ws, stack)
	m.clock.Done(w.ID(), int(stageClosure), t)
	return nil
}

// drain empties stack (a buffer this packet owns), depth-first: newest
// first, an object's slots pushed last to first so that its first slot is
// scanned next, which reads a heap built depth-first in allocation order.
// Every SplitEvery objects it asks w.ShouldSplit and, if another worker
// is idle, splits (split). Huge arrays are scanned as packets of
// ChunkSlots slots each. The buffer goes back to ws's pool at the end.
func (m *Marker) drain(w *scheduler.Worker, ws *workerState, stack []uint32) {
	off, words, marks := m.heap.Offsets, m.heap.Words, m.marks
	batch := m.opts.Batch
	var at, hd, arr [MaxBatch]uint32 // a batch's headers; the arrays among them
	slots, marked := int64(0), int64(0)
	for len(stack) > 0 {
		// Up to SplitEvery objects with no call in the loop, so that its
		// variables stay in registers; a huge array ends the run early.
		arrays := 0
		n := m.splitEvery
		for n > 0 && len(stack) > 0 && arrays == 0 {
			k := min(batch, len(stack))
			for i, o := range stack[len(stack)-k:] { // independent loads: their misses overlap
				at[i] = off[o]
				hd[i] = words[at[i]]
			}
			stack = stack[:len(stack)-k]
			n -= k
			for i := k - 1; i >= 0; i-- {
				if hd[i] > ChunkSlots {
					// A huge array: scanned by packets of its own.
					arr[arrays] = at[i]
					arrays++
					continue
				}
				s := words[at[i]+1 : at[i]+1+hd[i]]
				for j := len(s) - 1; j >= 0; j-- {
					c := s[j]
					if c == Null {
						continue
					}
					slots++
					if casMark(marks, c) {
						stack = append(stack, c)
						marked++
					}
				}
			}
		}
		for _, a := range arr[:arrays] {
			m.spawnArray(w, a)
		}
		if n <= 0 && len(stack) >= 2 && w.ShouldSplit() {
			var done bool
			if stack, done = m.split(w, ws, stack); done {
				break
			}
		}
	}
	ws.slots += slots
	ws.marked += marked
	if stack != nil {
		m.putStack(ws, stack)
	}
}

// spawnArray spawns the huge array whose header is at words[at] as one
// packet per ChunkSlots slots, each claiming and scanning its slots where
// they lie.
func (m *Marker) spawnArray(w *scheduler.Worker, at uint32) {
	words := m.heap.Words
	end := at + 1 + words[at]
	for lo := at + 1; lo < end; lo += ChunkSlots {
		scheduler.Spawn(w, markStack{m: m, objs: words[lo:min(lo+ChunkSlots, end)], view: true})
	}
}

// split gives away the oldest SplitShare of stack (at least one object,
// at most all but one) as a markStack packet, and reports the stack to go
// on with, or done: the rest went out as a packet too, that this worker
// runs next (SplitRest). Called when w.ShouldSplit: a worker is idle.
func (m *Marker) split(w *scheduler.Worker, ws *workerState, stack []uint32) ([]uint32, bool) {
	k := min(max(int(float64(len(stack))*m.opts.SplitShare), 1), len(stack)-1)
	give := append(m.getStack(ws), stack[:k]...)
	rest := stack[:copy(stack, stack[k:])]
	scheduler.Spawn(w, markStack{m: m, objs: give, claimed: true})
	ws.splits++
	if !m.opts.SplitRest {
		return rest, false
	}
	scheduler.Spawn(w, markStack{m: m, objs: rest, claimed: true})
	return nil, true
}

// getStack returns an empty mark-stack buffer from ws's pool.
func (m *Marker) getStack(ws *workerState) []uint32 {
	if n := len(ws.stacks); n > 0 {
		s := ws.stacks[n-1]
		ws.stacks = ws.stacks[:n-1]
		return s
	}
	return make([]uint32, 0, ChunkSlots)
}

// maxStacks bounds each worker's pool of mark-stack buffers: a cycle
// holds one per root packet (71 at the defaults: 64 stacks and 7 chunks
// of code cache, queued in Prepare before Closure gives any back), one
// per array chunk and one per split; 256 buffers of 16 KiB are 4 MiB.
const maxStacks = 256

// putStack returns a buffer to ws's pool (which another worker's packet
// may have taken from its own: buffers move between pools with the
// packets that hold them).
func (m *Marker) putStack(ws *workerState, s []uint32) {
	if len(ws.stacks) < maxStacks {
		ws.stacks = append(ws.stacks, s[:0])
	}
}
