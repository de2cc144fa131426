package scheduler

// A Reducer keeps a value of type R for each worker of a scheduler, which
// the packets running on that worker update through Local with plain
// loads and stores, and combines them once, when asked (Result): a count,
// a sum, a histogram or a list kept per worker during a cycle and read
// after it, without a lock or an atomic per update and without slots
// padded by hand. Two workers' values never share a cache line (each is
// followed by 64 bytes of padding). Packets reach it as they reach any
// shared state: a *Reducer field in the packet, or in a struct of shared
// state the packet points to (one pointer per packet either way; a
// worklist's body captures it).
//
// Callers: Local from the packet running on a worker, for that worker's
// value; Result, Values and Reset from any goroutine while no packet
// updates the values: while no cycle runs (after Run has returned, before
// the next), or from a packet of a stage after every stage whose packets
// call Local (a stage opens only once the earlier ones have drained and
// every worker is idle, so their updates happened before it: an aggregate
// stage, as in examples/hashstream). Anywhere else they would race with
// the workers' updates.
type Reducer[R any] struct {
	s       *sched
	combine func(acc, v R) R
	slots   []reducerSlot[R] // index = worker ID
}

// reducerSlot is one worker's value, 64 bytes (a cache line) away from
// the next worker's.
type reducerSlot[R any] struct {
	v R
	_ [64]byte
}

// NewReducer returns a Reducer for s's workers, every value the zero R,
// that combines them with combine (Result); combine may be nil when only
// the values themselves are read (Values). It panics for a nil or zero
// Scheduler.
func NewReducer[R any](s *Scheduler, combine func(acc, v R) R) *Reducer[R] {
	if s == nil || s.s == nil {
		panic("scheduler: NewReducer on a nil or zero Scheduler")
	}
	return &Reducer[R]{s: s.s, combine: combine, slots: make([]reducerSlot[R], s.s.n)}
}

// Local returns the value of w, the worker running the calling packet:
// valid, and written by that worker alone, while the packet runs. It
// panics for a *Worker of another scheduler. It costs a compare and an
// index; a body that adds many times in one call can add a local count
// once.
func (r *Reducer[R]) Local(w *Worker) *R {
	if w.s != r.s {
		panic("scheduler: Reducer.Local with another scheduler's *Worker")
	}
	return &r.slots[w.id].v
}

// Result returns the workers' values combined in worker order:
// combine(…combine(combine(v0, v1), v2)…, vn-1). Worker 0's value is the
// first acc as it is, so for a value type (a count, a struct of sums)
// Result leaves every value as it was; for a map, a slice or a pointer, a
// combine that adds v into acc in place makes worker 0's value the result
// (copy it in combine to keep it). Reset zeroes the values. It panics if
// the Reducer has no combine.
func (r *Reducer[R]) Result() R {
	if r.combine == nil {
		panic("scheduler: Reducer.Result without a combine function")
	}
	acc := r.slots[0].v
	for i := 1; i < len(r.slots); i++ {
		acc = r.combine(acc, r.slots[i].v)
	}
	return acc
}

// Values calls f with each worker's value, in worker order.
func (r *Reducer[R]) Values(f func(worker int, v *R)) {
	for i := range r.slots {
		f(i, &r.slots[i].v)
	}
}

// Reset sets every worker's value to the zero R.
func (r *Reducer[R]) Reset() {
	var zero R
	for i := range r.slots {
		r.slots[i].v = zero
	}
}
