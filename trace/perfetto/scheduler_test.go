package perfetto_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/analyze"
	"github.com/wsched/wsched/trace/chromejson"
	"github.com/wsched/wsched/trace/perfetto"
)

// spin is a packet of about n µs of arithmetic that spawns kids children
// of the same size (depth levels down).
type spin struct{ n, kids, depth int }

var sink uint64

func (p spin) Run(w *scheduler.Worker) {
	x := uint64(p.n)
	for range p.n * 150 {
		x = x*6364136223846793005 + 1442695040888963407
	}
	if x == 42 {
		sink++
	}
	if p.depth > 0 {
		for range p.kids {
			w.Spawn(spin{p.n, p.kids, p.depth - 1})
		}
	}
}

func (p spin) PacketName() string { return fmt.Sprintf("Spin%d", p.n) }

// heavy is one long packet.
type heavy struct{}

func (heavy) Run(w *scheduler.Worker) { spin{n: 200}.Run(w) }

// runTraced runs two cycles of a mixed workload under cfg and returns the
// snapshot, failing with every goroutine's stack if it hangs.
func runTraced(t *testing.T, cfg scheduler.Config) (*trace.Snapshot, scheduler.Stats) {
	t.Helper()
	rec := trace.NewRecorder(cfg.Workers, trace.Options{MaxBytes: 4 << 20})
	cfg.Tracer = rec
	cfg.Stages = []string{"Prepare", "Closure"}
	s, err := scheduler.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		var err error
		for cycle := 0; cycle < 2 && err == nil; cycle++ {
			ps := make([]scheduler.Packet, 0, 24)
			for i := range 24 {
				ps = append(ps, spin{n: 1 + i%3})
			}
			if err = s.BulkAdd(1, ps); err != nil {
				break
			}
			if err = s.AddPriority(1, heavy{}); err != nil {
				break
			}
			if err = s.Add(2, spin{n: 2, kids: 3, depth: 3}); err != nil {
				break
			}
			if err = s.Add(scheduler.Unconstrained, spin{n: 1}); err != nil {
				break
			}
			if err = s.AddDesignated(cfg.Workers-1, spin{n: 1}); err != nil {
				break
			}
			err = s.Run(context.Background())
		}
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("scheduler run hung; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
	// Close has waited for the workers: no hook runs any more.
	return rec.Snapshot(), s.Stats()
}

// TestRealRunsEveryPolicy traces real scheduler runs under every wake
// policy, steal policy and local-deque order, and checks each Perfetto and
// JSON export against the rules, then analyses it.
func TestRealRunsEveryPolicy(t *testing.T) {
	wakes := []scheduler.WakePolicy{scheduler.WakeOne, scheduler.WakeAll, scheduler.WakeN, scheduler.WakeSearcher}
	steals := []scheduler.StealPolicy{scheduler.StealOne(), scheduler.StealHalf(), scheduler.StealBatch(8)}
	for _, wake := range wakes {
		for _, steal := range steals {
			for _, fifo := range []bool{false, true} {
				name := fmt.Sprintf("%v/%v/fifo=%v", wake, steal, fifo)
				t.Run(name, func(t *testing.T) {
					snap, _ := runTraced(t, scheduler.Config{Workers: 3, Wake: wake, Steal: steal, LocalFIFO: fifo})
					if snap.Dropped() != 0 {
						t.Fatalf("%d events dropped", snap.Dropped())
					}
					var pb bytes.Buffer
					st, err := perfetto.Write(&pb, snap, perfetto.Options{})
					if err != nil {
						t.Fatal(err)
					}
					cs, err := perfetto.Check(pb.Bytes())
					if err != nil {
						t.Fatal(err)
					}
					// 2 cycles × (24 + heavy + tree of 1+3+9+27 + 1 + 1).
					const packets = 2 * (24 + 1 + 40 + 1 + 1)
					if st.Slices != packets || st.Orphans != 0 {
						t.Errorf("%d packet slices, %d orphans; want %d and 0", st.Slices, st.Orphans, packets)
					}
					var jb bytes.Buffer
					if _, err := chromejson.Write(&jb, snap, chromejson.Options{}); err != nil {
						t.Fatal(err)
					}
					js, err := chromejson.Check(jb.Bytes())
					if err != nil {
						t.Fatal(err)
					}
					if js.Flows != cs.Flows {
						t.Errorf("flows: json %d, perfetto %d", js.Flows, cs.Flows)
					}
					r, err := analyze.Bytes(pb.Bytes())
					if err != nil {
						t.Fatal(err)
					}
					if len(r.Cycles) != 2 || r.Packets != packets {
						t.Fatalf("analysis: %d cycles, %d packets", len(r.Cycles), r.Packets)
					}
					for _, c := range r.Cycles {
						if len(c.Stages) < 2 || c.Ratio < 0.999 || c.LowerBoundNs <= 0 {
							t.Errorf("cycle %d: %d stages, lower bound %d, ratio %.3f", c.Cycle, len(c.Stages), c.LowerBoundNs, c.Ratio)
						}
					}
				})
			}
		}
	}
}
