package prepare

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wsched/wsched/internal/watchdog"
)

func TestConfigurations(t *testing.T) {
	cs := Configurations()
	if len(cs) != 5 {
		t.Fatalf("%d configurations, want 5", len(cs))
	}
	for i, c := range cs {
		if want := string(rune('a' + i)); c.Name != want {
			t.Errorf("configuration %d is %q, want %q", i, c.Name, want)
		}
		if got, ok := Lookup(c.Name); !ok || got != c {
			t.Errorf("Lookup(%q) = %v, %v", c.Name, got, ok)
		}
	}
	if _, ok := Lookup("z"); ok {
		t.Error("Lookup(z) found something")
	}
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
				if len(res.Cycles) != 3 || res.Workers != workers {
					t.Fatalf("%d cycles on %d workers, want 3 on %d", len(res.Cycles), res.Workers, workers)
				}
				wantPrepare := int64(len(model.StackSlots) + workers + 1)
				if c.Heavy == HeavySplit {
					wantPrepare += int64((model.CodeCacheSlots+model.SplitSlots-1)/model.SplitSlots) - 1
				}
				for i, cy := range res.Cycles {
					if cy.Prepare.Packets != wantPrepare {
						t.Errorf("cycle %d: %d Prepare packets, want %d", i, cy.Prepare.Packets, wantPrepare)
					}
					if cy.Stop.Packets != 1 {
						t.Errorf("cycle %d: %d StopMutators packets, want 1", i, cy.Stop.Packets)
					}
					if want := closurePackets(model, c); cy.Closure.Packets != want {
						t.Errorf("cycle %d: %d Closure packets, want %d", i, cy.Closure.Packets, want)
					}
					if total := cy.Stop.Packets + cy.Prepare.Packets + cy.Closure.Packets; cy.Stats.Packets != uint64(total) {
						t.Errorf("cycle %d: scheduler ran %d packets, the stages counted %d", i, cy.Stats.Packets, total)
					}
					for _, s := range []stageFigures{{"Prepare", cy.Prepare.Makespan, cy.Prepare.LowerBound, cy.Prepare.Longest, cy.Prepare.Work},
						{"Closure", cy.Closure.Makespan, cy.Closure.LowerBound, cy.Closure.Longest, cy.Closure.Work}} {
						w := time.Duration(workers)
						if s.bound < s.longest || s.bound < s.work/w {
							t.Errorf("cycle %d %s: bound %v < max(longest %v, work %v / %d)", i, s.name, s.bound, s.longest, s.work, workers)
						}
						if s.makespan < s.bound {
							t.Errorf("cycle %d %s: makespan %v beats the lower bound %v", i, s.name, s.makespan, s.bound)
						}
					}
					if cy.Prepare.Makespan+cy.Closure.Makespan > cy.Elapsed {
						t.Errorf("cycle %d: stage makespans %v + %v exceed the cycle's %v", i, cy.Prepare.Makespan, cy.Closure.Makespan, cy.Elapsed)
					}
				}
				if m := res.Median(); m.Prepare.Ratio() < 1 {
					t.Errorf("median Prepare ratio %v < 1", m.Prepare.Ratio())
				}
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
