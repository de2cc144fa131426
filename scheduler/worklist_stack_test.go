package scheduler

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStackWorklistRunsEveryItemOnce: a complete tree searched by a stack
// worklist (the body appends a node's children to the stack it is given)
// runs every node once at 1 to 4 workers, under each batch bound, three
// cycles in a row, with counts that agree; on one worker in the order of
// the plain stack loop.
func TestStackWorklistRunsEveryItemOnce(t *testing.T) {
	const fanout, depth = 4, 7 // 21,845 nodes
	n := treeSize(fanout, depth)
	slot := treeSlot(fanout, depth)
	var want []treeItem
	for st := []treeItem{{}}; len(st) > 0; {
		it := st[len(st)-1]
		st = st[:len(st)-1]
		want = append(want, it)
		st = append(st, treeChildren(it, fanout, depth)...)
	}
	for _, workers := range []int{1, 2, 4} {
		for _, batch := range []int{1, DefaultWorklistBatch, MaxWorklistBatch} {
			t.Run(fmt.Sprintf("workers=%d/batch=%d", workers, batch), func(t *testing.T) {
				s := newSched(t, Config{Workers: workers})
				seen := make([]atomic.Int32, n)
				count := NewReducer(s, func(a, b int64) int64 { return a + b })
				var order []treeItem
				wl, err := NewStackWorklist(s, "tree", func(w *Worker, it treeItem, st []treeItem) ([]treeItem, error) {
					seen[slot(it)].Add(1)
					*count.Local(w)++
					if workers == 1 {
						order = append(order, it)
					}
					if int(it.depth) < depth {
						for i := range int32(fanout) {
							st = append(st, treeItem{it.depth + 1, it.index*int32(fanout) + i})
						}
					}
					return st, nil
				}, WorklistBatch(batch))
				require.NoError(t, err)
				for cycle := range 3 {
					count.Reset()
					order = order[:0]
					require.NoError(t, wl.Add([]treeItem{{0, 0}}))
					require.NoError(t, runCycle(t, s))
					require.Equal(t, int64(n), count.Result(), "cycle %d: nodes counted", cycle)
					for i := range seen {
						if r := seen[i].Load(); r != int32(cycle+1) {
							require.FailNowf(t, "a node ran other than once", "cycle %d: node %d ran %d times", cycle, i, r)
						}
					}
					if workers == 1 {
						require.Equal(t, want, order, "cycle %d: the order of the plain stack loop", cycle)
					}
				}
				st := wl.Stats()
				assert.Equal(t, uint64(3*n), st.Items)
				assert.Zero(t, st.Dropped)
				assert.LessOrEqual(t, st.SplitItems, st.Splits*uint64(batch))
			})
		}
	}
}

// TestStackWorklistTakesFromTheStack: a body that takes up to 3 more
// waiting items off the end of its stack, copying them out before it
// appends, runs every node once; the worklist counts the items it handed
// to the body as run and the taken ones not at all (not as dropped);
// places the body took are cleared when T holds pointers (no payload is
// reachable after Run, the worklist still alive).
func TestStackWorklistTakesFromTheStack(t *testing.T) {
	type ref struct {
		p *payload
		k int
	}
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers})
			tr := &tracker{}
			ps := make([]*payload, 20000)
			for i := range ps {
				ps[i] = tr.packet().p
			}
			var extra atomic.Int64
			wl, err := NewStackWorklist(s, "refs", func(w *Worker, it ref, st []ref) ([]ref, error) {
				var batch [4]ref
				batch[0] = it
				k := 1 + copy(batch[1:], st[max(0, len(st)-3):])
				st = st[:len(st)-(k-1)]
				extra.Add(int64(k - 1))
				for _, x := range batch[:k] {
					x.p.runs.Add(1)
					for _, c := range []int{2*x.k + 1, 2*x.k + 2} {
						if c < len(ps) {
							st = append(st, ref{ps[c], c})
						}
					}
				}
				return st, nil
			})
			require.NoError(t, err)
			require.NoError(t, wl.Add([]ref{{ps[0], 0}}))
			require.NoError(t, runCycle(t, s))
			require.Equal(t, int64(len(ps)), tr.runs.Load(), "payloads run")
			st := wl.Stats()
			assert.Equal(t, uint64(len(ps)), st.Items+uint64(extra.Load()), "items the worklist ran plus those the bodies took")
			assert.Positive(t, extra.Load(), "items the bodies took")
			assert.Zero(t, st.Dropped)
			ps = nil
			require.Zero(t, tr.alive(), "items reachable after Run returned")
			runtime.KeepAlive(wl) // the worklist, its stacks with it, is still in use
		})
	}
}

// TestStackWorklistFailureNamesIt: a stack body that fails or panics ends
// the cycle with a *CycleError naming the worklist; what waited on the
// stack is dropped and counted (an erring body's appends too; a
// panicking body's appends are not counted), and the next cycle runs.
func TestStackWorklistFailureNamesIt(t *testing.T) {
	for _, how := range []string{"error", "error-nil-stack", "nil-stack", "panic"} {
		t.Run(how, func(t *testing.T) {
			s := newSched(t, Config{Workers: 1})
			var fed atomic.Uint64
			var fail atomic.Bool
			fail.Store(true)
			wl, err := NewStackWorklist(s, "walker", func(w *Worker, it int, st []int) ([]int, error) {
				if it < 20000 {
					st = append(st, it+20001, it+1)
					fed.Add(2)
				}
				if it == 5000 && fail.Load() {
					switch how {
					case "panic":
						fed.Add(^uint64(1)) // not counted: the two just appended
						panic("walker broke")
					case "error-nil-stack":
						fed.Add(^uint64(1))
						return nil, errWorklistBoom
					case "nil-stack": // a misuse: it loses the stack
						fed.Add(^uint64(1))
						return nil, nil
					}
					return st, errWorklistBoom
				}
				return st, nil
			})
			require.NoError(t, err)
			require.NoError(t, wl.Add([]int{0}))
			fed.Add(1)
			err = runCycle(t, s)
			var ce *CycleError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "walker", ce.Packet)
			assert.Equal(t, "5000", ce.Item)
			switch how {
			case "panic":
				assert.Equal(t, "walker broke", ce.Value)
			case "nil-stack":
				assert.ErrorContains(t, err, "worklist walker: the body returned a stack of 0 items not made from the")
			default:
				assert.ErrorIs(t, err, errWorklistBoom)
			}
			st := wl.Stats()
			assert.Equal(t, fed.Load(), st.Items+st.Dropped, "fed = run + dropped (%+v)", st)
			assert.Positive(t, st.Dropped)

			fail.Store(false)
			before := wl.Stats()
			require.NoError(t, wl.Add([]int{0}))
			require.NoError(t, runCycle(t, s))
			assert.Equal(t, uint64(40001), wl.Stats().Items-before.Items, "the next cycle runs every item")
		})
	}
}

// TestStackWorklistAllocatesNothingPerItem: once its stacks have grown, a
// stack worklist's cycle of 87,381 items on 2 workers allocates only what
// its seeding Add does.
func TestStackWorklistAllocatesNothingPerItem(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const fanout, depth = 4, 8
	s := newSched(t, Config{Workers: 2})
	var seeds [1]treeItem
	wl, err := NewStackWorklist(s, "tree", func(w *Worker, it treeItem, st []treeItem) ([]treeItem, error) {
		if int(it.depth) < depth {
			for i := range int32(fanout) {
				st = append(st, treeItem{it.depth + 1, it.index*int32(fanout) + i})
			}
		}
		return st, nil
	})
	require.NoError(t, err)
	cycle := func() {
		if err := wl.Add(seeds[:]); err != nil {
			panic(err)
		}
		if err := s.Run(context.Background()); err != nil {
			panic(err)
		}
	}
	for range 5 {
		cycle()
	}
	assert.LessOrEqual(t, testing.AllocsPerRun(10, cycle), 4.0, "allocations per cycle")
	_, err = NewStackWorklist[int](s, "nil", nil)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = NewStackWorklist(s, "", func(*Worker, int, []int) ([]int, error) { return nil, nil })
	require.ErrorIs(t, err, ErrInvalid)
}

// stackRef is an item that holds a pointer, for the reference tests.
type stackRef struct {
	p *payload
	k int
}

// TestStackWorklistFailureDropsReferences: a stack body that fails after
// appending in place (its stack's capacity 8, 7 waiting) or after an
// append that moved the stack, by panic, runtime.Goexit, an error with a
// nil stack or one cut short, or an error with the stack it appended to,
// leaves no item reachable once Run has returned; with the appended stack
// returned, every item fed is counted as run or dropped.
func TestStackWorklistFailureDropsReferences(t *testing.T) {
	for _, how := range []string{"panic", "goexit", "error-nil", "error-short", "error-in-place", "error-moved"} {
		t.Run(how, func(t *testing.T) {
			s := newSched(t, Config{Workers: 1})
			tr := &tracker{}
			ps := make([]*payload, 20)
			for i := range ps {
				ps[i] = tr.packet().p
			}
			wl, err := NewStackWorklist(s, "refs", func(w *Worker, it stackRef, st []stackRef) ([]stackRef, error) {
				if it.k == 0 {
					for i := 1; i <= 8; i++ { // the stack's capacity is 8 after this
						st = append(st, stackRef{ps[i], i})
					}
					return st, nil
				}
				st = append(st, stackRef{ps[10], 10}) // in place: 7 waited
				switch how {
				case "panic":
					panic("refs broke")
				case "goexit":
					runtime.Goexit()
				case "error-nil":
					return nil, errWorklistBoom
				case "error-short":
					return st[:1], errWorklistBoom
				case "error-moved":
					st = append(st, stackRef{ps[11], 11}, stackRef{ps[12], 12}) // past the capacity
				}
				return st, errWorklistBoom
			})
			require.NoError(t, err)
			require.NoError(t, wl.Add([]stackRef{{ps[0], 0}}))
			require.Error(t, runCycle(t, s))
			st := wl.Stats()
			switch how {
			case "error-in-place":
				assert.EqualValues(t, 1+8+1, st.Items+st.Dropped, "fed = run + dropped (%+v)", st)
			case "error-moved":
				assert.EqualValues(t, 1+8+3, st.Items+st.Dropped, "fed = run + dropped (%+v)", st)
			}
			ps = nil
			assert.Zero(t, tr.alive(), "items reachable after Run returned")
			runtime.KeepAlive(wl) // the worklist, its stacks with it, is still in use
		})
	}
}
