package scheduler

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace"
)

// origNamed is a packet with a name that spawns kids children named kid.
type origNamed struct {
	name string
	kids int
	kid  string
}

func (p origNamed) PacketName() string { return p.name }
func (p origNamed) Run(w *Worker) error {
	for range p.kids {
		Spawn(w, origNamed{name: p.kid})
	}
	return nil
}

// TestTraceRecordsQueuing: every packet begin says how its packet was
// queued, each add call is one add event whose stamp names its packets,
// and a spawn's stamp lies in its parent's slice, increasing in spawn
// order; the scheduler's configuration is recorded.
func TestTraceRecordsQueuing(t *testing.T) {
	rec := trace.NewRecorder(2, trace.Options{MaxBytes: 1 << 20})
	s, err := New(Config{Workers: 2, Stages: []string{"A", "B"}, Wake: WakeAll, Tracer: rec})
	require.NoError(t, err)
	require.NoError(t, s.Add(origNamed{name: "one"}))
	require.NoError(t, s.Add(origNamed{name: "prio"}, Priority))
	require.NoError(t, s.AddAll([]Packet{origNamed{name: "all0"}, origNamed{name: "all1"}, origNamed{name: "all2"}}, StageID(2), WakeN))
	require.NoError(t, s.AddDesignated(1, origNamed{name: "des"}))
	require.NoError(t, s.Add(origNamed{name: "parent", kids: 3, kid: "kid"}, StageID(2)))
	require.NoError(t, s.Run(context.Background()))
	require.NoError(t, s.Close())
	snap := rec.Snapshot()
	assert.Contains(t, snap.Config, "wake=wake-all")
	assert.Contains(t, snap.Config, "take=take-guided")

	type begin struct {
		worker int
		ev     trace.Event
		end    int64
	}
	byName := map[string][]begin{}
	for i := range snap.Workers() {
		evs := snap.Buffers[i].Events
		var open []int
		var begins []begin
		for _, e := range evs {
			switch e.Kind() {
			case trace.KindPacketBegin:
				open = append(open, len(begins))
				begins = append(begins, begin{worker: i, ev: e})
			case trace.KindPacketEnd:
				begins[open[len(open)-1]].end = e.Time
				open = open[:len(open)-1]
			}
		}
		for _, b := range begins {
			n := snap.Name(b.ev.Name())
			byName[n] = append(byName[n], b)
		}
	}
	var adds []trace.Event
	for _, e := range snap.Control().Events {
		if e.Kind() == trace.KindAdd {
			adds = append(adds, e)
		}
	}
	require.Len(t, adds, 5, "one add event per call")
	assert.Equal(t, trace.AddNormal, adds[0].How())
	assert.Equal(t, 1, adds[0].Stage())
	assert.Equal(t, trace.AddPriority, adds[1].How())
	assert.Equal(t, 3, adds[2].Packets())
	assert.Equal(t, 2, adds[2].Stage())
	assert.Equal(t, uint8(WakeN), adds[2].Wake(), "the call's wake option")
	assert.Zero(t, adds[0].Wake(), "no option: the scheduler's rule")
	assert.True(t, adds[0].Single(), "Add")
	assert.False(t, adds[2].Single(), "AddAll")
	assert.Equal(t, trace.AddDesignated, adds[3].How())
	assert.Equal(t, 1, adds[3].Target())

	one := byName["one"][0].ev
	if one.HasBorn() { // not stolen: its own stamp
		assert.Equal(t, trace.FromAdd, one.From())
		assert.Equal(t, adds[0].Born(), one.Born())
	}
	prio := byName["prio"][0].ev
	assert.True(t, prio.Priority())
	assert.Equal(t, trace.FromAdd, prio.From())
	des := byName["des"][0]
	assert.Equal(t, 1, des.worker)
	assert.Equal(t, trace.FromNone, des.ev.From())
	// The three of one AddAll: stamps from the add's, increasing in order.
	last := adds[2].Born() - 1
	for i := range 3 {
		b := byName["all"+string(rune('0'+i))][0].ev
		if !b.HasBorn() {
			continue // stolen: its stamp is in its steal's origin
		}
		assert.Greater(t, b.Born(), last, "all%d", i)
		last = b.Born()
	}
	parent := byName["parent"][0]
	kids := byName["kid"]
	require.Len(t, kids, 3)
	var borns []int64
	for _, k := range kids {
		if !k.ev.HasBorn() {
			continue
		}
		assert.Equal(t, parent.worker, k.ev.From(), "spawned on the parent's worker")
		assert.GreaterOrEqual(t, k.ev.Born(), parent.ev.Time)
		assert.LessOrEqual(t, k.ev.Born(), parent.end)
		borns = append(borns, k.ev.Born())
	}
	seen := map[int64]bool{}
	for _, b := range borns {
		assert.False(t, seen[b], "spawn stamps are distinct")
		seen[b] = true
	}
}
