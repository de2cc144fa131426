package scheduler

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/policy"
)

// TestStealPolicies: one steal from a victim holding n packets takes 1
// (StealOne), or min(⌈n/2⌉, StealLimit) (StealHalf; StealLimit 0 is
// MaxTake), one to run and the rest held by the thief (MinHeld or more)
// or in its deque, and counts it; under every Local policy. White-box:
// the scheduler has never run, so its parked workers have never touched
// their deques and the test goroutine acts as the owner of both.
func TestStealPolicies(t *testing.T) {
	const maxTake = policy.MaxTake
	cases := []struct {
		steal StealPolicy
		limit int
		n     int
		want  int
	}{
		{StealOne, 0, 20, 1},
		{StealHalf, 0, 20, 10},
		{StealHalf, 0, 21, 11},
		{StealHalf, 0, 1, 1},
		{0, 0, 20, 10}, // the default: StealHalf
		{StealHalf, 4, 20, 4},
		{StealHalf, 4, 5, 3},
		{StealHalf, 1, 20, 1},
		{0, 3, 20, 3},
		{StealHalf, 0, 2 * maxTake, maxTake},
		{StealHalf, 0, 600, maxTake}, // half capped at MaxTake
		{StealHalf, maxTake, 600, maxTake},
		{StealHalf, 16, 600, 16},
	}
	for _, local := range []LocalPolicy{LocalPrivate, LocalLIFO, LocalFIFO} {
		for _, c := range cases {
			what := fmt.Sprintf("%v, %v limit %d from %d", local, c.steal, c.limit, c.n)
			s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, Steal: c.steal, StealLimit: c.limit, Local: local})
			victim, thief := s.s.workers[0], s.s.workers[1]
			var n atomic.Int64
			for range c.n {
				victim.local.Push(mkTask(counter{&n}, 1))
			}
			tk, ok, _ := thief.steal()
			held, queued := thief.heldHi-thief.heldLo, thief.local.Len()
			moved := held + queued
			require.True(t, ok, what)
			require.NotNil(t, tk.p, what)
			assert.Equal(t, StageID(1), tk.stage(), what)
			assert.Equal(t, c.want, moved+1, "%s: took 1 + %d moved", what, moved)
			assert.Equal(t, c.n-c.want, victim.local.Len(), "%s: the victim's rest", what)
			if wantHeld := c.want-1 >= policy.MinHeld; moved > 0 {
				if wantHeld {
					assert.Equal(t, moved, held, "%s: all held", what)
				} else {
					assert.Equal(t, moved, queued, "%s: all in the deque", what)
				}
			}
			clear(thief.held)
			thief.heldLo, thief.heldHi = 0, 0
			h := thief.hot
			assert.Equal(t, uint64(1), h.stealAttempts, what)
			assert.Equal(t, uint64(1), h.steals, what)
			assert.Equal(t, uint64(c.want), h.stolen, what)
			// Empty both deques (their owner is this goroutine) before Close.
			for _, w := range s.s.workers {
				for {
					if _, ok := w.local.Pop(); !ok {
						break
					}
				}
			}
			_, ok, _ = thief.steal()
			assert.False(t, ok, "%s: a steal from empty deques", what)
			assert.Equal(t, uint64(1), thief.hot.stealAttempts, "%s: a steal from empty deques counted an attempt", what)
			require.NoError(t, s.Close())
		}
	}
}

// TestBucketTake: how many packets a bucket take moves under each
// Config.Take: at most the worker's fair share of the bucket, ⌈depth ÷
// workers⌉, and BucketBatch (TakeFair); BucketBatch whenever there are
// that many (TakeFixed, MMTk's whole batches); the fair share, or
// ⌈depth ÷ 2·workers⌉ up to MaxTake while the bucket is deep (TakeGuided,
// the default), from the bucket's queue (AddAll) and from lent slices
// (AddAll with Lend) alike. White-box, as above: the test goroutine acts
// as worker 0 on a scheduler that has never run.
func TestBucketTake(t *testing.T) {
	cases := []struct {
		take       TakePolicy
		workers, n int
		want       int
		batch      int // 0: 32
	}{
		{TakeFair, 4, 32, 8, 0},
		{TakeFair, 2, 32, 16, 0},
		{TakeFair, 2, 67, 32, 0}, // ⌈67/2⌉ = 34, capped at BucketBatch
		{TakeFair, 4, 3, 1, 0},
		{TakeFair, 1, 100, 32, 0},
		{TakeFair, 2, 1000, 32, 0},
		{TakeFixed, 4, 32, 32, 0},
		{TakeFixed, 4, 3, 3, 0},
		{TakeFixed, 2, 1000, 32, 0},
		{TakeGuided, 4, 32, 8, 0},   // ⌈32/8⌉ = 4 < the fair share
		{TakeGuided, 2, 67, 32, 0},  // ⌈67/4⌉ = 17 < BucketBatch
		{TakeGuided, 2, 300, 75, 0}, // ⌈300/4⌉
		{TakeGuided, 1, 100, 50, 0}, // ⌈100/2⌉
		{TakeGuided, 2, 1000, policy.MaxTake, 0},
		{TakeGuided, 4, 3, 1, 0},
		{0, 2, 300, 75, 0},           // the default: TakeGuided
		{TakeGuided, 2, 1000, 32, 8}, // four times BucketBatch
		{TakeGuided, 2, 20, 4, 1},    // ⌈20/4⌉ = 5, capped at 4 × BucketBatch
		{TakeGuided, 2, 12, 3, 1},    // ⌈12/4⌉ = 3 > the fair share of 1
		{TakeFair, 2, 1000, 1, 1},
	}
	for _, lent := range []bool{false, true} {
		for _, c := range cases {
			s := newSched(t, Config{Workers: c.workers, Stages: []string{"a"}, Take: c.take, BucketBatch: c.batch})
			var n atomic.Int64
			ps := make([]Packet, c.n)
			for i := range ps {
				ps[i] = counter{&n}
			}
			var opts []Option
			if lent {
				opts = append(opts, Lend)
			}
			require.NoError(t, s.AddAll(ps, opts...))
			s.s.cur.Store(1) // stage 1 open for findBuckets
			w := s.s.workers[0]
			tk, ok, _ := w.findBuckets()
			got := w.local.Len() + w.heldHi - w.heldLo + 1
			require.True(t, ok)
			require.NotNil(t, tk.p)
			assert.Equal(t, c.want, got, "%v, batch %d, lent %v, %d workers, %d queued: took", c.take, c.batch, lent, c.workers, c.n)
		}
	}
}

// TestTakeLimitBounds: over every depth, worker count and batch, a take
// limit is at least 1 and at most the held array; TakeFair never exceeds
// the batch or the fair share; TakeGuided never falls below TakeFair, never
// exceeds four batches, and exceeds TakeFair only while the bucket is
// deeper than 2 × workers × batch.
func TestTakeLimitBounds(t *testing.T) {
	for n := 1; n <= 17; n++ {
		for batch := 1; batch <= maxHeld; batch = batch*2 + 1 {
			for d := 0; d <= 4*maxHeld*n; d += 1 + d/7 {
				fair := policy.TakeLimit(policy.TakeFair, batch, d, n)
				guided := policy.TakeLimit(policy.TakeGuided, batch, d, n)
				share := max(1, (d+n-1)/n)
				// Plain tests first: testify per case is slow over this grid.
				if fair < 1 || fair > batch || fair > share {
					require.Failf(t, "TakeFair out of bounds", "fair(batch %d, d %d, n %d) = %d, share %d", batch, d, n, fair, share)
				}
				if guided < fair || guided > min(policy.GuidedFactor*batch, maxHeld) {
					require.Failf(t, "TakeGuided out of bounds", "guided(batch %d, d %d, n %d) = %d, fair %d", batch, d, n, guided, fair)
				}
				if guided > fair && d <= 2*n*batch {
					require.Failf(t, "TakeGuided above TakeFair on a short bucket", "guided(batch %d, d %d, n %d) = %d, fair %d", batch, d, n, guided, fair)
				}
			}
		}
	}
}
