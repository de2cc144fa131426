package policy

import (
	"testing"
	"time"

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

// TestPickHeavy: a type is picked when its mean run reaches HeavyShare of
// its stage's work per worker, longest mean first, at most MaxHeavyTypes;
// never in stage 0, alone in its stage, or on one worker.
func TestPickHeavy(t *testing.T) {
	ms := time.Millisecond
	// Stage 1: 8 ms of work on 2 workers, 4 ms a worker; the share is 2 ms.
	ts := []TypeTime{
		{Stage: 1, N: 1, Total: 3 * ms},  // mean 3 ms: heavy
		{Stage: 1, N: 5, Total: 5 * ms},  // mean 1 ms: light
		{Stage: 0, N: 1, Total: 50 * ms}, // unconstrained: never
		{Stage: 2, N: 1, Total: 9 * ms},  // alone in stage 2: never
		{Stage: 3, N: 0, Total: 0},       // no runs
		{Stage: 3, N: 2, Total: 4 * ms},  // mean 2 ms, exactly the share of stage 3
		{Stage: 3, N: 4, Total: 4 * ms},
	}
	work := []time.Duration{50 * ms, 8 * ms, 9 * ms, 8 * ms}
	got := PickHeavy(ts, work, 2, nil)
	require.Equal(t, []int{0, 5}, got, "longest mean first; the share itself is enough")
	require.Empty(t, PickHeavy(ts, work, 1, nil), "one worker: nothing to reorder")

	// It appends: what out held stays.
	require.Equal(t, []int{7, 0, 5}, PickHeavy(ts, work, 2, []int{7}))

	// Four workers: stage 1's share is 1 ms, so both of its types are picked.
	require.Equal(t, []int{0, 5, 1, 6}, PickHeavy(ts, work, 4, nil))

	// A stage whose work is out of range of work is skipped, not a panic.
	require.Empty(t, PickHeavy([]TypeTime{{Stage: 9, N: 1, Total: ms}}, work, 2, nil))

	// Equal means keep their order in ts.
	tie := []TypeTime{{Stage: 1, N: 1, Total: 2 * ms}, {Stage: 1, N: 2, Total: 4 * ms}, {Stage: 1, N: 1, Total: 2 * ms}}
	require.Equal(t, []int{0, 1, 2}, PickHeavy(tie, []time.Duration{0, 8 * ms}, 4, nil))

	// The cap: 12 types in one stage on 16 workers are all heavy, and
	// only the MaxHeavyTypes longest are kept.
	var many []TypeTime
	var w time.Duration
	for i := range 12 {
		many = append(many, TypeTime{Stage: 1, N: 1, Total: time.Duration(100+i) * time.Microsecond})
		w += many[i].Total
	}
	got = PickHeavy(many, []time.Duration{0, w}, 16, nil)
	require.Len(t, got, MaxHeavyTypes)
	require.Equal(t, []int{11, 10, 9, 8, 7, 6, 5, 4}, got)
}

// TestCarryHeavy: a type that drops below the share stays one cycle,
// marked Missed, and leaves after a second; one heavy again in between
// starts over.
func TestCarryHeavy(t *testing.T) {
	a := Heavy[string]{Key: "a", Stage: 1}
	b := Heavy[string]{Key: "b", Stage: 1}
	aIn2 := Heavy[string]{Key: "a", Stage: 2}

	set := CarryHeavy([]Heavy[string]{a}, nil)
	require.Equal(t, []Heavy[string]{a}, set)

	// a misses once: kept, marked; b is new.
	set = CarryHeavy([]Heavy[string]{b}, set)
	require.Equal(t, []Heavy[string]{b, {Key: "a", Stage: 1, Missed: true}}, set)

	// a is heavy again: the mark goes; b misses.
	set = CarryHeavy([]Heavy[string]{a}, set)
	require.Equal(t, []Heavy[string]{a, {Key: "b", Stage: 1, Missed: true}}, set)

	// Nothing heavy: a is kept once more, b (missed twice) leaves.
	set = CarryHeavy(nil, set)
	require.Equal(t, []Heavy[string]{{Key: "a", Stage: 1, Missed: true}}, set)
	set = CarryHeavy(nil, set)
	require.Empty(t, set)

	// The same key in another stage is another member.
	set = CarryHeavy([]Heavy[string]{aIn2}, []Heavy[string]{a})
	require.Equal(t, []Heavy[string]{aIn2, {Key: "a", Stage: 1, Missed: true}}, set)

	// Carried members never push the set past MaxHeavyTypes.
	var full, old []Heavy[string]
	for i := range MaxHeavyTypes {
		full = append(full, Heavy[string]{Key: string(rune('A' + i)), Stage: 1})
	}
	old = []Heavy[string]{{Key: "z", Stage: 1}}
	require.Len(t, CarryHeavy(full, old), MaxHeavyTypes)
}

// TestHeavyAllocs: picking and carrying allocate nothing into buffers
// with room (the scheduler calls them at every cycle's end).
func TestHeavyAllocs(t *testing.T) {
	ts := []TypeTime{{Stage: 1, N: 1, Total: 3 * time.Millisecond}, {Stage: 1, N: 5, Total: 5 * time.Millisecond}}
	work := []time.Duration{0, 8 * time.Millisecond}
	out := make([]int, 0, 8)
	next := make([]Heavy[int], 0, MaxHeavyTypes)
	old := []Heavy[int]{{Key: 1, Stage: 1}}
	allocs := testing.AllocsPerRun(100, func() {
		out = PickHeavy(ts, work, 2, out[:0])
		next = CarryHeavy(append(next[:0], Heavy[int]{Key: out[0], Stage: 1}), old)
	})
	require.Zero(t, allocs)
}

// TestSettingsString: the keys a trace's "wsched config" holds.
func TestSettingsString(t *testing.T) {
	s := Settings{Wake: WakeOne, Steal: StealHalf, Take: TakeFair, Local: LocalPrivate,
		StealLimit: 32, BucketBatch: 16, Spins: 8, ParkSpin: 50 * time.Microsecond, MaxQueued: 0, LearnHeavy: true}
	assert.Equal(t, "wake="+WakeOne.String()+" steal="+StealHalf.String()+" steal_limit=32 take="+TakeFair.String()+
		" bucket_batch=16 local="+LocalPrivate.String()+" spins=8 park_spin_ns=50000 max_queued=0 learn_heavy=true", s.String())
}
