package gcmark

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/watchdog"
	"github.com/wsched/wsched/scheduler"
)

func TestHeapDeterministic(t *testing.T) {
	a := NewHeap(DefaultHeapConfig(0.01, 7))
	b := NewHeap(DefaultHeapConfig(0.01, 7))
	c := NewHeap(DefaultHeapConfig(0.01, 8))
	require.Equal(t, a.Refs, b.Refs, "same seed built different heaps")
	require.Equal(t, a.Offsets, b.Offsets, "same seed built different heaps")
	require.Equal(t, a.CodeCache, b.CodeCache, "same seed built different heaps")
	require.NotEqual(t, a.Refs, c.Refs, "different seeds built the same heap")
	require.Len(t, a.CodeCache, CodeCacheSlots, "code cache slots")
	for _, arr := range a.Arrays {
		assert.Greater(t, len(a.Slots(arr)), ChunkSlots, "array %d: want more than one chunk of slots", arr)
	}
}

// policies is every wake policy crossed with each way of stealing: one
// packet, half, and half at most 8.
func policies() []scheduler.Config {
	var out []scheduler.Config
	for _, wake := range []scheduler.Policy{scheduler.WakeOne, scheduler.WakeAll, scheduler.WakeN, scheduler.WakeSearcher} {
		for _, steal := range []struct {
			p     scheduler.Policy
			limit int
		}{{scheduler.StealOne, 0}, {scheduler.StealHalf, 0}, {scheduler.StealHalf, 8}} {
			out = append(out, scheduler.Config{Wake: wake, Steal: steal.p, StealLimit: steal.limit})
		}
	}
	return out
}

// TestMarkMatchesBFS checks that the parallel mark finds exactly the objects
// a sequential breadth-first search finds, under every policy, twice on the
// same Marker (the second cycle must clear the first's marks).
func TestMarkMatchesBFS(t *testing.T) {
	h := NewHeap(DefaultHeapConfig(0.02, 1)) // ~42 Ki objects: fast under -race
	want := h.MarkSequential()
	for _, cfg := range policies() {
		for _, workers := range []int{1, 2, 3} {
			cfg.Workers = workers
			name := fmt.Sprintf("wake=%v/steal=%v/limit=%d/workers=%d", cfg.Wake, cfg.Steal, cfg.StealLimit, workers)
			t.Run(name, func(t *testing.T) {
				m, err := NewMarker(h, Options{Scheduler: cfg, CodeCache: CodeCachePlacement(workers % 3), RootSlotWork: -1})
				require.NoError(t, err)
				defer m.Close()
				for cycle := range 2 {
					r := watchdog.Within(t, 30*time.Second, func() (Result, error) { return m.Mark(context.Background()) })
					got := m.Marks()
					if d := FirstDifference(got, want); d >= 0 {
						t.Fatalf("cycle %d: object %d: marked=%v, sequential=%v", cycle, d, got.Has(uint32(d)), want.Has(uint32(d)))
					}
					require.Equal(t, int64(want.Count()), r.Marked, "cycle %d: Marked", cycle)
					require.Equal(t, r.Marked, r.Live, "cycle %d: Live", cycle)
				}
			})
		}
	}
}

// TestStageFigures checks that the per-stage figures add up.
func TestStageFigures(t *testing.T) {
	h := NewHeap(DefaultHeapConfig(0.02, 3))
	m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: 2}})
	require.NoError(t, err)
	defer m.Close()
	r := watchdog.Within(t, 30*time.Second, func() (Result, error) { return m.Mark(context.Background()) })
	require.Len(t, r.Stages, len(Stages), "stages: %v", r.Stages)
	var sum time.Duration
	for i, s := range r.Stages {
		assert.Equal(t, Stages[i], s.Name, "stage %d", i)
		assert.False(t, s.LowerBound < s.Longest || s.LowerBound < s.Work/2, "%v: lower bound below max(longest, work/2)", s)
		assert.GreaterOrEqual(t, s.Makespan, s.Longest, "%v: makespan shorter than its longest packet", s)
		sum += s.Makespan
	}
	assert.LessOrEqual(t, sum, r.Elapsed, "stage makespans add to more than the cycle")
	// The code-cache packet is the Prepare stage's heavy one: at least a
	// quarter of its root slots, far more than any stack's. Checked in
	// slots, which the heap fixes; the times (logged) move with the
	// machine: one preempted stack packet inflates the stage's work.
	var stackSlots, deepest int
	for _, st := range h.Stacks {
		stackSlots += len(st)
		deepest = max(deepest, len(st))
	}
	cc := len(h.CodeCache)
	assert.False(t, cc*4 < cc+stackSlots || cc < 4*deepest,
		"Prepare: code cache %d slots, stacks %d in all and %d at most: not the heavy packet", cc, stackSlots, deepest)
	p := r.Stages[0]
	t.Logf("Prepare: longest packet %v of %v work", p.Longest, p.Work)
}
