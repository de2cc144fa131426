package scheduler

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
	if st.Workers[0].BucketTakes+st.Workers[1].BucketTakes != 1 {
		t.Fatalf("bucket takes %d + %d; want one take of the whole stage", st.Workers[0].BucketTakes, st.Workers[1].BucketTakes)
	}
	if by[0].Load() == 0 || by[1].Load() == 0 {
		t.Fatalf("packets per worker %d, %d: the held batch never reached the idle worker", by[0].Load(), by[1].Load())
	}
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
	if err := s.BulkAdd(1, ps); err != nil {
		t.Fatal(err)
	}
	runDropping(t, s, &ran, n-1)
	// The worker holds nothing afterwards: the next cycle runs each once.
	if err := s.BulkAdd(1, ps[1:]); err != nil {
		t.Fatal(err)
	}
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != n-1 {
		t.Fatalf("ran %d, want %d", ran.Load(), n-1)
	}
}

// TestHeldSmallTakeStealable: a take that is not held (smaller than
// minHeld, or cut by the fair share below a full batch) goes to the deque
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
		{"small", minHeld, minHeld, TakeFixed, minHeld}, // minHeld-1 beyond the first
		{"fair-share", 32, 40, TakeFair, 20},            // ⌈40/2⌉ = 20 < 32
		{"guided-short", 32, 40, TakeGuided, 20},        // ⌈40/4⌉ = 10 < the fair share
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, BucketBatch: c.batch, Take: c.policy})
			var wg sync.WaitGroup
			wg.Add(c.take - 1)
			done := make(chan struct{})
			ps := make([]Packet, c.n)
			ps[0] = fn(func(*Worker) {
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					panic("the rest of the take never ran elsewhere")
				}
			})
			for i := 1; i < c.n; i++ {
				ps[i] = fn(func(*Worker) {
					if i < c.take {
						wg.Done()
					}
				})
			}
			go func() { wg.Wait(); close(done) }()
			if err := s.BulkAdd(1, ps); err != nil {
				t.Fatal(err)
			}
			if err := runCycle(t, s); err != nil {
				t.Fatal(err)
			}
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

func (c chainLink) Run(w *Worker) {
	if c.left > 0 {
		w.Spawn(chainLink{c.left - 1, c.ran, c.want, c.timedOut})
		return
	}
	for deadline := time.Now().Add(10 * time.Second); c.ran.Load() < c.want; time.Sleep(50 * time.Microsecond) {
		if time.Now().After(deadline) {
			c.timedOut.Store(true)
			return
		}
	}
}

// TestHeldNotHiddenBySpawnChain: a held batch reaches an idle worker
// while the packet before it spawns a chain of single children (each run
// next, so the private stack never holds two): every spawn offers the
// held batch. The chain's last link waits until the whole batch has run
// elsewhere; a reviewer found the batch hidden for the whole chain.
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
	if err := s.BulkAdd(1, ps); err != nil {
		t.Fatal(err)
	}
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if timedOut.Load() || ran.Load() != n-1 {
		t.Fatalf("the chain's last link waited 10 s for the held batch (timed out: %v; %d of %d had run by the cycle's end)", timedOut.Load(), ran.Load(), n-1)
	}
}

// counter32 counts its runs.
type counter32 struct{ n *atomic.Int32 }

func (c counter32) Run(*Worker) { c.n.Add(1) }

// TestHeldLargeBatch: a BucketBatch larger than one bucket block still
// holds its full takes (a take never crosses a block, so the take's
// size cannot say whether the fair share cut it).
func TestHeldLargeBatch(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"a"}, BucketBatch: 1024})
	var heldSeen atomic.Int32
	ps := make([]Packet, 2000)
	for i := range ps {
		ps[i] = fn(func(w *Worker) {
			if w.heldHi-w.heldLo > minHeld {
				heldSeen.Store(1)
			}
		})
	}
	if err := s.BulkAdd(1, ps); err != nil {
		t.Fatal(err)
	}
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if heldSeen.Load() == 0 {
		t.Fatal("no take of a 2000-packet stage was held with BucketBatch 1024")
	}
}
