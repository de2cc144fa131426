package deque

// Test-only exports of internals, in the manner of sync/export_test.go: the
// black-box tests in package deque_test start indices near wrap-around and
// check block and buffer sizes without widening the public API.

// MinCap is the smallest (and initial) buffer of a Deque.
const MinCap = minCap

// BlockCap is the number of slots in one Injector block; a batch never
// crosses a block.
const BlockCap = blockCap

// NewDequeAt returns an empty deque whose indices start at start (use
// ^uint64(0) - small to cross the wrap-around early).
func NewDequeAt[T any](fifo bool, start uint64) *Deque[T] { return newDeque[T](fifo, start) }

// NewInjectorAt returns an empty injector whose tickets start at start.
func NewInjectorAt[T any](start uint64) *Injector[T] { return newInjector[T](start) }

// SetResizeHook sets a function that resize runs after it has read top and
// copied the live items, before it publishes the new buffer; nil removes
// it. Not safe to call while deques are in use.
func SetResizeHook(f func()) { testHookResize = f }

// Resizes returns how many buffers d has built after its first. Owner only.
func Resizes[T any](d *Deque[T]) int { return d.resizes }

// SetLastItemHook sets a function that Pop runs between its read of top and
// its CAS when it races for the last item; nil removes it.
func SetLastItemHook(f func()) { testHookLastItem = f }

// FinishStaleSteal completes a steal whose thief loaded top and bottom
// before the owner lowered bottom for the last item: it CASes top and
// releases the slot as take does. For the last-item race in tests.
func FinishStaleSteal[T any](d *Deque[T]) bool {
	t := d.top.Load()
	buf := d.buf.Load()
	if !d.top.CompareAndSwap(t, t+1) {
		return false
	}
	s := &buf.slots[t&buf.mask]
	_ = s.val
	s.seq.Store(t + uint64(len(buf.slots)))
	return true
}

// Cap returns the size of d's buffer in slots. Owner only.
func Cap[T any](d *Deque[T]) int { return len(d.own.slots) }
