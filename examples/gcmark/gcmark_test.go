package gcmark

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wsched/wsched/internal/watchdog"

	"github.com/wsched/wsched/scheduler"
)

func TestHeapDeterministic(t *testing.T) {
	a := NewHeap(DefaultHeapConfig(0.01, 7))
	b := NewHeap(DefaultHeapConfig(0.01, 7))
	c := NewHeap(DefaultHeapConfig(0.01, 8))
	if !equalU32(a.Refs, b.Refs) || !equalU32(a.Offsets, b.Offsets) || !equalU32(a.CodeCache, b.CodeCache) {
		t.Fatal("same seed built different heaps")
	}
	if equalU32(a.Refs, c.Refs) {
		t.Fatal("different seeds built the same heap")
	}
	if len(a.CodeCache) != CodeCacheSlots {
		t.Fatalf("code cache has %d slots, want %d", len(a.CodeCache), CodeCacheSlots)
	}
	for _, arr := range a.Arrays {
		if n := len(a.Slots(arr)); n <= ChunkSlots {
			t.Errorf("array %d has %d slots, want more than one chunk (%d)", arr, n, ChunkSlots)
		}
	}
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// policies is every wake policy crossed with each steal policy kind.
func policies() []scheduler.Config {
	var out []scheduler.Config
	for _, wake := range []scheduler.WakePolicy{scheduler.WakeOne, scheduler.WakeAll, scheduler.WakeN, scheduler.WakeSearcher} {
		for _, steal := range []scheduler.StealPolicy{scheduler.StealOne(), scheduler.StealHalf(), scheduler.StealBatch(8)} {
			out = append(out, scheduler.Config{Wake: wake, Steal: steal})
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
			name := fmt.Sprintf("wake=%v/steal=%v/workers=%d", cfg.Wake, cfg.Steal, workers)
			t.Run(name, func(t *testing.T) {
				m, err := NewMarker(h, Options{Scheduler: cfg, CodeCache: CodeCachePlacement(workers % 3), RootSlotWork: -1})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				for cycle := range 2 {
					r := watchdog.Within(t, 30*time.Second, func() (Result, error) { return m.Mark(context.Background()) })
					got := m.Marks()
					if d := FirstDifference(got, want); d >= 0 {
						t.Fatalf("cycle %d: object %d: marked=%v, sequential=%v", cycle, d, got.Has(uint32(d)), want.Has(uint32(d)))
					}
					if int(r.Marked) != want.Count() || r.Live != r.Marked {
						t.Fatalf("cycle %d: Marked=%d Live=%d, want %d", cycle, r.Marked, r.Live, want.Count())
					}
				}
			})
		}
	}
}

// TestStageFigures checks that the per-stage figures add up.
func TestStageFigures(t *testing.T) {
	h := NewHeap(DefaultHeapConfig(0.02, 3))
	m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := watchdog.Within(t, 30*time.Second, func() (Result, error) { return m.Mark(context.Background()) })
	if len(r.Stages) != len(Stages) {
		t.Fatalf("got %d stages, want %d: %v", len(r.Stages), len(Stages), r.Stages)
	}
	var sum time.Duration
	for i, s := range r.Stages {
		if s.Name != Stages[i] {
			t.Errorf("stage %d is %q, want %q", i, s.Name, Stages[i])
		}
		if s.LowerBound < s.Longest || s.LowerBound < s.Work/2 {
			t.Errorf("%v: lower bound below max(longest, work/2)", s)
		}
		if s.Makespan < s.Longest {
			t.Errorf("%v: makespan shorter than its longest packet", s)
		}
		sum += s.Makespan
	}
	if sum > r.Elapsed {
		t.Errorf("stage makespans add to %v, more than the cycle's %v", sum, r.Elapsed)
	}
	// The code-cache packet is the Prepare stage's heavy one: at least a
	// quarter of its root slots, far more than any stack's. Checked in
	// slots, which the heap fixes; the times (logged) move with the
	// machine: one preempted stack packet inflates the stage's work.
	var stackSlots, deepest int
	for _, st := range h.Stacks {
		stackSlots += len(st)
		deepest = max(deepest, len(st))
	}
	if cc := len(h.CodeCache); cc*4 < cc+stackSlots || cc < 4*deepest {
		t.Errorf("Prepare: code cache %d slots, stacks %d in all and %d at most: not the heavy packet", cc, stackSlots, deepest)
	}
	p := r.Stages[0]
	t.Logf("Prepare: longest packet %v of %v work", p.Longest, p.Work)
}
