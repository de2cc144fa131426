package gcmark

import (
	"github.com/wsched/wsched/scheduler"
)

// markStack is the depth-first Closure packet: a mark stack. Its Run
// pops the newest objects, scans them and pushes the referents it marks,
// until the stack is empty; every SplitEvery objects it asks
// Worker.ShouldSplit, and when a worker is idle it gives the oldest
// SplitShare of its stack away as a packet of its own (see split).
//
// objs is a buffer the packet owns, from a worker's pool: either root
// referents still to be claimed (a root packet from Prepare), or objects
// already claimed, to be scanned (a stack split off). A huge array needs
// no packets of its own here: its referents go on the stack like any
// object's, and a split shares them out. A value packet (scheduler.Spawn
// stores it in the worker's arena): 40 bytes, no allocation.
type markStack struct {
	m       *Marker
	objs    []uint32
	claimed bool // objs are marked: scan them
}

// PacketName names the packet.
func (p markStack) PacketName() string { return "MarkStack" }

func (p markStack) Run(w *scheduler.Worker) error {
	m := p.m
	t := m.clock.Now()
	ws := &m.workers[w.ID()]
	stack := p.objs
	if !p.claimed {
		stack = stack[:0] // claimed referents overwrite the ones read
		slots := int64(0)
		for _, o := range p.objs {
			if o == Null {
				continue
			}
			slots++
			if m.claim(o) {
				stack = append(stack, o)
			}
		}
		ws.slots += slots
	}
	if len(stack) <= cap(ws.big) && cap(stack) < cap(ws.big) {
		// Work in the worker's big buffer, which its deepest stack grew
		// once (about 200 Ki entries on the default heap), rather than
		// grow this one again.
		big := append(ws.big[:0], stack...)
		ws.big = nil
		m.putStack(ws, stack)
		stack = big
	}
	m.drain(w, ws, stack)
	m.clock.Done(w.ID(), int(stageClosure), t)
	return nil
}

// drain empties stack (a buffer this packet owns), depth-first: scanRun
// by scanRun, asking w.ShouldSplit between them and, if another worker is
// idle, splitting (split). The buffer goes back to ws's pool at the end.
func (m *Marker) drain(w *scheduler.Worker, ws *workerState, stack []uint32) {
	done := w.Context().Done()
	var slots, scanned int64
	for len(stack) > 0 {
		var s, k int64
		stack, s, k = m.scanRun(stack, m.splitEvery)
		slots, scanned = slots+s, scanned+k
		if ended(done) {
			stack = stack[:0] // the cycle ended early: its marks are abandoned
			break
		}
		if len(stack) >= 2 && w.ShouldSplit() {
			var done bool
			if stack, done = m.split(w, ws, stack); done {
				break
			}
		}
	}
	ws.slots += slots
	ws.marked += scanned
	switch {
	case stack == nil: // handed on by split
	case cap(stack) > cap(ws.big):
		if ws.big != nil {
			m.putStack(ws, ws.big)
		}
		ws.big = stack[:0]
	default:
		m.putStack(ws, stack)
	}
}

// cancelCheck is how many objects a depth-first packet on one worker
// scans between two looks at the cycle's context (about 3 ms on the
// 2-vCPU AMD EPYC KVM guest; a return every 1,024 objects costs one
// worker 2%, every 64 Ki nothing measurable). With more workers it looks
// every SplitEvery objects, or, partitioned, every partitionCheck.
const cancelCheck = 1 << 16

// ended reports, without blocking, whether done (the cycle's context's
// Done channel) is closed: the cycle ended early, and a long packet
// should stop (scheduler.Worker.Context).
func ended(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// claim sets o's mark bit and reports whether this call set it: plainly
// with one worker in the depth-first and worklist designs, else by CAS. Any worker may
// call it; exactly one caller wins for each object per cycle.
func (m *Marker) claim(o uint32) bool {
	if m.plain {
		return plainMark(m.marks, o)
	}
	return casMark(m.marks, o)
}

// scanRun runs scanDFS on the marker's heap and bitmap.
func (m *Marker) scanRun(stack []uint32, budget int) (_ []uint32, slots, scanned int64) {
	return scanDFS(m.heap, m.marks, m.plain, m.opts.Batch, stack, budget)
}

// scanDFS pops about budget objects off stack (fewer if it empties), batch
// at a time: it loads the batch's headers first, so that their misses
// overlap, then scans each object last slot to first, pushing the
// referents it marks, so that an object's first slot is scanned next and
// a heap built depth-first is read in allocation order. It marks by CAS
// (casMark) or, where one goroutine marks alone, plainly (plain: one
// predictable branch a slot). It returns the stack, the slots traced and
// the objects scanned (each object marked is pushed once, and scanned
// once, by whichever packet holds it then). The Marker's packets and the
// SequentialDFS and SequentialDFSAtomic baselines all run it: the same
// machine code, so that what separates them is the scheduler and the
// mark bits, not where the compiler put a loop (two copies of this loop
// ran 3-6% apart at 1 worker, depending on the code around them). A
// function of its own, with nothing live but the loop's variables:
// inlined in drain, with the scheduler's values live across the loop,
// the compiler keeps the loop's counters on the stack and the mark runs
// 16% slower. The batch's arrays are locals, zeroed every call (256
// bytes).
func scanDFS(h *Heap, marks Bitmap, plain bool, batch int, stack []uint32, budget int) (_ []uint32, slots, scanned int64) {
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
				if plain {
					if plainMark(marks, c) {
						stack = append(stack, c)
					}
				} else if casMark(marks, c) {
					stack = append(stack, c)
				}
			}
		}
		scanned += int64(k)
	}
	return stack, slots, scanned
}

// split gives away the oldest SplitShare of stack (at least one object,
// at most all but one) as a markStack packet, and reports the stack to go
// on with, or done: the rest went out as a packet too, that this worker
// runs next (unless Options.KeepRest). Called when w.ShouldSplit: a
// worker is idle.
func (m *Marker) split(w *scheduler.Worker, ws *workerState, stack []uint32) ([]uint32, bool) {
	k := min(max(int(float64(len(stack))*m.opts.SplitShare), 1), len(stack)-1)
	give := append(m.getStack(ws), stack[:k]...)
	rest := stack[:copy(stack, stack[k:])]
	scheduler.Spawn(w, markStack{m: m, objs: give, claimed: true})
	ws.splits++
	if m.opts.KeepRest {
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
// of code cache, queued in Prepare before Closure gives any back) and one
// per split; 256 buffers of 16 KiB are 4 MiB (more where stacks grew).
const maxStacks = 256

// putStack returns a buffer to ws's pool (which another worker's packet
// may have taken from its own: buffers move between pools with the
// packets that hold them).
func (m *Marker) putStack(ws *workerState, s []uint32) {
	if len(ws.stacks) < maxStacks {
		ws.stacks = append(ws.stacks, s[:0])
	}
}
