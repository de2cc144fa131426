package scheduler

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// treeRun is one random spawn tree: packets get dense IDs from next until
// budget is spent, and each records its run in seen.
type treeRun struct {
	next   atomic.Int64 // next ID to hand out
	budget int64
	seen   []atomic.Uint32
	ran    atomic.Int64
	badSt  atomic.Int64 // packets that saw the wrong Worker.Stage
}

// treeNode spawns 0-3 children (more near the root, so the tree is bushy)
// while IDs remain, sometimes into a bucket instead of its own deque.
type treeNode struct {
	id    int64
	rng   uint64
	stage StageID
	tr    *treeRun
}

func (n *treeNode) Run(w *Worker) {
	tr := n.tr
	tr.seen[n.id].Add(1)
	tr.ran.Add(1)
	if w.Stage() != n.stage {
		tr.badSt.Add(1)
	}
	x := n.rng
	for {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		kids := int(x % 4)
		if n.id < 64 {
			kids = 3 // a bushy top, so that every worker gets work early
		}
		for range kids {
			id := tr.next.Add(1) - 1
			if id >= tr.budget {
				return
			}
			x = x*6364136223846793005 + 1442695040888963407
			c := &treeNode{id: id, rng: x | 1, stage: n.stage, tr: tr}
			if x>>60 == 0 { // 1 in 16 goes through the bucket
				if err := w.Scheduler().Add(n.stage, c); err != nil {
					panic(err)
				}
			} else {
				w.Spawn(c)
			}
		}
		return
	}
}

// TestExactlyOnce runs random spawn trees of ≥ 10^6 packets (scaled down
// under -race) for every wake × steal policy pair and checks that every
// packet ran exactly once, in its own stage.
func TestExactlyOnce(t *testing.T) {
	size := int64(scale(1<<20, 8)) // 1,048,576 packets; 131,072 under -race
	if stress() {
		size = 1 << 22
	}
	wakes := []WakePolicy{WakeOne, WakeAll, WakeN, WakeSearcher}
	steals := []StealPolicy{StealOne(), StealHalf(), StealBatch(4)}
	for _, wake := range wakes {
		for _, steal := range steals {
			for _, local := range []string{"", "fifo", "noslot", "noparkspin"} {
				name := fmt.Sprintf("%v/%v", wake, steal)
				if local != "" {
					if !stress() && steal.Kind != StealKindHalf {
						continue // FIFO, slot-less and no-poll variants: one pair by default, all under stress
					}
					name += "/" + local
				}
				fifo, noSlot := local == "fifo", local == "noslot"
				park := time.Duration(0) // DefaultParkSpin: wake-ups both polled and blocked
				if local == "noparkspin" {
					park = NoParkSpin // every wake-up through a blocked receive
				}
				t.Run(name, func(t *testing.T) {
					s := newSched(t, Config{Workers: 4, Stages: []string{"a", "b"}, Wake: wake, Steal: steal, LocalFIFO: fifo, NoLIFOSlot: noSlot, ParkSpin: park})
					tr := &treeRun{budget: size, seen: make([]atomic.Uint32, size)}
					// Roots: one bulk-added in stage 1, one in Unconstrained.
					tr.next.Store(2)
					if err := s.BulkAdd(1, []Packet{&treeNode{id: 0, rng: 88172645463325252, stage: 1, tr: tr}}); err != nil {
						t.Fatal(err)
					}
					if err := s.Add(Unconstrained, &treeNode{id: 1, rng: 1234567, stage: Unconstrained, tr: tr}); err != nil {
						t.Fatal(err)
					}
					start := time.Now()
					if err := runCycle(t, s); err != nil {
						t.Fatal(err)
					}
					if got := tr.ran.Load(); got != size {
						t.Fatalf("ran %d packets, want %d", got, size)
					}
					for i := range tr.seen {
						if c := tr.seen[i].Load(); c != 1 {
							t.Fatalf("packet %d ran %d times", i, c)
						}
					}
					if b := tr.badSt.Load(); b != 0 {
						t.Fatalf("%d packets saw the wrong Worker.Stage", b)
					}
					st := s.Stats()
					if st.PacketsRun() != uint64(size) {
						t.Fatalf("Stats: %d packets, want %d", st.PacketsRun(), size)
					}
					var steals, attempts, stolen, sent, received uint64
					for _, w := range st.Workers {
						steals += w.Steals
						attempts += w.StealAttempts
						stolen += w.Stolen
						sent += w.WakesSent
						received += w.WakesReceived
					}
					// Each steal moves 1 (one), or at most Limit (batch).
					maxPer := uint64(size)
					switch steal.Kind {
					case StealKindOne:
						maxPer = 1
					case StealKindBatch:
						maxPer = uint64(steal.Limit)
					}
					if steals > attempts || stolen < steals || stolen > maxPer*steals {
						t.Fatalf("steal counters: %d attempts, %d steals, %d packets stolen (at most %d per steal)", attempts, steals, stolen, maxPer)
					}
					if received != sent+st.ExternalWakes {
						t.Fatalf("wake-ups: %d received, %d sent by workers + %d by others", received, sent, st.ExternalWakes)
					}
					t.Logf("%d packets in %v, %d steals moving %d", size, time.Since(start), steals, stolen)
				})
			}
		}
	}
}
