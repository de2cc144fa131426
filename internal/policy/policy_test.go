package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNames: every Kind has a unique name that Parse reads back, a
// family, and only Default has none.
func TestNames(t *testing.T) {
	seen := map[string]Kind{}
	for k := Default; k < end; k++ {
		name := k.String()
		require.NotContains(t, seen, name, "duplicate name")
		seen[name] = k
		got, ok := Parse(name)
		require.True(t, ok, name)
		require.Equal(t, k, got)
		require.True(t, k.Valid())
		if k == Default {
			require.Equal(t, FamilyNone, k.Family())
		} else {
			require.NotEqual(t, FamilyNone, k.Family(), name)
		}
	}
	_, ok := Parse("wake-some")
	require.False(t, ok)
	require.False(t, end.Valid())
	require.Equal(t, "policy(200)", Kind(200).String())
	require.Equal(t, FamilyNone, Kind(200).Family())
	require.Equal(t, []string{"wake-one", "wake-all", "wake-n", "wake-searcher"}, Names(FamilyWake))
	for _, d := range []Kind{DefaultWake, DefaultSteal, DefaultTake, DefaultLocal} {
		require.NotEqual(t, FamilyNone, d.Family())
	}
	require.Equal(t, WakeAll, Resolve(WakeAll, WakeN))
	require.Equal(t, WakeN, Resolve(Default, WakeN))
}

// TestTakeLimit: the take rules at their edges, for 2 workers and a batch
// of 32 unless said otherwise.
func TestTakeLimit(t *testing.T) {
	cases := []struct {
		take                  Kind
		batch, depth, workers int
		want                  int
	}{
		{TakeFixed, 32, 1, 2, 32},    // MMTk: the batch, whatever the depth
		{TakeFixed, 500, 1, 2, 128},  // never past a block
		{TakeFixed, 0, 10, 2, 1},     // at least one
		{TakeFair, 32, 0, 2, 1},      // at least one
		{TakeFair, 32, 5, 2, 3},      // ⌈5/2⌉
		{TakeFair, 32, 64, 2, 32},    // the batch caps the fair share
		{TakeFair, 32, 1000, 2, 32},  // fair never exceeds the batch
		{TakeGuided, 32, 5, 2, 3},    // short: the fair share
		{TakeGuided, 32, 128, 2, 32}, // 2n·batch deep: still the batch
		{TakeGuided, 32, 129, 2, 33}, // deeper: ⌈d/2n⌉
		{TakeGuided, 32, 1000, 2, 128},
		{TakeGuided, 8, 1000, 2, 32},   // four batches at most
		{TakeGuided, 32, 1000, 16, 32}, // ⌈1000/32⌉ = 32
	}
	for _, c := range cases {
		got := TakeLimit(c.take, c.batch, c.depth, c.workers)
		assert.Equal(t, c.want, got, "%v batch %d depth %d workers %d", c.take, c.batch, c.depth, c.workers)
		assert.GreaterOrEqual(t, got, 1)
		assert.LessOrEqual(t, got, MaxTake)
	}
}

// TestWakes: whom adds and openings wake, by policy.
func TestWakes(t *testing.T) {
	assert.Equal(t, 1, AddWakes(WakeOne, 10, 3, 0))
	assert.Equal(t, 0, AddWakes(WakeOne, 10, 0, 0), "nobody parked")
	assert.Equal(t, 3, AddWakes(WakeAll, 1, 3, 0))
	assert.Equal(t, 2, AddWakes(WakeN, 2, 3, 0))
	assert.Equal(t, 3, AddWakes(WakeN, 10, 3, 0))
	assert.Equal(t, 1, AddWakes(WakeSearcher, 10, 3, 0))
	assert.Equal(t, 0, AddWakes(WakeSearcher, 10, 3, 1), "a searcher exists")
	assert.Equal(t, WakeOne, SingleWake(WakeN))
	assert.Equal(t, WakeOne, SingleWake(WakeAll))
	assert.Equal(t, WakeSearcher, SingleWake(WakeSearcher))
	assert.Equal(t, 16, OpenWakes(WakeAll, 3, 16))
	assert.Equal(t, 3, OpenWakes(WakeN, 3, 16))
	assert.Equal(t, 1, OpenWakes(WakeOne, 3, 16))
	assert.Equal(t, 1, OpenWakes(WakeSearcher, 3, 16))
	assert.True(t, Surplus(1, 0))
	assert.False(t, Surplus(1, 1))
	assert.False(t, Surplus(0, 0))
	assert.True(t, WantsWork(2, 1))
	assert.False(t, WantsWork(2, 2))
	assert.False(t, WantsWork(0, 0))
}

// TestStealAndHold: steal sizes and the holding rules.
func TestStealAndHold(t *testing.T) {
	assert.Equal(t, 1, StealLimit(StealOne, 128))
	assert.Equal(t, 64, StealLimit(StealHalf, 64))
	assert.Equal(t, 5, StealCount(9, 128))
	assert.Equal(t, 1, StealCount(9, 1))
	assert.Equal(t, 32, StealCount(100, 32))
	assert.True(t, HoldTake(32, 32))
	assert.False(t, HoldTake(31, 32), "cut by the fair share")
	assert.False(t, HoldTake(8, 8), "too few beyond the one run")
	assert.True(t, HoldTake(128, 500), "a full block under a huge batch")
	assert.True(t, HoldSteal(9))
	assert.False(t, HoldSteal(8))
}

// TestOfferGiveUpPolling: what a worker offers idle workers, when a
// searcher parks, and when a parked worker still polls.
func TestOfferGiveUpPolling(t *testing.T) {
	for _, c := range []struct {
		priv        int
		held        bool
		idle, local int
		mp, eh      bool
	}{
		{5, true, 0, 0, false, false},  // nobody idle
		{5, true, 2, 2, false, false},  // the deque holds enough
		{5, true, 2, 0, true, false},   // 4 moved: enough
		{2, true, 3, 0, true, true},    // 1 moved: 1 < 3, the held batch too
		{1, true, 1, 0, false, true},   // nothing private to move: the held batch
		{1, false, 1, 0, false, false}, // the newest private packet stays
	} {
		mp, eh := Offer(c.priv, c.held, c.idle, c.local)
		assert.Equal(t, c.mp, mp, "%+v", c)
		assert.Equal(t, c.eh, eh, "%+v", c)
	}
	assert.False(t, GiveUp(64, 64, 1, 2))
	assert.True(t, GiveUp(65, 64, 1, 2))
	assert.True(t, GiveUp(1, 64, 2, 2), "nobody runs a packet")
	assert.True(t, Polling(0, 200_000))
	assert.True(t, Polling(199_999, 200_000))
	assert.False(t, Polling(200_000, 200_000))
	assert.False(t, Polling(0, -1), "no poll")
	assert.Equal(t, SourceSteal, FindOrder[len(FindOrder)-1])
}
