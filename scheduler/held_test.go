package scheduler

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/policy"
)

// TestHeldBatchReachesIdleWorker: a bucket take that a worker keeps to
// itself (held) goes to its deque as soon as another worker is idle, at
// the next packet boundary. One take grabs the whole stage (BucketBatch
// 64, fixed), so the other worker can only get work through that hand-over;
// every packet runs exactly once.
func TestHeldBatchReachesIdleWorker(t *testing.T) {
	const n = 64
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, BucketBatch: n, Take: TakeFixed})
	var runs [n]atomic.Int32
	var by [2]atomic.Int32
	ps := make([]Packet, n)
	for i := range ps {
		ps[i] = fn(func(w *Worker) {
			runs[i].Add(1)
			by[w.ID()].Add(1)
			time.Sleep(200 * time.Microsecond)
		})
	}
	runOnce(t, s, ps, runs[:])
	st := s.Stats()
	require.Equal(t, uint64(1), st.Workers[0].BucketTakes+st.Workers[1].BucketTakes, "one take of the whole stage")
	require.NotZero(t, by[0].Load(), "the held batch never reached the idle worker")
	require.NotZero(t, by[1].Load(), "the held batch never reached the idle worker")
	t.Logf("packets per worker: %d, %d; steals %d, %d", by[0].Load(), by[1].Load(), st.Workers[0].Steals, st.Workers[1].Steals)
}

// TestHeldBatchDroppedOnPanic: when the first packet of a held take
// panics, the packets held behind it are dropped and counted like queued
// ones.
func TestHeldBatchDroppedOnPanic(t *testing.T) {
	const n = 40
	s := newSched(t, Config{Workers: 1, Stages: []string{"a"}, BucketBatch: n, Take: TakeFixed})
	var ran atomic.Int64
	ps := make([]Packet, n)
	ps[0] = boom{}
	for i := 1; i < n; i++ {
		ps[i] = counter{&ran}
	}
	require.NoError(t, s.AddAll(ps))
	runDropping(t, s, &ran, n-1)
	// The worker holds nothing afterwards: the next cycle runs each once.
	require.NoError(t, s.AddAll(ps[1:]))
	require.NoError(t, runCycle(t, s))
	require.Equal(t, int64(n-1), ran.Load())
}

// TestHeldSmallTakeStealable: a take that is not held (smaller than
// MinHeld, or cut by the fair share below a full batch) goes to the deque
// at once, so a worker stuck in the take's first packet does not keep the
// rest from an idle worker. The first packet waits until every other
// packet of its take has run.
func TestHeldSmallTakeStealable(t *testing.T) {
	for _, c := range []struct {
		name     string
		batch, n int
		policy   TakePolicy
		take     int // packets 0..take-1 form the first take
	}{
		{"small", policy.MinHeld, policy.MinHeld, TakeFixed, policy.MinHeld}, // MinHeld-1 beyond the first
		{"fair-share", 32, 40, TakeFair, 20},                                 // ⌈40/2⌉ = 20 < 32
		{"guided-short", 32, 40, TakeGuided, 20},                             // ⌈40/4⌉ = 10 < the fair share
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, BucketBatch: c.batch, Take: c.policy})
			var wg sync.WaitGroup
			wg.Add(c.take - 1)
			done := make(chan struct{})
			var ran atomic.Int64
			ps := make([]Packet, c.n)
			ps[0] = Func("first", func(*Worker) error {
				select {
				case <-done:
					return nil
				case <-time.After(10 * time.Second):
					return errFail // the rest of the take never ran elsewhere
				}
			})
			for i := 1; i < c.n; i++ {
				ps[i] = fn(func(*Worker) {
					ran.Add(1)
					if i < c.take {
						wg.Done()
					}
				})
			}
			go func() { wg.Wait(); close(done) }()
			require.NoError(t, s.AddAll(ps))
			require.NoError(t, runCycle(t, s), "the rest of the take never ran elsewhere")
			require.Equal(t, int64(c.n-1), ran.Load())
		})
	}
}

// chainLink spawns the next link until left is 0; the last one waits
// (with a deadline) until ran reaches want.
type chainLink struct {
	left     int
	ran      *atomic.Int32
	want     int32
	timedOut *atomic.Bool
}

func (c chainLink) Run(w *Worker) error {
	if c.left > 0 {
		Spawn(w, chainLink{c.left - 1, c.ran, c.want, c.timedOut})
		return nil
	}
	for deadline := time.Now().Add(10 * time.Second); c.ran.Load() < c.want; time.Sleep(50 * time.Microsecond) {
		if time.Now().After(deadline) {
			c.timedOut.Store(true)
			return nil
		}
	}
	return nil
}

// TestHeldNotHiddenBySpawnChain: a held batch reaches an idle worker
// while the packet before it spawns a chain of single children (each run
// next, so the private stack never holds two): every spawn offers the
// held batch. The chain's last link waits until the whole batch has run
// elsewhere (without that offer the batch once stayed hidden for the
// whole chain).
func TestHeldNotHiddenBySpawnChain(t *testing.T) {
	const n = 32
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, BucketBatch: n, Take: TakeFixed})
	var ran atomic.Int32
	var timedOut atomic.Bool
	ps := make([]Packet, n)
	ps[0] = chainLink{5, &ran, n - 1, &timedOut}
	for i := 1; i < n; i++ {
		ps[i] = counter32{&ran}
	}
	require.NoError(t, s.AddAll(ps))
	require.NoError(t, runCycle(t, s))
	require.False(t, timedOut.Load(), "the chain's last link waited 10 s for the held batch")
	require.Equal(t, int32(n-1), ran.Load())
}

// counter32 counts its runs.
type counter32 struct{ n *atomic.Int32 }

func (c counter32) Run(*Worker) error { c.n.Add(1); return nil }

// TestHeldLargeBatch: a BucketBatch larger than one bucket block still
// holds its full takes (a take never crosses a block, so the take's
// size cannot say whether the fair share cut it).
func TestHeldLargeBatch(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"a"}, BucketBatch: 1024})
	var heldSeen, ran atomic.Int32
	ps := make([]Packet, 2000)
	for i := range ps {
		ps[i] = fn(func(w *Worker) {
			ran.Add(1)
			if w.heldHi-w.heldLo > policy.MinHeld {
				heldSeen.Store(1)
			}
		})
	}
	require.NoError(t, s.AddAll(ps))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int32(2000), ran.Load())
	require.NotZero(t, heldSeen.Load(), "no take of a 2000-packet stage was held with BucketBatch 1024")
}
