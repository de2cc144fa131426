package deque_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wsched/wsched/internal/deque"
)

// The buffer grows when full and shrinks when mostly empty: a burst must
// not pin its memory after it has been consumed.

// burst is the size of the burst: 10^5, below the 2^17 buffer
// that holds it.
const burst = 100_000

// shrunk is the largest Cap accepted once a burst has been consumed and
// the owner has used its deque a little: "back toward" MinCap.
const shrunk = 2 * deque.MinCap

// ordinaryUse is how the owner uses its deque after a burst: a worker
// spawning and running one packet at a time (pairs=1) or two (pairs=2).
func ordinaryUse(d *deque.Deque[int], rounds, pairs int) {
	d.Pop() // a worker looks at its own deque first, finds it empty
	for i := range rounds {
		for j := range pairs {
			d.Push(i*pairs + j)
		}
		for range pairs {
			d.Pop()
		}
	}
}

func TestGrowShrinkUnderStealing(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, start := range starts {
			for _, ownerHelps := range []bool{true, false} {
				name := fmt.Sprintf("%s/%s/owner-helps=%v", modeName(fifo), startName(start), ownerHelps)
				t.Run(name, func(t *testing.T) {
					growShrink(t, fifo, start, ownerHelps)
				})
			}
		}
	}
}

// growShrink pushes a burst of 10^5; two thieves (Steal, and StealInto
// batches of up to 16) start once half of it is in, so the second half grows the buffer while
// they steal. Then the thieves drain it, with the owner popping alongside
// (ownerHelps) or not, and the owner goes back to ordinary use. The buffer
// must have grown to hold the burst and must shrink back.
func growShrink(t *testing.T, fifo bool, start uint64, ownerHelps bool) {
	d := deque.NewDequeAt[int](fifo, start)
	c := newCounter(burst)
	var g group
	var go_ atomic.Bool // thieves start stealing
	var pushed atomic.Bool
	for i := range 2 {
		g.Go(func() {
			into := make([]int, 16)
			for !go_.Load() && !g.stopped() {
			}
			for !g.stopped() && !c.done() {
				if i == 0 {
					if v, st := d.Steal(); st == deque.Success {
						c.add(v)
						c.total.Add(1)
					}
					continue
				}
				n, _ := d.StealInto(into)
				for _, v := range into[:n] {
					c.add(v)
				}
				c.total.Add(int64(n))
			}
		})
	}
	var grown, afterDrain int
	g.Go(func() {
		for i := range burst {
			if i == burst/2 {
				go_.Store(true)
			}
			d.Push(i)
		}
		grown = deque.Cap(d)
		pushed.Store(true)
		for ownerHelps && !g.stopped() && !c.done() {
			if v, ok := d.Pop(); ok {
				c.add(v)
				c.total.Add(1)
			}
		}
	})
	g.Wait(t, "grow/shrink drain", c.summary)
	c.check(t)
	afterDrain = deque.Cap(d)
	assert.GreaterOrEqual(t, grown, burst/2, "Cap after a burst of %d pushed with at most half stolen: did not grow", burst)
	// The buffer goes back once the owner has made a window of Cap
	// Pops that did not need it (see Deque.endEpoch); the window that
	// held the burst ends first, so two windows at most.
	window := deque.Cap(d)
	ordinaryUse(d, window, 1)
	ordinaryUse(d, window, 2)
	assert.LessOrEqual(t, deque.Cap(d), shrunk, "Cap (grown to %d, %d after the drain) after the burst was consumed and the owner "+
		"ran %d push/pop pairs and %d double pairs: the burst pins its buffer",
		grown, afterDrain, window, window)
	require.Zero(t, d.Len(), "Len after ordinary use")
}

// TestShrinkOwnerOnly: the owner alone pushes a burst and pops it all; the
// buffer must come back down (LIFO and FIFO).
func TestShrinkOwnerOnly(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, start := range starts {
			t.Run(modeName(fifo)+"/"+startName(start), func(t *testing.T) {
				d := deque.NewDequeAt[int](fifo, start)
				for i := range burst {
					d.Push(i)
				}
				grown := deque.Cap(d)
				require.GreaterOrEqual(t, grown, burst, "Cap holding %d items", burst)
				for i := range burst {
					v, ok := d.Pop()
					want := burst - 1 - i
					if fifo {
						want = i
					}
					if !ok || v != want { // checked first: asserting each of 10^5 Pops costs more than the test
						require.True(t, ok, "Pop %d found nothing", i)
						require.Equal(t, want, v, "Pop %d", i)
					}
				}
				// The buffer stays while the owner's recent Pops needed
				// it (a worker that repeats a burst must not reallocate
				// it each time); once the owner has made Cap more Pops
				// that never needed a quarter of it, it goes back.
				_, ok := d.Pop()
				require.False(t, ok, "Pop after the burst found an item")
				assert.Equal(t, grown, deque.Cap(d), "Cap right after the owner popped the burst; want the buffer kept")
				// Polls of the empty deque do not count towards the
				// window, so the window that held the burst closes
				// first and the next one shrinks: two windows, 2×Cap
				// small epochs at most.
				for i := range 2 * grown {
					d.Push(i)
					if v, ok := d.Pop(); !ok || v != i { // checked first, as above
						require.True(t, ok, "Pop after the burst found nothing")
						require.Equal(t, i, v, "Pop after the burst")
					}
					d.Pop() // finds it empty
				}
				assert.LessOrEqual(t, deque.Cap(d), shrunk, "Cap (grown to %d) after the burst and 2×Cap more small epochs", grown)
			})
		}
	}
}

// windowSteals are the thieves of the resize-race tests: one that claims
// one item in the window, and one that claims a batch of three with
// StealInto (one range CAS from a FIFO deque, three claims from a LIFO
// one).
var windowSteals = []int{1, 3}

func windowStealName(k int) string {
	if k == 1 {
		return "Steal"
	}
	return fmt.Sprintf("StealInto(%d)", k)
}

// stealInWindow sets a resize hook under which a thief claims the k
// oldest items of d (Steal for k == 1, else StealInto) before the new
// buffer is published, and returns what it took.
func stealInWindow(t *testing.T, d *deque.Deque[int], k int) *[]int {
	var stolen []int
	deque.SetResizeHook(func() {
		if k == 1 {
			v, st := d.Steal()
			assert.Equal(t, deque.Success, st, "Steal in the resize window")
			stolen = append(stolen, v)
			return
		}
		into := make([]int, k)
		n, st := d.StealInto(into)
		assert.Equal(t, deque.Success, st, "StealInto in the resize window")
		stolen = append(stolen, into[:n]...)
	})
	t.Cleanup(func() { deque.SetResizeHook(nil) })
	return &stolen
}

// TestResizeRaceNoCopies: a thief that claims items while the owner is
// building a new buffer reads and releases them in the old buffer, and the
// new buffer's slots keep saying "may hold" those indices. When the owner
// laps onto those slots it must see, through the previous buffer, that the
// items are gone, and write the slots: no same-size copy of the buffer. (It
// made one per lap or two in a 16k-packet spawn burst with a busy thief.)
func TestResizeRaceNoCopies(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, start := range starts {
			for _, k := range windowSteals {
				t.Run(modeName(fifo)+"/"+startName(start)+"/"+windowStealName(k), func(t *testing.T) {
					d := deque.NewDequeAt[int](fifo, start)
					stolen := stealInWindow(t, d, k)
					// Fill the first buffer: the next Push grows it, and
					// the thief claims items 0..k-1 in the window.
					for i := range deque.MinCap + 1 {
						d.Push(i)
					}
					deque.SetResizeHook(nil)
					require.Equal(t, seq(0, k-1), *stolen, "stolen in the window")
					grown := deque.Cap(d)
					before := deque.Resizes(d)
					// Lap the new buffer: a thief takes the oldest item and
					// the owner pushes one, until the bottom index passes
					// the stale slots of items 0..k-1 (indices start+grown
					// onwards), the deque holding about MinCap items.
					for i := deque.MinCap + 1; i < grown+deque.MinCap; i++ {
						want := i - deque.MinCap - 1 + k
						v, st := d.Steal()
						require.Equal(t, deque.Success, st, "Steal")
						require.Equal(t, want, v, "Steal")
						d.Push(i)
					}
					assert.Zero(t, deque.Resizes(d)-before,
						"buffer copies while lapping a buffer of %d that holds %d items", grown, d.Len())
					assert.Equal(t, grown, deque.Cap(d), "Cap")
				})
			}
		}
	}
}

// thiefTakes are the ways a thief takes a burst in the shrink tests: one
// item at a time, or StealInto batches of up to 32 (a scheduler's thief).
var thiefTakes = []int{1, 32}

func thiefTakeName(batch int) string {
	if batch == 1 {
		return "Steal"
	}
	return fmt.Sprintf("StealInto(%d)", batch)
}

// stealAll takes exactly n items from d, uncontended: by Steal (batch 1)
// or by StealInto batches of up to batch items.
func stealAll[T any](t *testing.T, d *deque.Deque[T], n, batch int) {
	t.Helper()
	if batch == 1 {
		for range n {
			_, st := d.Steal()
			require.Equal(t, deque.Success, st, "Steal")
		}
		return
	}
	into := make([]T, batch)
	for n > 0 {
		k, st := d.StealInto(into)
		require.Equal(t, deque.Success, st, "StealInto with %d left", n)
		require.Equal(t, min((n+1)/2, batch), k, "StealInto with %d left", n)
		n -= k
	}
}

// TestIdleOwnerShrinks: thieves take a whole burst and the owner only polls
// its empty deque afterwards. The polls count towards the shrink window (a
// quarter of a Pop each), so the buffer, and the stolen values its slots
// still point to, go back after a bounded number of polls: two windows of
// 4×Cap polls at most.
func TestIdleOwnerShrinks(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, batch := range thiefTakes {
			t.Run(modeName(fifo)+"/"+thiefTakeName(batch), func(t *testing.T) {
				d := deque.NewDequeAt[*int](fifo, 0)
				const n = 20_000
				for i := range n {
					v := i
					d.Push(&v)
				}
				grown := deque.Cap(d)
				stealAll(t, d, n, batch)
				for range 8 * grown {
					_, ok := d.Pop()
					require.False(t, ok, "Pop found an item in a drained deque")
				}
				assert.LessOrEqual(t, deque.Cap(d), shrunk,
					"Cap (grown to %d) after the thieves took the burst and the owner polled 8×Cap times", grown)
			})
		}
	}
}

// TestLostLastItemEndsEpoch: when a thief wins the race for the last item,
// the owner's Pop still ends the epoch, so a window that ends there is
// decided (the buffer goes back) instead of waiting for polls.
func TestLostLastItemEndsEpoch(t *testing.T) {
	d := deque.New[int]()
	for i := range 4 * deque.MinCap {
		d.Push(i)
	}
	for range 4 * deque.MinCap {
		d.Pop()
	}
	grown := deque.Cap(d)
	require.Greater(t, grown, deque.MinCap, "Cap did not grow")
	// Windows of small epochs, each ending with the owner losing the last
	// item to a thief. Once the deque has been used Cap times more
	// without needing its size it must go back.
	stole := 0
	deque.SetLastItemHook(func() {
		// A thief that read bottom before the owner lowered it.
		if deque.FinishStaleSteal(d) {
			stole++
		}
	})
	defer deque.SetLastItemHook(nil)
	for i := 0; i < 2*grown && deque.Cap(d) == grown; i++ {
		// Two items; a thief takes the older, so the owner's cached top
		// is stale and Pop takes the retraction path, finds one item
		// left and races for it: the hook's thief wins.
		d.Push(1)
		d.Push(2)
		_, st := d.Steal()
		require.Equal(t, deque.Success, st, "Steal")
		v, ok := d.Pop()
		require.False(t, ok, "Pop won the last item (%d) although a thief took it first", v)
	}
	require.NotZero(t, stole, "the hook never ran: the test did not reach the last-item race")
	assert.LessOrEqual(t, deque.Cap(d), shrunk, "Cap (grown to %d) after %d epochs that each ended in a lost last item", grown, stole)
}

// TestPrevReleasedWhenEmpty: the buffer kept after a growth (for
// releasedInPrev) must not keep the values that were live in it once the
// owner has popped them: when the deque next becomes empty it is dropped.
func TestPrevReleasedWhenEmpty(t *testing.T) {
	d := deque.New[*[64]byte]()
	const n = 4096
	ws := make([]weak.Pointer[[64]byte], n)
	for i := range n {
		v := new([64]byte)
		ws[i] = weak.Make(v)
		d.Push(v)
	}
	for range n {
		_, ok := d.Pop()
		require.True(t, ok, "Pop: empty")
	}
	d.Pop() // finds it empty
	runtime.GC()
	runtime.GC()
	alive := 0
	for _, w := range ws {
		if w.Value() != nil {
			alive++
		}
	}
	// The current buffer's slots are cleared by Pop; nothing else should
	// hold them.
	assert.Zero(t, alive, "popped values (of %d) still reachable after the deque emptied", n)
	runtime.KeepAlive(d)
}

// TestResizeRaceSettledWhenEmpty: as TestResizeRaceNoCopies, but the deque
// empties before the owner laps the new buffer, so prev is dropped
// (settlePrev) and what it knew must have moved into the new buffer: the
// lap still copies nothing.
func TestResizeRaceSettledWhenEmpty(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, start := range starts {
			for _, k := range windowSteals {
				t.Run(modeName(fifo)+"/"+startName(start)+"/"+windowStealName(k), func(t *testing.T) {
					d := deque.NewDequeAt[int](fifo, start)
					stolen := stealInWindow(t, d, k)
					for i := range deque.MinCap + 1 {
						d.Push(i)
					}
					deque.SetResizeHook(nil)
					require.Len(t, *stolen, k, "stolen in the window")
					grown := deque.Cap(d)
					for {
						if _, ok := d.Pop(); !ok {
							break
						}
					}
					before := deque.Resizes(d)
					for i := range grown + 1 {
						d.Push(i)
						d.Pop()
					}
					// Laps by thieves: push and steal until the bottom
					// index has passed every slot twice.
					for i := range 2 * grown {
						d.Push(i)
						_, st := d.Steal()
						require.Equal(t, deque.Success, st, "Steal")
					}
					assert.Zero(t, deque.Resizes(d)-before, "buffer copies after the deque emptied and was lapped")
				})
			}
		}
	}
}

// TestStolenBurstsKeepBuffer: a spawner pushes bursts in batches
// (PushBatch, as the scheduler spills its private stack) while thieves take
// them, so that its own Pops find the deque nearly empty. The window's
// peak counts what each batch left in the deque, so the buffer that the
// bursts needed stays while they recur: one growth in the first round, no
// shrink-and-regrow in later ones. (Before, the owner's peak came only from
// its Pops; the buffer shrank at the end of the second window, round 15,
// and regrew in the next burst.) Once the bursts stop and the owner only
// polls, it shrinks.
func TestStolenBurstsKeepBuffer(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, take := range thiefTakes {
			t.Run(modeName(fifo)+"/"+thiefTakeName(take), func(t *testing.T) {
				d := deque.NewDequeAt[int](fifo, 0)
				const rounds, perRound, batch = 40, 4096, 128
				vs := make([]int, batch)
				var grown, resizes int
				for r := range rounds {
					for range perRound / batch {
						d.PushBatch(vs)
					}
					stealAll(t, d, perRound, take)
					for range perRound / 2 { // between bursts: polls, a window every few rounds
						_, ok := d.Pop()
						require.False(t, ok, "round %d: Pop found an item after the thief took them all", r)
					}
					if r == 0 {
						grown, resizes = deque.Cap(d), deque.Resizes(d)
						continue
					}
					require.Equal(t, grown, deque.Cap(d), "round %d: Cap; want the first round's", r)
					require.Equal(t, resizes, deque.Resizes(d), "round %d: resizes; want the first round's", r)
				}
				for range 8 * grown {
					d.Pop()
				}
				assert.LessOrEqual(t, deque.Cap(d), shrunk,
					"Cap (grown to %d) after the bursts stopped and the owner polled 8×Cap times", grown)
			})
		}
	}
}
