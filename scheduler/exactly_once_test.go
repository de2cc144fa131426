package scheduler

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/policy"
)

// treeRun is one random spawn tree: packets get dense IDs from next until
// budget is spent, and each records its run in seen.
type treeRun struct {
	next   atomic.Int64 // next ID to hand out
	budget int64
	seen   []atomic.Uint32
	ran    atomic.Int64
	badSt  atomic.Int64 // packets that ran in the wrong stage
	addErr atomic.Value // the first error of an add from a packet
}

// treeNode spawns 0-3 children (more near the root, so the tree is bushy)
// while IDs remain, sometimes into a bucket instead of its own deque, and
// by value or by pointer.
type treeNode struct {
	id    int64
	rng   uint64
	stage StageID
	tr    *treeRun
}

func (n treeNode) Run(w *Worker) error {
	tr := n.tr
	tr.seen[n.id].Add(1)
	tr.ran.Add(1)
	if stageOf(w) != n.stage {
		tr.badSt.Add(1)
	}
	x := n.rng
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
			return nil
		}
		x = x*6364136223846793005 + 1442695040888963407
		c := treeNode{id: id, rng: x | 1, stage: n.stage, tr: tr}
		switch {
		case x>>60 == 0: // 1 in 16 goes through the bucket
			if err := w.Scheduler().Add(&c, n.stage); err != nil {
				tr.addErr.CompareAndSwap(nil, err)
				return err
			}
		case x>>59&1 == 0:
			Spawn(w, &c) // a pointer
		default:
			Spawn(w, c) // a value
		}
	}
	return nil
}

// TestExactlyOnce runs random spawn trees of ≥ 10^6 packets (scaled down
// under -race and -short) for every wake × steal policy pair and checks that every
// packet ran exactly once, in its own stage.
func TestExactlyOnce(t *testing.T) {
	size := int64(shortScale(scale(1<<20, 8), 8)) // 1,048,576 packets; 131,072 under -race or -short
	if stress() {
		size = 1 << 22
	}
	wakes := []WakePolicy{WakeOne, WakeAll, WakeN, WakeSearcher}
	for _, wake := range wakes {
		for _, steal := range steals {
			for _, local := range []string{"", "fifo", "lifo", "noparkspin"} {
				name := fmt.Sprintf("%v/%s", wake, steal)
				if local != "" {
					if !stress() && steal != (stealCase{StealHalf, 0}) {
						continue // FIFO, LIFO and no-poll variants: one pair by default, all under stress
					}
					name += "/" + local
				}
				cfg := Config{Workers: 4, Stages: []string{"a", "b"}, Wake: wake}
				steal.apply(&cfg)
				switch local {
				case "fifo":
					cfg.Local = LocalFIFO
				case "lifo":
					cfg.Local = LocalLIFO
				case "noparkspin":
					cfg.ParkSpin = -1 // every wake-up through a blocked receive
				}
				t.Run(name, func(t *testing.T) {
					s := newSched(t, cfg)
					tr := &treeRun{budget: size, seen: make([]atomic.Uint32, size)}
					// Roots: one added in stage 1 by AddAll, one in Unconstrained.
					tr.next.Store(2)
					require.NoError(t, s.AddAll([]Packet{treeNode{id: 0, rng: 88172645463325252, stage: 1, tr: tr}}))
					require.NoError(t, s.Add(treeNode{id: 1, rng: 1234567, stage: Unconstrained, tr: tr}, Unconstrained))
					start := time.Now()
					require.NoError(t, runCycle(t, s))
					require.Nil(t, tr.addErr.Load(), "adds from packets")
					require.Equal(t, size, tr.ran.Load(), "packets run")
					for i := range tr.seen {
						if c := tr.seen[i].Load(); c != 1 { // plain test first: testify per packet is slow
							require.Equal(t, uint32(1), c, "packet %d: times run", i)
						}
					}
					require.Zero(t, tr.badSt.Load(), "packets that ran in the wrong stage")
					st := s.Stats()
					require.Equal(t, uint64(size), st.Ran, "Stats' packets")
					var steals, attempts, stolen, sent, received uint64
					for _, w := range st.Workers {
						steals += w.Steals
						attempts += w.StealAttempts
						stolen += w.Stolen
						sent += w.WakesSent
						received += w.WakesReceived
					}
					// Each steal moves 1 (StealOne), or at most StealLimit
					// (MaxTake when zero).
					maxPer := uint64(policy.MaxTake)
					switch {
					case steal.policy == StealOne:
						maxPer = 1
					case steal.limit != 0:
						maxPer = uint64(steal.limit)
					}
					require.LessOrEqual(t, steals, attempts, "steals and attempts")
					require.GreaterOrEqual(t, stolen, steals, "packets stolen and steals")
					require.LessOrEqual(t, stolen, maxPer*steals, "packets stolen: at most %d per steal", maxPer)
					require.Equal(t, sent+st.ExternalWakes, received, "wake-ups received: sent by workers and by others")
					t.Logf("%d packets in %v, %d steals moving %d", size, time.Since(start), steals, stolen)
				})
			}
		}
	}
}
