package scheduler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fibArgs computes fib(n) into *out with a join per inner call: the
// continuation fibSum adds what the two children left in it.
type fibArgs struct {
	n   int
	out *int
}

type fibSum struct {
	a, b int
	out  *int
}

func (s fibSum) Run(*Worker) error { *s.out = s.a + s.b; return nil }

func (f fibArgs) Run(w *Worker) error {
	if f.n < 2 {
		*f.out = f.n
		return nil
	}
	s := Join(w, fibSum{out: f.out})
	Spawn(w, fibArgs{f.n - 1, &s.a})
	Spawn(w, fibArgs{f.n - 2, &s.b})
	return nil
}

// fib is the n-th Fibonacci number.
func fib(n int) int {
	a, b := 0, 1
	for range n {
		a, b = b, a+b
	}
	return a
}

// chunkCounter is an arena of any cell type, for arenaChunks.
type chunkCounter interface{ chunks() int }

func (a *arena[E]) chunks() int { return len(a.sealed) + len(a.free) + 1 }

// arenaChunks returns the chunks held by every arena of s's workers, by
// worker, once no packet runs.
func arenaChunks(s *Scheduler) (per []int) {
	for _, w := range s.s.workers {
		n := 0
		for _, r := range w.arenaList {
			n += r.(chunkCounter).chunks()
		}
		per = append(per, n)
	}
	return per
}

// TestArenaReuse: an arena reuses chunks whose slots were all consumed
// however many chunks that are still in use were sealed before them, so
// that it holds about as many chunks as there are chunks with a live
// cell (value.go), not as many as were ever handed out.
func TestArenaReuse(t *testing.T) {
	w := &Worker{}
	a := newArena[int](w)
	get := func(n int) (cs []*chunk[int]) {
		for range n {
			_, c := a.get()
			cs = append(cs, c)
		}
		return cs
	}
	// Three chunks pinned by one live cell each (a long-lived join's
	// frame), then chunk after chunk consumed in full once the next has
	// been handed out (as a join's frames are when its children end).
	for range 3 {
		cs := get(chunkSlots)
		for _, c := range cs[1:] {
			c.consumed(w)
		}
	}
	var prev []*chunk[int]
	for range 1000 {
		cs := get(chunkSlots)
		for _, c := range prev {
			c.consumed(w)
		}
		prev = cs
	}
	assert.LessOrEqual(t, a.chunks(), 3+6, "chunks held: 3 pinned and a few in turn")
}

// TestArenaMemoryFollowsLivePackets: within one long cycle of joins run
// depth first the arenas hold a few dozen chunks, not one per 64 joins
// ever opened; and cycle after cycle of value spawns and joins, under
// every Local policy, they stop growing once they hold what a cycle has
// live at once (which varies with the steals: the bound is twice the
// most seen in the first ten cycles).
func TestArenaMemoryFollowsLivePackets(t *testing.T) {
	t.Run("one cycle", func(t *testing.T) {
		s := newSched(t, Config{Workers: 1})
		var out int
		// fib(22): 28,656 joins, 448 chunks of frames in all; depth
		// first, at most 22 open at once.
		require.NoError(t, s.Add(fibArgs{22, &out}))
		require.NoError(t, runCycle(t, s))
		require.Equal(t, fib(22), out)
		assert.LessOrEqual(t, arenaChunks(s)[0], 64, "chunks after one cycle of fib(22)")
	})
	for _, local := range []LocalPolicy{LocalPrivate, LocalLIFO, LocalFIFO} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%v/workers=%d", local, workers), func(t *testing.T) {
				s := newSched(t, Config{Workers: workers, Local: local})
				var out int
				warm := make([]int, workers)
				for c := range 70 {
					require.NoError(t, s.Add(fibArgs{16, &out}))
					require.NoError(t, runCycle(t, s))
					require.Equal(t, fib(16), out)
					if c < 10 {
						for i, n := range arenaChunks(s) {
							warm[i] = max(warm[i], n)
						}
					}
				}
				for i, n := range arenaChunks(s) {
					assert.LessOrEqual(t, n, 2*warm[i]+8, "worker %d: chunks after 70 cycles of fib(16), at most %d in the first 10", i, warm[i])
				}
			})
		}
	}
}

// TestArenasSweptAtCycleEnd: once a cycle has run to its end, every
// arena's chunks are free (none left sealed for a refill's sweep to find
// later), so the next cycle reuses all of them.
func TestArenasSweptAtCycleEnd(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	var nodes int64
	for range 3 {
		nodes = 0
		require.NoError(t, s.Add(varNode{key: 3, out: &nodes}))
		require.NoError(t, runCycle(t, s))
		for _, w := range s.s.workers {
			for _, a := range w.arenaList {
				switch x := a.(type) {
				case *arena[frame[varSum]]:
					require.Empty(t, x.sealed, "worker %d: join frames sealed after the cycle", w.id)
				case *arena[slot[varNode]]:
					require.Empty(t, x.sealed, "worker %d: node slots sealed after the cycle", w.id)
				case *arena[slot[varSum]]:
					require.Empty(t, x.sealed, "worker %d: continuation slots sealed after the cycle", w.id)
				}
			}
		}
	}
	require.Positive(t, nodes)
}
