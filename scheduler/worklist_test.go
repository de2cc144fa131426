package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/watchdog"
)

// treeItem is a node of a complete tree, named by its path: its depth
// and its index among the nodes of that depth.
type treeItem struct {
	depth, index int32
}

// treeSize is the node count of a complete tree of the given fan-out
// and depth (depth 0: the root alone).
func treeSize(fanout, depth int) int {
	n, level := 0, 1
	for range depth + 1 {
		n += level
		level *= fanout
	}
	return n
}

// treeChildren returns the children of it in a complete tree of the
// given fan-out and depth, first to last.
func treeChildren(it treeItem, fanout, depth int) []treeItem {
	if int(it.depth) == depth {
		return nil
	}
	c := make([]treeItem, fanout)
	for i := range c {
		c[i] = treeItem{it.depth + 1, it.index*int32(fanout) + int32(i)}
	}
	return c
}

// treeSlot returns, for a complete tree of the given fan-out and depth,
// the function that numbers its nodes 0 to treeSize−1, depth by depth.
func treeSlot(fanout, depth int) func(treeItem) int {
	first := make([]int, depth+1) // the number of each depth's first node
	for d := 1; d <= depth; d++ {
		first[d] = treeSize(fanout, d-1)
	}
	return func(it treeItem) int { return first[it.depth] + int(it.index) }
}

// newTreeWorklist makes a worklist that searches a complete tree of the
// given fan-out and depth, marking each node in seen (which must hold
// treeSize entries) and counting the nodes on each worker in the reducer.
func newTreeWorklist(t *testing.T, s *Scheduler, fanout, depth int, seen []atomic.Int32, opts ...WorklistOption) (*Worklist[treeItem], *Reducer[int64]) {
	t.Helper()
	count := NewReducer(s, func(a, b int64) int64 { return a + b })
	slot := treeSlot(fanout, depth)
	wl, err := NewWorklist(s, "tree", func(w *Worker, it *treeItem, f *Feeder[treeItem]) error {
		seen[slot(*it)].Add(1)
		*count.Local(w)++
		if int(it.depth) < depth {
			for i := range int32(fanout) {
				f.Add(treeItem{it.depth + 1, it.index*int32(fanout) + i})
			}
		}
		return nil
	}, opts...)
	require.NoError(t, err)
	return wl, count
}

// TestWorklistRunsEveryItemOnce: a complete tree searched through a
// worklist, seeded by Add, runs every node exactly once, at 1 to 4
// workers, under every local order and batch bound, three cycles in a
// row, and the worklist's counts agree: every item run, nothing dropped,
// every split item carried in a split packet.
func TestWorklistRunsEveryItemOnce(t *testing.T) {
	const fanout = 4
	depth := 8 // 87,381 nodes
	if raceEnabled || testing.Short() {
		depth = 7 // 21,845
	}
	n := treeSize(fanout, depth)
	for _, local := range []LocalPolicy{LocalPrivate, LocalLIFO, LocalFIFO} {
		for _, workers := range []int{1, 2, 4} {
			for _, batch := range []int{1, DefaultWorklistBatch, MaxWorklistBatch} {
				t.Run(fmt.Sprintf("%v/workers=%d/batch=%d", local, workers, batch), func(t *testing.T) {
					s := newSched(t, Config{Workers: workers, Local: local})
					seen := make([]atomic.Int32, n)
					wl, count := newTreeWorklist(t, s, fanout, depth, seen, WorklistBatch(batch))
					for cycle := range 3 {
						count.Reset()
						require.NoError(t, wl.Add([]treeItem{{0, 0}}))
						require.NoError(t, runCycle(t, s))
						require.Equal(t, int64(n), count.Result(), "cycle %d: nodes counted", cycle)
						for i := range seen {
							if r := seen[i].Load(); r != int32(cycle+1) {
								require.FailNowf(t, "a node ran other than once", "cycle %d: node %d ran %d times in %d cycles", cycle, i, r, cycle+1)
							}
						}
					}
					st := wl.Stats()
					assert.Equal(t, uint64(3*n), st.Items, "items")
					assert.Zero(t, st.Dropped, "dropped")
					assert.LessOrEqual(t, st.SplitItems, st.Splits*uint64(batch), "split items within the batch")
					if workers == 1 {
						assert.Zero(t, st.Splits, "splits with no other worker")
					}
				})
			}
		}
	}
}

// TestWorklistSplitsForIdleWorker: with 2 workers, the items of one
// seed reach the second worker: worker 0 runs the root, which feeds
// 64 children, and then each child waits until the other worker has run
// an item. Only a split (the idle worker stealing part of worker 0's
// stack) lets the wait end.
func TestWorklistSplitsForIdleWorker(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	var ranElsewhere atomic.Bool
	var rootWorker atomic.Int32
	rootWorker.Store(-1)
	count := NewReducer(s, func(a, b int64) int64 { return a + b })
	wl, err := NewWorklist(s, "fan", func(w *Worker, it *int, f *Feeder[int]) error {
		*count.Local(w)++
		if *it == 0 {
			rootWorker.Store(int32(w.ID()))
			for i := 1; i <= 64; i++ {
				f.Add(i)
			}
			return nil
		}
		if int32(w.ID()) != rootWorker.Load() {
			ranElsewhere.Store(true)
			return nil
		}
		deadline := time.Now().Add(20 * time.Second)
		for !ranElsewhere.Load() {
			if time.Now().After(deadline) {
				return fmt.Errorf("no item ran on another worker in 20 s; stacks:\n%s", watchdog.Stacks())
			}
			runtime.Gosched()
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, wl.Add([]int{0}))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(65), count.Result())
	var per [2]int64
	count.Values(func(i int, v *int64) { per[i] = *v })
	assert.Positive(t, per[0], "items on worker 0")
	assert.Positive(t, per[1], "items on worker 1")
	st := wl.Stats()
	assert.Positive(t, st.Splits, "splits")
	assert.Equal(t, uint64(65), st.Items)
}

// TestWorklistSpawnFromPacket: a packet seeds a worklist with Spawn (its
// items become packets of the worklist on the spawning worker), and a
// body's Spawn feeds its own stack; every item runs once and Stats
// names the worklist's packets.
func TestWorklistSpawnFromPacket(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	var runs atomic.Int64
	var wl *Worklist[int]
	wl, err := NewWorklist(s, "spawned", func(w *Worker, it *int, f *Feeder[int]) error {
		runs.Add(1)
		if *it < 1000 {
			wl.Spawn(w, *it+1000) // from the body: onto its own stack
		}
		return nil
	})
	require.NoError(t, err)
	seeds := make([]int, 100)
	for i := range seeds {
		seeds[i] = i
	}
	require.NoError(t, s.Add(Func("seeder", func(w *Worker) error {
		wl.Spawn(w, seeds...)
		return nil
	})))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(200), runs.Load())
	st := wl.Stats()
	assert.Equal(t, uint64(200), st.Items)
	assert.Zero(t, st.Dropped)
	var packets uint64
	for _, ts := range s.Stats().Packets {
		if ts.Name == "spawned" {
			packets = ts.Count
		}
	}
	assert.GreaterOrEqual(t, packets, uint64(100/DefaultWorklistBatch), "the worklist's packets, by its name")
}

var errWorklistBoom = errors.New("boom")

// TestWorklistFailureNamesIt: a body's error or panic ends the cycle with
// a *CycleError naming the worklist; the items left are dropped and
// counted (fed = run + dropped), and the next cycle runs clean.
func TestWorklistFailureNamesIt(t *testing.T) {
	for _, how := range []string{"error", "panic"} {
		t.Run(how, func(t *testing.T) {
			s := newSched(t, Config{Workers: 2})
			var fed atomic.Uint64
			fail := atomic.Bool{}
			fail.Store(true)
			wl, err := NewWorklist(s, "walker", func(w *Worker, it *int, f *Feeder[int]) error {
				if *it == 5000 && fail.Load() {
					if how == "panic" {
						panic("walker broke")
					}
					return errWorklistBoom
				}
				if *it < 20000 {
					f.Add(*it + 20001) // a leaf, left below the chain
					f.Add(*it + 1)     // fed last: runs next
					fed.Add(2)
				}
				return nil
			})
			require.NoError(t, err)
			require.NoError(t, wl.Add([]int{0}))
			fed.Add(1)
			err = runCycle(t, s)
			var ce *CycleError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "walker", ce.Packet)
			if how == "panic" {
				assert.Equal(t, "walker broke", ce.Value)
			} else {
				assert.ErrorIs(t, err, errWorklistBoom)
			}
			st := wl.Stats()
			assert.Equal(t, fed.Load(), st.Items+st.Dropped, "fed = run + dropped (%+v)", st)
			assert.Positive(t, st.Dropped)

			fail.Store(false)
			before := wl.Stats()
			require.NoError(t, wl.Add([]int{0}))
			require.NoError(t, runCycle(t, s))
			after := wl.Stats()
			assert.Equal(t, uint64(40001), after.Items-before.Items, "the next cycle runs every item")
			assert.Equal(t, before.Dropped, after.Dropped)
		})
	}
}

// TestWorklistStopsOnCancel: a cancelled Run context ends a worklist
// whose items feed forever; every worker stops within its check period
// and every item fed is run or dropped.
func TestWorklistStopsOnCancel(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	ctx, cancel := context.WithCancel(context.Background())
	var fed, runs, afterAbort atomic.Uint64
	wl, err := NewWorklist(s, "endless", func(w *Worker, it *int, f *Feeder[int]) error {
		if runs.Add(1) == 100_000 {
			cancel()
			// Run sees the cancel and flags the abort: from then on,
			// each worker runs at most a check period of items.
			waitFor(t, 10*time.Second, func() bool { return s.s.abort.Load() }, "the abort flag")
			afterAbort.Store(runs.Load())
		}
		f.Add(*it + 1)
		f.Add(*it + 2)
		fed.Add(2)
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, wl.Add([]int{0}))
	fed.Add(1)
	err = runCycleCtx(t, s, ctx)
	require.ErrorIs(t, err, context.Canceled)
	st := wl.Stats()
	assert.Equal(t, runs.Load(), st.Items)
	assert.Equal(t, fed.Load(), st.Items+st.Dropped, "fed = run + dropped (%+v)", st)
	// Each worker runs at most a check period past the cancel (plus the
	// item in hand on each worker).
	assert.LessOrEqual(t, st.Items, afterAbort.Load()+2*worklistCheck)

}

// TestWorklistDropsReferences: items that hold pointers are not reachable
// from the worklist once Run has returned, whether they ran, were split
// off, or were dropped by an abort.
func TestWorklistDropsReferences(t *testing.T) {
	for _, take := range []bool{false, true} {
		for _, aborted := range []bool{false, true} {
			t.Run(fmt.Sprintf("take=%v/aborted=%v", take, aborted), func(t *testing.T) {
				dropsReferences(t, take, aborted)
			})
		}
	}
}

// dropsReferences is TestWorklistDropsReferences for one case: take, a
// body that takes up to 2 more items (Feeder.Take); aborted, a body that
// fails at item 3000.
func dropsReferences(t *testing.T, take, aborted bool) {
	type ref struct {
		p *payload
		k int
	}
	s := newSched(t, Config{Workers: 2})
	tr := &tracker{}
	ps := make([]*payload, 20000)
	for i := range ps {
		ps[i] = tr.packet().p
	}
	wl, err := NewWorklist(s, "refs", func(w *Worker, it *ref, f *Feeder[ref]) error {
		var batch []ref
		if take {
			batch = f.Take(2)
		}
		for _, x := range append([]ref{*it}, batch...) {
			x.p.runs.Add(1)
			if aborted && x.k == 3000 {
				return errWorklistBoom
			}
			for _, c := range []int{2*x.k + 1, 2*x.k + 2} {
				if c < len(ps) {
					f.Add(ref{ps[c], c})
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, wl.Add([]ref{{ps[0], 0}}))
	err = runCycle(t, s)
	if aborted {
		require.ErrorIs(t, err, errWorklistBoom)
	} else {
		require.NoError(t, err)
		require.Equal(t, int64(len(ps)), tr.runs.Load())
	}
	ps = nil
	require.Zero(t, tr.alive(), "items reachable after Run returned")
	runtime.KeepAlive(wl) // the worklist, its stacks with it, is still in use
}

// TestWorklistAllocatesNothingPerItem: once its stacks have grown, a
// worklist's cycle of 100,000 items allocates only what its seeding Add
// does (the box of one packet and the slice of packets), with a body
// that runs one item and with one that takes up to 3 more (Feeder.Take).
func TestWorklistAllocatesNothingPerItem(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, take := range []int{0, 3} {
		t.Run(fmt.Sprintf("take=%d", take), func(t *testing.T) {
			s := newSched(t, Config{Workers: 2})
			feed := func(it *[3]int64, f *Feeder[[3]int64]) {
				if it[0] < 50_000 {
					f.Add([3]int64{it[0] + 1, 0, 0})
					f.Add([3]int64{1 << 40, 0, 0}) // a leaf
				}
			}
			wl, err := NewWorklist(s, "chain", func(w *Worker, it *[3]int64, f *Feeder[[3]int64]) error {
				taken := f.Take(take)
				feed(it, f)
				for i := range taken {
					feed(&taken[i], f)
				}
				return nil
			})
			require.NoError(t, err)
			cycle := func() {
				if err := wl.Add([][3]int64{{0, 0, 0}}); err != nil {
					panic(err)
				}
				if err := s.Run(context.Background()); err != nil {
					panic(err)
				}
			}
			for range 3 {
				cycle() // grow the stacks, arenas and deques
			}
			allocs := testing.AllocsPerRun(20, cycle)
			assert.LessOrEqual(t, allocs, 4.0, "allocations per cycle of 100,001 items")
			assert.Equal(t, uint64(24*100_001), wl.Stats().Items, "items run (3 cycles, AllocsPerRun's 1 + 20)")
		})
	}
}

// TestWorklistMisuse: bad arguments to NewWorklist are ErrInvalid, and a
// Spawn with another scheduler's *Worker or outside a packet panics in
// the packet, which its cycle reports.
func TestWorklistMisuse(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	body := func(*Worker, *int, *Feeder[int]) error { return nil }
	for _, c := range []struct {
		name string
		err  error
	}{
		{"nil scheduler", func() error { _, err := NewWorklist[int](nil, "x", body); return err }()},
		{"zero scheduler", func() error { _, err := NewWorklist(&Scheduler{}, "x", body); return err }()},
		{"nil body", func() error { _, err := NewWorklist[int](s, "x", nil); return err }()},
		{"empty name", func() error { _, err := NewWorklist(s, "", body); return err }()},
		{"batch 0", func() error { _, err := NewWorklist(s, "x", body, WorklistBatch(0)); return err }()},
		{"batch too big", func() error { _, err := NewWorklist(s, "x", body, WorklistBatch(MaxWorklistBatch+1)); return err }()},
	} {
		assert.ErrorIs(t, c.err, ErrInvalid, c.name)
	}

	wl, err := NewWorklist(s, "mine", body)
	require.NoError(t, err)
	other := newSched(t, Config{Workers: 1})
	require.NoError(t, other.Add(Func("foreign", func(w *Worker) error {
		wl.Spawn(w, 1)
		return nil
	})))
	err = runCycle(t, other)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, fmt.Sprint(ce.Value), "another scheduler's *Worker")

	var kept *Worker
	require.NoError(t, s.Add(Func("keeper", func(w *Worker) error { kept = w; return nil })))
	require.NoError(t, runCycle(t, s))
	assert.PanicsWithValue(t, "scheduler: Worklist Spawn on worker "+fmt.Sprint(kept.ID())+
		" outside its packet: a *Worker is valid only inside the Run call that received it",
		func() { wl.Spawn(kept, 1) })

	assert.NoError(t, wl.Add(nil), "an empty Add")
}

// TestReducer: Local is each worker's own value, Result combines them
// in worker order, Values visits them, Reset zeroes them.
func TestReducer(t *testing.T) {
	s := newSched(t, Config{Workers: 3})
	r := NewReducer(s, func(acc, v []int) []int { return append(acc, v...) })
	const n = 3000
	ps := make([]Packet, n)
	for i := range ps {
		ps[i] = Func("append", func(w *Worker) error {
			l := r.Local(w)
			*l = append(*l, i)
			return nil
		})
	}
	require.NoError(t, s.AddAll(ps))
	require.NoError(t, runCycle(t, s))
	all := r.Result()
	require.Len(t, all, n)
	seen := make([]bool, n)
	for _, v := range all {
		require.False(t, seen[v], "value %d twice", v)
		seen[v] = true
	}
	total := 0
	r.Values(func(worker int, v *[]int) { total += len(*v) })
	assert.Equal(t, n, total)
	r.Reset()
	assert.Empty(t, r.Result())

	other := newSched(t, Config{Workers: 1})
	require.NoError(t, other.Add(Func("foreign", func(w *Worker) error { r.Local(w); return nil })))
	var ce *CycleError
	require.ErrorAs(t, runCycle(t, other), &ce)
	assert.Contains(t, fmt.Sprint(ce.Value), "another scheduler's *Worker")

	assert.Panics(t, func() { NewReducer[int](s, nil).Result() })
	assert.Panics(t, func() { NewReducer[int](nil, nil) })
}

// bigTreeItem is a treeItem with a payload: an item of more than two
// words, which a worklist runs in its place on the stack.
type bigTreeItem struct {
	treeItem
	pad [3]int64
}

// TestWorklistRunsInStackOrder: on one worker a worklist runs its items
// in the order of the sequential loop over an explicit stack (the item
// fed last runs next), for items of one word and of four, fed by Add and
// by Next, and Feeder.Len counts the items waiting.
func TestWorklistRunsInStackOrder(t *testing.T) {
	const fanout, depth = 3, 5
	children := func(it treeItem) []treeItem { return treeChildren(it, fanout, depth) }
	var want []treeItem
	var wantLen []int // the items waiting as each one runs
	for stack := []treeItem{{}}; len(stack) > 0; {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		want = append(want, it)
		wantLen = append(wantLen, len(stack))
		stack = append(stack, children(it)...)
	}
	require.Len(t, want, treeSize(fanout, depth))

	t.Run("small", func(t *testing.T) {
		s := newSched(t, Config{Workers: 1})
		var got []treeItem
		var gotLen []int
		wl, err := NewWorklist(s, "tree", func(w *Worker, it *treeItem, f *Feeder[treeItem]) error {
			got = append(got, *it)
			gotLen = append(gotLen, f.Len())
			for _, c := range children(*it) {
				f.Add(c)
			}
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, wl.Add([]treeItem{{}}))
		require.NoError(t, runCycle(t, s))
		assert.Equal(t, want, got)
		assert.Equal(t, wantLen, gotLen, "Feeder.Len")
	})
	t.Run("big", func(t *testing.T) {
		s := newSched(t, Config{Workers: 1})
		var got []treeItem
		var gotLen []int
		wl, err := NewWorklist(s, "tree", func(w *Worker, it *bigTreeItem, f *Feeder[bigTreeItem]) error {
			got = append(got, it.treeItem)
			gotLen = append(gotLen, f.Len())
			for k, c := range children(it.treeItem) {
				if k%2 == 0 {
					f.Add(bigTreeItem{treeItem: c})
				} else {
					f.Next().treeItem = c
				}
			}
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, wl.Add([]bigTreeItem{{}}))
		require.NoError(t, runCycle(t, s))
		assert.Equal(t, want, got)
		assert.Equal(t, wantLen, gotLen, "Feeder.Len")
	})
}

// TestFeederTake: a body that takes up to 3 more items (Feeder.Take)
// gets the waiting items newest first, in the order a sequential loop
// that pops 4 at a time gets them; Take(0), Take(−1) and a Take on an
// empty stack return nothing and take nothing; taken items count as run;
// and on 1 to 4 workers, with splits, every node runs exactly once.
func TestFeederTake(t *testing.T) {
	const fanout, depth = 3, 6
	children := func(it treeItem) []treeItem { return treeChildren(it, fanout, depth) }
	n := treeSize(fanout, depth)
	var want []treeItem
	var wantLen []int // the items waiting once each body has taken
	for stack := []treeItem{{}}; len(stack) > 0; {
		k := min(4, len(stack))
		batch := make([]treeItem, 0, k)
		for range k {
			batch = append(batch, stack[len(stack)-1])
			stack = stack[:len(stack)-1]
		}
		wantLen = append(wantLen, len(stack))
		for _, it := range batch {
			want = append(want, it)
			stack = append(stack, children(it)...)
		}
	}
	require.Len(t, want, n)

	t.Run("order", func(t *testing.T) {
		s := newSched(t, Config{Workers: 1})
		var got []treeItem
		var gotLen []int
		wl, err := NewWorklist(s, "tree", func(w *Worker, it *treeItem, f *Feeder[treeItem]) error {
			before := f.Len()
			if f.Take(0) != nil || f.Take(-1) != nil || f.Len() != before {
				return errors.New("Take(0) or Take(-1) took items")
			}
			taken := f.Take(3)
			if len(taken) != min(3, before) || f.Len() != before-len(taken) {
				return fmt.Errorf("Take(3) with %d waiting took %d and left %d", before, len(taken), f.Len())
			}
			if f.Len() == 0 && f.Take(1) != nil {
				return errors.New("Take on an empty stack took an item")
			}
			gotLen = append(gotLen, f.Len())
			for _, x := range append([]treeItem{*it}, taken...) {
				got = append(got, x)
				for _, c := range children(x) {
					f.Add(c)
				}
			}
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, wl.Add([]treeItem{{}}))
		require.NoError(t, runCycle(t, s))
		assert.Equal(t, want, got)
		assert.Equal(t, wantLen, gotLen, "Feeder.Len after Take")
		st := wl.Stats()
		assert.Equal(t, uint64(n), st.Items, "taken items count as run")
		assert.Zero(t, st.Dropped)
	})
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers})
			seen := make([]atomic.Int32, n)
			slot := treeSlot(fanout, depth)
			count := NewReducer(s, func(a, b int64) int64 { return a + b })
			wl, err := NewWorklist(s, "tree", func(w *Worker, it *treeItem, f *Feeder[treeItem]) error {
				var batch [8]treeItem
				batch[0] = *it
				k := 1 + copy(batch[1:], f.Take(7))
				for _, x := range batch[:k] {
					seen[slot(x)].Add(1)
					*count.Local(w)++
					for _, c := range children(x) {
						f.Add(c)
					}
				}
				return nil
			})
			require.NoError(t, err)
			for cycle := range 3 {
				count.Reset()
				require.NoError(t, wl.Add([]treeItem{{}}))
				require.NoError(t, runCycle(t, s))
				require.Equal(t, int64(n), count.Result(), "cycle %d: nodes counted", cycle)
				for i := range seen {
					if r := seen[i].Load(); r != int32(cycle+1) {
						require.FailNowf(t, "a node ran other than once", "cycle %d: node %d ran %d times", cycle, i, r)
					}
				}
			}
			st := wl.Stats()
			assert.Equal(t, uint64(3*n), st.Items, "items")
			assert.Zero(t, st.Dropped, "dropped")
		})
	}
}

// TestFeederTakeMidSearch: a body that first calls Take deep in the
// search, with items of every level below it waiting, takes the newest
// waiting items, and its own item is not changed by what it feeds. On
// one worker the order of the runs and Feeder.Len as every body starts
// are those of the plain stack loop (the item popped before its body),
// in the first cycle and in the next; on 2 and 4 workers every node runs
// once.
func TestFeederTakeMidSearch(t *testing.T) {
	const fanout, depth, takeAt = 3, 7, 4 // bodies at depth ≥ takeAt take 2
	children := func(it treeItem) []treeItem { return treeChildren(it, fanout, depth) }
	n := treeSize(fanout, depth)
	var want []treeItem
	var wantLen []int // the items waiting when each body starts
	for stack := []treeItem{{}}; len(stack) > 0; {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		wantLen = append(wantLen, len(stack))
		batch := []treeItem{it}
		if it.depth >= takeAt {
			for range min(2, len(stack)) {
				batch = append(batch, stack[len(stack)-1])
				stack = stack[:len(stack)-1]
			}
		}
		for _, x := range batch {
			want = append(want, x)
			stack = append(stack, children(x)...)
		}
	}
	require.Len(t, want, n)
	body := func(record func(treeItem, int), seen func(treeItem)) func(*Worker, *treeItem, *Feeder[treeItem]) error {
		return func(w *Worker, it *treeItem, f *Feeder[treeItem]) error {
			record(*it, f.Len())
			batch := []treeItem{*it}
			if it.depth >= takeAt {
				batch = append(batch, f.Take(2)...)
			}
			for i, x := range batch {
				if i > 0 {
					record(x, -1)
				}
				seen(x)
				for _, c := range children(x) {
					f.Add(c)
				}
			}
			if want := (treeItem{batch[0].depth, batch[0].index}); *it != want {
				return fmt.Errorf("the body's item changed from %v to %v as it fed", want, *it)
			}
			return nil
		}
	}

	t.Run("order", func(t *testing.T) {
		s := newSched(t, Config{Workers: 1})
		var got []treeItem
		var gotLen []int
		wl, err := NewWorklist(s, "tree", body(func(it treeItem, l int) {
			got = append(got, it)
			if l >= 0 {
				gotLen = append(gotLen, l)
			}
		}, func(treeItem) {}))
		require.NoError(t, err)
		for range 2 { // the second cycle starts on a stack already turned
			got, gotLen = nil, nil
			require.NoError(t, wl.Add([]treeItem{{}}))
			require.NoError(t, runCycle(t, s))
			require.Equal(t, want, got)
			require.Equal(t, wantLen, gotLen, "Feeder.Len as each body starts")
		}
		st := wl.Stats()
		assert.Equal(t, uint64(2*n), st.Items)
		assert.Zero(t, st.Dropped)
	})
	for _, workers := range []int{2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers})
			seen := make([]atomic.Int32, n)
			slot := treeSlot(fanout, depth)
			wl, err := NewWorklist(s, "tree", body(func(treeItem, int) {}, func(x treeItem) { seen[slot(x)].Add(1) }), WorklistBatch(1))
			require.NoError(t, err)
			for cycle := range 3 {
				require.NoError(t, wl.Add([]treeItem{{}}))
				require.NoError(t, runCycle(t, s))
				for i := range seen {
					if r := seen[i].Load(); r != int32(cycle+1) {
						require.FailNowf(t, "a node ran other than once", "cycle %d: node %d ran %d times", cycle, i, r)
					}
				}
			}
			st := wl.Stats()
			assert.Equal(t, uint64(3*n), st.Items)
			assert.Zero(t, st.Dropped)
		})
	}
}
