package scheduler

import (
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/wsched/wsched/internal/policy"
)

// Worklists.
//
// A worklist runs a body on items of one type, depth-first, on a stack
// that each worker keeps for it (a Feeder): the body feeds new items onto
// the stack, and the worker pops the newest next, in the loop a sequential
// program would write. The stack is split only while some worker is idle:
// after each item, two loads of the idle counters (nothing else while
// every worker is busy); when some worker is parked or searching and the
// running worker's deque holds fewer packets than there are such workers
// (policy.WantsWork), the oldest half of the stack, up to a batch per
// idle worker, goes to the deque as packets of the worklist, where a thief
// takes one at once, and one parked worker is woken if nobody searches (the
// surplus rule). A thief that runs such a packet pushes its items onto its
// own stack and drains it the same way. Oldest first, because a
// depth-first stack's oldest items are the roots of its biggest pending
// subtrees, and away from the memory the worker reads next.
//
// Per item, besides the body: a pop (a copy of the item into the
// Feeder, where its body runs on it), a store clearing its place when T
// holds pointers, the two idle loads, and a countdown to the abort
// check, which loads the cycle's abort flag every worklistCheck items.
// Those cost about 0.5 ns an item; the stack itself costs more: it is
// held in the Feeder, in memory, so every feed and pop loads and stores
// it, where a sequential loop keeps its stack slice in registers. Over
// such a loop with the same body that is about 5.8 ns an item (N-queens
// 13: 12.5 ns a state in the Feeder's shape without the scheduler, 6.7
// on a local stack, 13.1 in the Worklist; benchmarks/stackshape); a body
// given the stack slice and returning it, as append does, measured 7.9.

// worklistCheck is how many items a worklist runs between two looks at
// its cycle's abort flag (a cancelled Run context, a failed packet,
// Close): about 25 µs of items of 100 ns.
const worklistCheck = 256

// MaxWorklistBatch is the most items one packet split off a worklist's
// stack (or queued by Worklist.Add) carries: the size of its array.
const MaxWorklistBatch = 16

// DefaultWorklistBatch is the batch of a worklist made without
// WorklistBatch: the most items one split packet carries (see
// benchmarks/results/DEFAULTS.md for the sweep).
const DefaultWorklistBatch = 4

// A Worklist runs a body on items of type T and on every item a body
// feeds, on the scheduler's workers, depth-first: the sequential loop
// over an explicit stack, with the library deciding when to share it. Make
// one with NewWorklist, once, and seed it in every cycle with Add (from any
// goroutine) or Spawn (from a running packet); the cycle's Run returns
// when every item has run.
//
// Items are kept by value on the running worker's own stack and run
// in the order of the sequential loop over an explicit stack: the item
// fed last runs next, and every item a body feeds runs before any item
// fed before them (to visit children first to last, as recursion does,
// feed them last to first). The order matters beyond counts: a mark loop
// over a real Go heap that runs each object's first referent next ran
// 1.3× as fast as one that runs them in another order (examples/gcmark).
// Feeding and running an item allocates nothing once the stacks
// have grown to the search's depth. The
// oldest pending items leave a worker's stack only while another worker
// is idle (parked or searching) and short of queued work: then the oldest
// half, up to the batch (WorklistBatch) per idle worker, goes to the
// worker's deque as packets that a thief takes at once. While every worker
// is busy, no item moves and a worker pays two loads per item for the
// chance.
//
// Failures are a packet's: a body that returns an error or panics ends
// the cycle with a *CycleError naming the worklist (its name), the item
// (CycleError.Item: its String if T implements fmt.Stringer, else its
// value printed with %v, at most 200 bytes), its stage and worker; the items still on the stacks are dropped and counted
// (WorklistStats.Dropped). Each worker looks at the cycle's abort (a
// cancelled Run context, a failed packet, Close) every 256 items and, once
// it has seen it, runs no more items.
//
// Every packet of a worklist (a split-off part, a seed) counts in Stats
// under the worklist's name, and its items in WorklistStats; a packet
// that Spawn or a split queues from a packet inside a join belongs to that
// join. A Worklist belongs to one Scheduler; any number of them may share
// it, each with stacks of its own.
type Worklist[T any] struct {
	h     *Scheduler
	s     *sched
	name  string
	body  func(w *Worker, item *T, f *Feeder[T]) error
	sbody func(w *Worker, item T, stack []T) ([]T, error) // NewStackWorklist's; body is nil then
	batch int
	ptrs  bool          // T holds pointers: a run item's place is cleared
	feeds []Feeder[T]   // index = worker ID
	added atomic.Uint64 // items queued by Add
}

// A Feeder is a worker's stack of a worklist's pending items: the body
// it runs feeds items onto it with Add. Only the body running on that
// worker may use it, and only during that run.
type Feeder[T any] struct {
	items []T
	lo    int // items[:lo] were split off or run: the stack is items[lo:]
	cur   T   // the running item (drain)
	taken []T // the items of the running body's last Take
	wl    *Worklist[T]
	busy  bool // a drain runs on this worker's stack
	// Counts, written by the owner, read once Run has returned: items
	// run, split packets and their items, items dropped off the stack,
	// items queued in packets (splits, Spawn) and loaded from packets.
	ran, splits, splitItems, dropped, queued, received uint64
	_                                                  [64]byte // keeps workers' stacks apart
}

// Add feeds v to the worklist: it goes on top of the running worker's
// stack and runs before every item fed before the running one. It
// allocates only when the stack grows past its deepest point so far.
func (f *Feeder[T]) Add(v T) {
	f.items = append(f.items, v)
}

// Next feeds a new item and returns a pointer to it, on top of the stack,
// for the body to fill in place: for an item of more than two words,
// which Add would copy (a copy costs most where the item was just
// written, with stores of other widths). The item holds what its place
// held (the zero T if T holds pointers, else anything: set every field).
// The pointer is valid until the body's next Add, Next or return.
func (f *Feeder[T]) Next() *T {
	if len(f.items) == cap(f.items) {
		var zero T
		f.items = append(f.items, zero)
	} else {
		f.items = f.items[:len(f.items)+1]
	}
	return &f.items[len(f.items)-1]
}

// Take takes up to n of the waiting items off the top of the stack, the
// newest first, for the running body to handle in the same call, and
// returns them (nil for n ≤ 0 or an empty stack): so that a body can start
// the memory loads of several items before it works on any of them, as a
// mark loop that pops a batch of objects does. A batch also pays where an
// item's work is a chain of dependent steps that its child continues (a
// hash of its parent's hash): the plain loop's next item is the child
// just fed, which waits for its parent, while a batch's items are
// independent and the CPU overlaps them (the UTS search of
// benchmarks/uts: wsched-worklist-take, 2–3 ns a node faster). The body's own item is not
// among them: a batch of 16 is the item and Take(15). Start every load the
// batch needs before using any (for a graph in CSR form, every node's
// offsets, then every target's mark word, then the claims:
// ExampleFeeder_Take). Go has no prefetch: load into locals what is used
// later, and touch what is not with an atomic Load, which the compiler
// keeps where it may drop a plain load whose value goes unused. The slice
// is the Feeder's own, valid until the body's next Take or its return;
// feeding does not write over it. Taken items count as run
// (WorklistStats.Items). The worklist looks for idle workers after the body
// returns, so taken items are kept from thieves for that call only. They
// allocate nothing once the Feeder has taken that many at once.
func (f *Feeder[T]) Take(n int) []T {
	n = min(n, len(f.items)-f.lo)
	if n <= 0 {
		return nil
	}
	top := len(f.items) - n
	src := f.items[top:]
	f.taken = slices.Grow(f.taken[:0], n)[:n]
	for i := range f.taken { // newest first, in one pass
		f.taken[i] = src[n-1-i]
	}
	if f.wl.ptrs {
		clear(f.items[top:])
	}
	f.items = f.items[:top]
	f.ran += uint64(n)
	return f.taken
}

// Len returns how many items wait on the stack, the running item not
// counted.
func (f *Feeder[T]) Len() int { return len(f.items) - f.lo }

// compact moves the stack down over the part split off. Owner, between
// items.
func (f *Feeder[T]) compact() {
	n := copy(f.items, f.items[f.lo:])
	if f.wl.ptrs {
		clear(f.items[n:len(f.items)])
	}
	f.items = f.items[:n]
	f.lo = 0
}

// A WorklistOption configures NewWorklist.
type WorklistOption func(*worklistOptions)

type worklistOptions struct{ batch int }

// WorklistBatch sets the most items one split packet carries, 1 to
// MaxWorklistBatch (default DefaultWorklistBatch). Larger batches give a
// thief more at once, where each item feeds few new ones (a graph's
// nodes); smaller ones leave more with the worker that split.
func WorklistBatch(n int) WorklistOption {
	return func(o *worklistOptions) { o.batch = n }
}

// NewWorklist makes a worklist on s that runs body on every item: name
// names its packets in Stats, traces and errors. body runs on a worker,
// inside one of the worklist's packets, with that worker's *Worker (valid
// for the call only, as in Run), a pointer to the item (valid and
// unchanged for the whole call, however much the body feeds: feeding
// never writes over it; not after the call), and the
// worker's Feeder, on which it feeds new items. It returns an error wrapping ErrInvalid for a nil s or body,
// an empty name, or a batch outside 1..MaxWorklistBatch.
func NewWorklist[T any](s *Scheduler, name string, body func(w *Worker, item *T, f *Feeder[T]) error, opts ...WorklistOption) (*Worklist[T], error) {
	if body == nil {
		return nil, fmt.Errorf("%w: NewWorklist %q with a nil body", ErrInvalid, name)
	}
	wl, err := newWorklist[T](s, "NewWorklist", name, opts)
	if err != nil {
		return nil, err
	}
	wl.body = body
	return wl, nil
}

// NewStackWorklist makes a worklist on s like NewWorklist, but for a body
// that feeds items by appending them to the stack it is given, as append
// does, and returning the stack: body(w, item, stack) gets the running
// item, by value, and the waiting items, oldest first, newest last, and
// returns them with
// what it feeds appended, the last appended to run next. It may also
// take waiting items off the end to handle in the same call (copy them
// out first: appends write over their places; when T holds pointers the
// worklist clears the places of the items it was given that the body
// removed; items it appends and then removes itself are its own to clear.
// WorklistStats.Items counts the items the worklist handed to the body,
// not those it took: unlike Feeder.Take, it cannot tell how many a body
// took and then appended over). It must return
// the stack it was given or one append made from it, and keep none of it
// after the call; a stack shorter than it was given and not made from it
// (nil, for one) ends the cycle with an error naming the worklist. So a
// leaf returns the stack it was given (return stack, nil), never nil: nil
// passes only while nothing waits, as in a small test.
// Returning an error ends the cycle as for NewWorklist's body; the items
// it appended in that call are dropped, and those of a body that panics
// are dropped without being counted in WorklistStats.Dropped.
//
// A sequential loop keeps its stack slice in registers, and its item's
// fields too; a Feeder keeps the stack in memory, and every Add and pop
// loads and stores it, and it hands the body a pointer to a copy of the
// item, whose fields are loaded back from a copy just stored with other
// widths. So this body runs at nearly the loop's speed when T is a small
// struct of scalars (passed in registers): N-queens 13 cost 7.9 ns a
// state in this shape without the scheduler and 12.5 in the Feeder's,
// against 6.7 for a loop on a local stack (benchmarks/stackshape). For a
// large T, or one with an array field, the item is copied either way.
// The scheduler still costs 3–4 ns an item in this form, most of an item
// of 1–2 ns: a subset-sum search of 1.6 ns states, written from these
// docs, ran 2.7× slower than its recursion on one worker and at 0.74× its
// speed on two. Give such items more work: let the body search a few
// levels below its item with a plain loop and feed only the states below
// them. Worklist.Spawn from the
// body queues packets (it cannot reach the slice the body holds): append
// instead. The errors are NewWorklist's.
func NewStackWorklist[T any](s *Scheduler, name string, body func(w *Worker, item T, stack []T) ([]T, error), opts ...WorklistOption) (*Worklist[T], error) {
	if body == nil {
		return nil, fmt.Errorf("%w: NewStackWorklist %q with a nil body", ErrInvalid, name)
	}
	wl, err := newWorklist[T](s, "NewStackWorklist", name, opts)
	if err != nil {
		return nil, err
	}
	wl.sbody = body
	return wl, nil
}

// newWorklist checks what NewWorklist and NewStackWorklist share and
// makes the worklist, without its body; op names the caller in errors.
func newWorklist[T any](s *Scheduler, op, name string, opts []WorklistOption) (*Worklist[T], error) {
	o := worklistOptions{batch: DefaultWorklistBatch}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case s == nil || s.s == nil:
		return nil, fmt.Errorf("%w: %s on a nil or zero Scheduler", ErrInvalid, op)
	case name == "":
		return nil, fmt.Errorf("%w: %s with an empty name", ErrInvalid, op)
	case o.batch < 1 || o.batch > MaxWorklistBatch:
		return nil, fmt.Errorf("%w: worklist %q batch %d outside 1..%d", ErrInvalid, name, o.batch, MaxWorklistBatch)
	}
	wl := &Worklist[T]{h: s, s: s.s, name: name, batch: o.batch, ptrs: hasPointers(reflect.TypeFor[T]())}
	wl.feeds = make([]Feeder[T], s.s.n)
	for i := range wl.feeds {
		wl.feeds[i].wl = wl
	}
	return wl, nil
}

// Name returns the worklist's name.
func (wl *Worklist[T]) Name() string { return wl.name }

// Add queues items into the scheduler as packets of the worklist, up to
// the batch each, with the options of Scheduler.AddAll (a stage,
// Priority, Block; not Lend: the items are copied). From any goroutine,
// as AddAll; its errors are AddAll's (an empty items is no add and no
// error). It allocates the slice of packets and a box per packet: for
// seeding a cycle. A running packet feeds items with Spawn instead.
func (wl *Worklist[T]) Add(items []T, opts ...Option) error {
	if len(items) == 0 {
		return nil
	}
	n := len(items)
	ps := make([]Packet, 0, (n+wl.batch-1)/wl.batch)
	for len(items) > 0 {
		var p worklistPacket[T]
		items = p.fill(wl, items, wl.batch)
		ps = append(ps, p)
	}
	if err := wl.h.AddAll(ps, opts...); err != nil {
		return err
	}
	wl.added.Add(uint64(n))
	return nil
}

// Spawn feeds items to the worklist from the packet running on w: onto
// w's stack if w is running the worklist's body now (a body's Spawn is
// its Feeder's Add; not for a stack worklist, whose body appends to its
// stack instead: its Spawn always queues packets, which run after the
// worker's stack, not depth-first), else as packets of the worklist spawned on w (Spawn,
// by value: no allocation), in the running packet's stage and join. Only
// the packet running on w may call it; on a *Worker kept past its
// packet's Run, or one of another scheduler, it panics.
func (wl *Worklist[T]) Spawn(w *Worker, items ...T) {
	if w.cur.p == nil || w.s != wl.s {
		wl.foreign(w, "Spawn")
	}
	f := &wl.feeds[w.id]
	if f.busy && wl.sbody == nil {
		for _, v := range items {
			f.Add(v)
		}
		return
	}
	f.queued += uint64(len(items))
	for len(items) > 0 {
		var p worklistPacket[T]
		items = p.fill(wl, items, wl.batch)
		Spawn(w, p)
	}
}

// foreign panics for a worklist call on w that cannot be honoured.
//
//go:noinline
func (wl *Worklist[T]) foreign(w *Worker, op string) {
	if w.s != wl.s {
		panic("scheduler: Worklist " + op + " of " + wl.name + " with another scheduler's *Worker")
	}
	w.badUse(false, "Worklist "+op)
}

// WorklistStats are a worklist's counts since NewWorklist, summed over
// the workers: exact once Run has returned.
type WorklistStats struct {
	// Items is how many items the body ran (its failing run counted).
	Items uint64
	// Splits is how many packets were split off the workers' stacks
	// for idle workers, and SplitItems how many items they carried.
	Splits, SplitItems uint64
	// Dropped is how many items aborted cycles discarded: left on a
	// worker's stack, or in a packet of the worklist that the scheduler
	// dropped (queued by Add, Spawn or a split, never run; such a packet
	// is also one of the cycle's dropped packets, CycleError.Dropped).
	Dropped uint64
}

// Stats returns the worklist's counts. From any goroutine; exact once
// Run has returned (during a cycle, a snapshot of counts that workers
// keep writing: the race detector reports such a read).
func (wl *Worklist[T]) Stats() WorklistStats {
	var st WorklistStats
	inPackets := wl.added.Load()
	for i := range wl.feeds {
		f := &wl.feeds[i]
		st.Items += f.ran
		st.Splits += f.splits
		st.SplitItems += f.splitItems
		st.Dropped += f.dropped
		inPackets += f.queued
		inPackets -= f.received
	}
	st.Dropped += inPackets // queued, never loaded: dropped with their packets
	return st
}

// worklistPacket is a packet of a worklist: up to MaxWorklistBatch items
// that its run pushes onto its worker's stack and drains.
type worklistPacket[T any] struct {
	wl    *Worklist[T]
	n     int
	items [MaxWorklistBatch]T
}

// fill copies up to batch of items into p and returns the rest.
func (p *worklistPacket[T]) fill(wl *Worklist[T], items []T, batch int) []T {
	p.wl = wl
	p.n = copy(p.items[:min(batch, len(items))], items)
	return items[p.n:]
}

func (p worklistPacket[T]) PacketName() string { return p.wl.name }

func (p worklistPacket[T]) Run(w *Worker) error {
	wl := p.wl
	f := &wl.feeds[w.id]
	if f.busy && wl.sbody != nil {
		// A drain of a stack body below us holds its stack in a local:
		// no packet of the worklist runs inline (Spawn queues them).
		panic("scheduler: internal error: a packet of stack worklist " + wl.name + " ran inside its own body")
	}
	f.received += uint64(p.n)
	for _, v := range p.items[:p.n] {
		f.Add(v)
	}
	if f.busy {
		return nil // the drain running on this worker below us runs them
	}
	if wl.sbody != nil {
		return wl.drainStack(w, f)
	}
	return wl.drain(w, f)
}

// drain runs the items on f, w's stack, newest first, until it is empty,
// the body fails, or the cycle aborts. Each item is popped into f.cur
// before its body runs, and the body gets a pointer to that: what it
// feeds goes on top of the stack in its order, the last fed to run next.
// (Running big items in their place and taking them off afterwards keeps
// the order only with a copy down of what each body fed, and measured
// slower: the UTS T1 search 0.3 ns a node, benchmarks/results/xeon2/
// worklist-targets/stack-order-ab.txt.) Owner; f is not busy.
func (wl *Worklist[T]) drain(w *Worker, f *Feeder[T]) error {
	f.busy = true
	finished := false
	defer f.abandon(w, &finished)
	s := w.s
	body := wl.body
	ptrs := wl.ptrs
	check := worklistCheck
	var err error
	for {
		items := f.items
		n := len(items) - 1
		if n < f.lo {
			break
		}
		f.ran++
		f.cur = items[n]
		if ptrs {
			var zero T
			items[n] = zero
		}
		f.items = items[:n]
		if err = body(w, &f.cur, f); err != nil {
			w.item = describeItem(f.cur)
			break
		}
		k := len(f.taken)
		if k > 0 { // the body took k more items
			if ptrs {
				clear(f.taken)
			}
			f.taken = f.taken[:0]
		}
		if s.nIdle() != 0 && len(f.items)-f.lo >= 2 {
			wl.split(w, f)
		}
		if check -= 1 + k; check <= 0 {
			check = worklistCheck
			if s.abort.Load() {
				break
			}
		}
	}
	f.drop()
	finished = true
	return err
}

// drainStack is drain for a stack body (NewStackWorklist): the stack is
// kept in a local slice, which the body appends to and returns, and
// published to f.items before each body call (so that a panic drops, and
// counts, what was waiting) and around a split. Owner; f is not busy.
func (wl *Worklist[T]) drainStack(w *Worker, f *Feeder[T]) error {
	f.busy = true
	finished := false
	defer f.abandon(w, &finished)
	s := w.s
	body := wl.sbody
	ptrs := wl.ptrs
	check := worklistCheck
	st := f.items[f.lo:]
	var err error
	for len(st) > 0 {
		n := len(st) - 1
		f.ran++
		it := st[n]
		f.cur = it // for a panic's description: stored, not loaded back
		if ptrs {
			var zero T
			st[n] = zero
		}
		st = st[:n]
		f.items, f.lo = st, 0
		st, err = body(w, it, st)
		if len(st) < n {
			if unsafe.SliceData(st) == unsafe.SliceData(f.items) {
				if ptrs {
					clear(f.items[len(st):n]) // the body took these itself
				}
			} else { // nil, or not made from the stack it was given
				if err == nil {
					err = fmt.Errorf("worklist %s: the body returned a stack of %d items not made from the %d it was given", wl.name, len(st), n)
				}
				if ptrs {
					clear(f.items[n:cap(f.items)]) // what it appended in place
				}
				st = f.items // drop what was waiting
			}
		}
		if err != nil {
			w.item = describeItem(it)
			if ptrs { // drop clears st; clear what else the body wrote
				if unsafe.SliceData(st) != unsafe.SliceData(f.items) {
					clear(f.items[:cap(f.items)]) // an append moved the stack: the old array
				}
				clear(st[len(st):cap(st)])
			}
			break
		}
		if s.nIdle() != 0 && len(st) >= 2 {
			f.items, f.lo = st, 0
			wl.split(w, f)
			if f.lo > 0 {
				f.compact() // keep the array's whole capacity for appends
			}
			st = f.items
		}
		if check--; check <= 0 {
			check = worklistCheck
			if s.abort.Load() {
				break
			}
		}
	}
	f.items, f.lo = st, 0
	f.drop()
	finished = true
	return err
}

// abandon ends a drain that did not finish (its body panicked or called
// runtime.Goexit): it names the running item and drops the stack.
// Deferred by the drains; owner.
func (f *Feeder[T]) abandon(w *Worker, finished *bool) {
	if !*finished {
		w.item = describeItem(f.cur)
		if f.wl.ptrs && f.wl.sbody != nil {
			clear(f.items[len(f.items):cap(f.items)]) // what the stack body appended in place
		}
		f.drop()
	}
}

// drop discards what is left on f (counted as dropped) and ends the
// drain. Owner.
func (f *Feeder[T]) drop() {
	f.dropped += uint64(len(f.items) - f.lo)
	if f.wl.ptrs {
		clear(f.items[:len(f.items)])
	}
	f.items, f.lo = f.items[:0], 0
	if f.wl.ptrs {
		var zero T
		f.cur = zero
		clear(f.taken)
	}
	f.taken = f.taken[:0]
	f.busy = false
}

// split hands the oldest half of f, w's stack, to idle workers, if some
// worker is idle and w's deque holds fewer packets than there are idle
// workers: as many packets as that shortfall, each up to the batch,
// pushed to w's deque oldest first, and then the surplus rule (wake one
// parked worker if nobody searches). Owner; f holds two items or more.
func (wl *Worklist[T]) split(w *Worker, f *Feeder[T]) {
	idle, queued := w.s.nIdle(), w.local.Len()
	if !policy.WantsWork(idle, queued) {
		return
	}
	give := (len(f.items) - f.lo) / 2
	for k := idle - queued; k > 0 && give > 0; k-- {
		var p worklistPacket[T]
		take := min(give, wl.batch)
		p.wl, p.n = wl, copy(p.items[:take], f.items[f.lo:])
		if wl.ptrs {
			clear(f.items[f.lo : f.lo+take])
		}
		f.lo += take
		give -= take
		f.splits++
		f.splitItems += uint64(take)
		f.queued += uint64(take)
		t := spawnTask(w, p)
		if w.tb != nil {
			t.stamp(w.spawnStamp(), w.from)
		}
		w.local.Push(t)
	}
	if f.lo > len(f.items)/2 {
		f.compact() // the part split off is the bigger: reclaim it
	}
	w.traceLocalLen()
	w.surplus()
}

// describeItem is the CycleError.Item of a worklist item whose body
// failed: its String if it implements fmt.Stringer, else its value as
// %v prints it, cut to maxItemText bytes. Failures only.
func describeItem[T any](v T) string {
	if it := describeValue(v); it != "" {
		return it
	}
	t := fmt.Sprintf("%v", v)
	if len(t) > maxItemText {
		t = t[:maxItemText] + "…"
	}
	return t
}

// maxItemText bounds a worklist item's description.
const maxItemText = 200

// hasPointers reports whether values of type t hold pointers (and so
// references that a cleared place drops).
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true // pointers, interfaces, slices, maps, strings, chans, funcs, uintptr-free unsafe pointers
}
