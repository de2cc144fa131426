package prepare

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsched/wsched/internal/watchdog"
	"github.com/wsched/wsched/scheduler"
)

// TestMain fails the package's tests if a scheduler's workers outlive them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConfigurations(t *testing.T) {
	cs := Configurations()
	require.Len(t, cs, 8, "configurations")
	names := []string{"a", "b", "c", "d", "e", "a+learn", "b+learn", "e+learn"}
	for i, c := range cs {
		assert.Equal(t, names[i], c.Name, "configuration %d", i)
		assert.Equal(t, i >= 5, c.Learn, "configuration %s learns", c.Name)
		got, ok := Lookup(c.Name)
		if assert.True(t, ok, "Lookup(%q) found nothing", c.Name) {
			assert.Equal(t, c, got, "Lookup(%q)", c.Name)
		}
		if c.Learn {
			base, _ := Lookup(c.Name[:1])
			base.Name, base.Title, base.Learn = c.Name, c.Title, true
			assert.Equal(t, base, c, "%s is %s with Learn", c.Name, c.Name[:1])
		}
	}
	_, ok := Lookup("z")
	assert.False(t, ok, "Lookup(z) found something")
}

// TestLearnFindsTheCodeCache: under a Learn configuration on 2 workers
// the scheduler marks ScanCodeCacheRoots heavy after the first cycle, and
// only it: not ScanMutatorRoots, of the same Go type, nor StopMutators,
// alone in its stage; on 1 worker, where order cannot shorten a stage,
// nothing. The result's median leaves the first cycle out.
//
// The rule works on the cycle's measured run times, and on a loaded host
// (the race detector's packages run side by side on two cores) a mutator
// scan descheduled for milliseconds can push the code cache's run below
// the share for one cycle. So each cycle's verdict is checked against the
// times that cycle measured (Stats before and after): when the code cache
// reached HeavyShare of the stage's work per worker, the set is exactly
// it; when it did not, the set holds nothing else (the code cache may stay
// from the cycle before). At least two of the cycles must be undisturbed,
// the first of them learning the type at once.
func TestLearnFindsTheCodeCache(t *testing.T) {
	const cycles = 6
	for _, workers := range []int{1, 2} {
		c, _ := Lookup("a+learn")
		r, err := NewRunner(c, Options{Workers: workers, Model: DefaultModel(0.5, 1)})
		require.NoError(t, err)
		assert.Empty(t, r.Scheduler().HeavyTypes(), "before the first cycle")
		res := Result{Config: c, Workers: workers}
		code := []scheduler.HeavyType{{Name: "ScanCodeCacheRoots", Stage: stagePrepare}}
		clean := 0
		for i := range cycles {
			before := packetTotals(r.Scheduler().Stats())
			cy, err := r.Cycle(context.Background())
			require.NoError(t, err)
			res.Cycles = append(res.Cycles, cy)
			after := packetTotals(r.Scheduler().Stats())
			var work time.Duration
			for _, name := range []string{"PrepareCollector", "ScanMutatorRoots", "ScanCodeCacheRoots"} {
				work += after[name] - before[name]
			}
			cc := after["ScanCodeCacheRoots"] - before["ScanCodeCacheRoots"]
			got := r.Scheduler().HeavyTypes()
			switch {
			case workers == 1:
				assert.Empty(t, got, "workers 1, after cycle %d", i+1)
			case float64(cc) >= scheduler.HeavyShare*float64(work)/float64(workers):
				clean++
				assert.Equal(t, code, got, "workers %d, after cycle %d (code cache %v of the stage's %v)", workers, i+1, cc, work)
			default:
				t.Logf("cycle %d disturbed: code cache %v of the stage's %v", i+1, cc, work)
				if len(got) > 0 {
					assert.Equal(t, code, got, "workers %d, after cycle %d, kept from the cycle before", workers, i+1)
				}
			}
		}
		if workers > 1 {
			assert.GreaterOrEqual(t, clean, 2, "undisturbed cycles of %d", cycles)
		}
		// Of two cycles the median is the longer, unless the first (the
		// learning cycle) is left out.
		two := Result{Config: c, Workers: workers, Cycles: res.Cycles[:2]}
		two.Cycles[0].Prepare.Makespan = time.Hour
		assert.Equal(t, two.Cycles[1].Prepare.Makespan, two.Median().Prepare.Makespan, "the learning cycle is not the median")
		require.NoError(t, r.Close())
	}
}

// packetTotals returns each packet name's total run time in st.
func packetTotals(st scheduler.Stats) map[string]time.Duration {
	m := make(map[string]time.Duration, len(st.Packets))
	for _, p := range st.Packets {
		m[p.Name] = p.Total
	}
	return m
}

// TestFiguresConsistent runs every configuration on a small model and
// checks that the figures add up: the packets counted are the packets
// queued, and makespan ≥ lower bound ≥ max(longest, work ÷ workers).
func TestFiguresConsistent(t *testing.T) {
	model := DefaultModel(0.05, 1)
	for _, workers := range []int{1, 2, 4} {
		for _, c := range Configurations() {
			t.Run(fmt.Sprintf("%s/workers=%d", c.Name, workers), func(t *testing.T) {
				res := watchdog.Within(t, time.Minute, func() (Result, error) {
					return Run(context.Background(), c, Options{Workers: workers, Model: model}, 3)
				})
				require.Len(t, res.Cycles, 3, "cycles")
				require.Equal(t, workers, res.Workers, "workers")
				wantPrepare := int64(len(model.StackSlots) + workers + 1)
				if c.Heavy == HeavySplit {
					wantPrepare += int64((model.CodeCacheSlots+model.SplitSlots-1)/model.SplitSlots) - 1
				}
				for i, cy := range res.Cycles {
					assert.Equal(t, wantPrepare, cy.Prepare.Packets, "cycle %d: Prepare packets", i)
					assert.Equal(t, int64(1), cy.Stop.Packets, "cycle %d: StopMutators packets", i)
					assert.Equal(t, closurePackets(model, c), cy.Closure.Packets, "cycle %d: Closure packets", i)
					total := cy.Stop.Packets + cy.Prepare.Packets + cy.Closure.Packets
					assert.Equal(t, uint64(total), cy.Stats.Packets, "cycle %d: packets the scheduler ran, against those the stages counted", i)
					for _, s := range []stageFigures{{"Prepare", cy.Prepare.Makespan, cy.Prepare.LowerBound, cy.Prepare.Longest, cy.Prepare.Work},
						{"Closure", cy.Closure.Makespan, cy.Closure.LowerBound, cy.Closure.Longest, cy.Closure.Work}} {
						w := time.Duration(workers)
						assert.GreaterOrEqual(t, s.bound, max(s.longest, s.work/w),
							"cycle %d %s: bound %v < max(longest %v, work %v / %d)", i, s.name, s.bound, s.longest, s.work, workers)
						assert.GreaterOrEqual(t, s.makespan, s.bound, "cycle %d %s: makespan beats the lower bound", i, s.name)
					}
					assert.LessOrEqual(t, cy.Prepare.Makespan+cy.Closure.Makespan, cy.Elapsed,
						"cycle %d: stage makespans %v + %v exceed the cycle's", i, cy.Prepare.Makespan, cy.Closure.Makespan)
				}
				assert.GreaterOrEqual(t, res.Median().Prepare.Ratio(), 1.0, "median Prepare ratio")
			})
		}
	}
}

type stageFigures struct {
	name                           string
	makespan, bound, longest, work time.Duration
}

// closurePackets is the number of Closure packets configuration c queues.
func closurePackets(m Model, c Configuration) int64 {
	chunks := func(slots int) int64 { return int64((slots + m.SplitSlots - 1) / m.SplitSlots) }
	var n int64
	for _, s := range m.StackSlots {
		n += chunks(s)
	}
	if c.Heavy == HeavySplit {
		for lo := 0; lo < m.CodeCacheSlots; lo += m.SplitSlots {
			n += chunks(min(m.SplitSlots, m.CodeCacheSlots-lo))
		}
	} else {
		n += chunks(m.CodeCacheSlots)
	}
	return n * (1<<(m.ClosureDepth+1) - 1) // each root chunk is the root of a binary tree
}
