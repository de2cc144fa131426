package timeline_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/internal/timeline"
)

// walk returns copies of the ops Walk draws from s (Walk reuses its Op and
// its Args) and its stats.
func walk(s *trace.Snapshot) ([]timeline.Op, timeline.Stats) {
	var ops []timeline.Op
	st := timeline.Walk(s, func(op *timeline.Op) {
		c := *op
		c.Args = append([]timeline.Arg(nil), op.Args...)
		ops = append(ops, c)
	})
	return ops, st
}

// named returns the ops named name, in order.
func named(ops []timeline.Op, name string) []timeline.Op {
	var out []timeline.Op
	for _, op := range ops {
		if op.Name == name {
			out = append(out, op)
		}
	}
	return out
}

// arg returns op's argument key.
func arg(t *testing.T, op timeline.Op, key string) timeline.Arg {
	t.Helper()
	for _, a := range op.Args {
		if a.Key == key {
			return a
		}
	}
	require.FailNow(t, "no argument "+key, "op %+v", op)
	return timeline.Arg{}
}

// checkWellFormed checks what Walk promises of every walk: ops in
// non-decreasing time order, and on every track an End closes the
// innermost open slice (of the kind it says) on the buffer that opened
// it, and no slice is left open.
func checkWellFormed(t *testing.T, ops []timeline.Op) {
	t.Helper()
	type open struct {
		kind   timeline.SliceKind
		buffer int
	}
	stacks := map[timeline.Track][]open{}
	var last int64
	for i, op := range ops {
		require.GreaterOrEqual(t, op.Time, last, "op %d (%+v) before the op ahead of it", i, op)
		last = op.Time
		st := stacks[op.Track]
		switch op.Kind {
		case timeline.Begin:
			stacks[op.Track] = append(st, open{op.Slice, op.Buffer})
		case timeline.End:
			require.NotEmpty(t, st, "op %d: End %+v with no open slice on its track", i, op)
			top := st[len(st)-1]
			require.Equal(t, top.kind, op.Slice, "op %d: End %+v closes a slice of another kind", i, op)
			require.Equal(t, top.buffer, op.Buffer, "op %d: End %+v on another buffer than its Begin", i, op)
			stacks[op.Track] = st[:len(st)-1]
		}
	}
	for tr, st := range stacks {
		require.Empty(t, st, "slices left open on track %+v", tr)
	}
}

func TestStageName(t *testing.T) {
	names := map[int]string{1: "Scan", 2: ""}
	assert.Equal(t, "Scan", timeline.StageName(names, 1))
	assert.Equal(t, "stage 2", timeline.StageName(names, 2), "an empty recorded name")
	assert.Equal(t, "stage 7", timeline.StageName(names, 7), "an unrecorded stage")
	assert.Equal(t, timeline.CatUnconstrained, timeline.StageName(names, 0))
	assert.Equal(t, timeline.CatUnconstrained, timeline.StageName(nil, 0))
}

func TestCounterName(t *testing.T) {
	names := map[int]string{1: "Scan"}
	assert.Equal(t, "bucket: Scan", timeline.CounterName(names, trace.CounterBucketDepth, 1))
	assert.Equal(t, "bucket: stage 3", timeline.CounterName(names, trace.CounterBucketDepth, 3))
	assert.Equal(t, "parked workers", timeline.CounterName(names, trace.CounterParked, 0))
	assert.Equal(t, "local deque: worker 2", timeline.CounterName(names, trace.CounterLocalLen, 2))
	assert.Equal(t, "CounterKind(9) 4", timeline.CounterName(names, trace.CounterKind(9), 4))
}

// TestStageNames: the first StageOpen of a stage names it.
func TestStageNames(t *testing.T) {
	b := tracebuf.NewBuilder(1)
	b.StageOpen(1, 1, b.Intern("Prepare"))
	b.StageOpen(2, 2, b.Intern("Closure"))
	b.StageOpen(3, 1, b.Intern("Again"))
	assert.Equal(t, map[int]string{1: "Prepare", 2: "Closure"}, timeline.StageNames(b.Snapshot()))
	assert.Empty(t, timeline.StageNames(tracebuf.NewBuilder(2).Snapshot()))
}

// TestWalkEmpty: a snapshot without events draws nothing, not even its
// configuration, which is drawn before the first event.
func TestWalkEmpty(t *testing.T) {
	b := tracebuf.NewBuilder(2)
	b.SetConfig("wake=wake-one")
	ops, st := walk(b.Snapshot())
	assert.Empty(t, ops)
	assert.Zero(t, st.Orphans)
}

// TestWalkPacketSlices: a packet's begin and end draw a slice on its
// worker's track, named after the packet, with its stage as category; at
// equal times an End comes before the Begin recorded after it.
func TestWalkPacketSlices(t *testing.T) {
	b := tracebuf.NewBuilder(2)
	scan := b.Intern("Scan")
	b.StageOpen(5, 1, b.Intern("Prepare"))
	b.PacketBegin(1, 10, scan, 1, 0, trace.FromAdd, 5, true)
	b.PacketEnd(1, 20)
	b.PacketBegin(1, 20, scan, 0, 0, trace.FromNone, 12, false)
	b.PacketEnd(1, 30)
	ops, st := walk(b.Snapshot())
	require.Zero(t, st.Orphans)
	checkWellFormed(t, ops)

	var packets []timeline.Op
	for _, op := range ops {
		if op.Slice == timeline.SlicePacket {
			packets = append(packets, op)
		}
	}
	require.Len(t, packets, 4)
	kinds := []timeline.OpKind{packets[0].Kind, packets[1].Kind, packets[2].Kind, packets[3].Kind}
	assert.Equal(t, []timeline.OpKind{timeline.Begin, timeline.End, timeline.Begin, timeline.End}, kinds, "the End at 20 before the Begin at 20")
	worker1 := timeline.Track{Kind: timeline.TrackWorker, Index: 1}
	for _, op := range packets {
		assert.Equal(t, worker1, op.Track, "op %+v", op)
		assert.Equal(t, 1, op.Buffer, "op %+v", op)
	}
	first := packets[0]
	assert.Equal(t, int64(10), first.Time)
	assert.Equal(t, "Scan", first.Name)
	assert.Equal(t, scan, first.NameID)
	assert.Equal(t, "Prepare", first.Category)
	assert.Equal(t, 1, first.Stage)
	assert.Equal(t, trace.FromAdd, first.QueuedFrom)
	assert.Equal(t, int64(5), first.Queued)
	assert.True(t, first.Priority)
	assert.Zero(t, first.FlowIn)

	second := packets[2]
	assert.Equal(t, timeline.CatUnconstrained, second.Category, "stage 0")
	assert.Equal(t, trace.FromNone, second.QueuedFrom)
	assert.Equal(t, int64(12), second.Queued)
	assert.Equal(t, int64(30), packets[3].Time)
}

// TestWalkOrphansAndTrailer: an end without its begin is counted, not
// drawn; slices still open at the end are closed at the snapshot's end,
// innermost first.
func TestWalkOrphansAndTrailer(t *testing.T) {
	b := tracebuf.NewBuilder(1)
	p := b.Intern("P")
	b.PacketEnd(0, 1) // no begin
	b.Unpark(0, 2)    // no park
	b.Park(0, 3)
	b.PacketEnd(0, 4) // the open slice is a park, not a packet
	b.Unpark(0, 5)
	b.PacketBegin(0, 6, p, 1, 0, trace.FromAdd, 6, false)
	b.Park(0, 7)
	b.CycleBegin(50, 1) // End is 50
	ops, st := walk(b.Snapshot())
	assert.Equal(t, 3, st.Orphans)
	checkWellFormed(t, ops)

	var worker []timeline.Op
	for _, op := range ops {
		if op.Track.Kind == timeline.TrackWorker {
			worker = append(worker, op)
		}
	}
	require.Len(t, worker, 6)
	want := []struct {
		kind  timeline.OpKind
		slice timeline.SliceKind
		time  int64
	}{
		{timeline.Begin, timeline.SlicePark, 3}, {timeline.End, timeline.SlicePark, 5},
		{timeline.Begin, timeline.SlicePacket, 6}, {timeline.Begin, timeline.SlicePark, 7},
		{timeline.End, timeline.SlicePark, 50}, {timeline.End, timeline.SlicePacket, 50},
	}
	for i, w := range want {
		assert.Equal(t, w.kind, worker[i].Kind, "worker op %d", i)
		assert.Equal(t, w.slice, worker[i].Slice, "worker op %d", i)
		assert.Equal(t, w.time, worker[i].Time, "worker op %d", i)
	}
	assert.Equal(t, timeline.NamePark, worker[0].Name)
}

// TestWalkCyclesAndStages: a cycle is a slice on the control track and
// each stage one on the stage track; opening a stage ends the previous
// one, a stage close that is not the innermost stage's is ignored, and a
// cycle's end closes its stage and itself.
func TestWalkCyclesAndStages(t *testing.T) {
	b := tracebuf.NewBuilder(1)
	prep, clos := b.Intern("Prepare"), b.Intern("Closure")
	b.CycleBegin(10, 7)
	b.StageOpen(11, 1, prep)
	b.StageOpen(12, 2, clos) // ends Prepare
	b.StageClose(13, 1)      // not the innermost: ignored
	b.CycleEnd(14, 7)        // ends Closure and the cycle
	b.CycleBegin(20, 8)
	b.StageOpen(21, 1, prep)
	b.StageClose(22, 1)
	b.CycleBegin(30, 9) // ends cycle 8; cycle 9 is closed at the end
	ops, st := walk(b.Snapshot())
	require.Zero(t, st.Orphans)
	checkWellFormed(t, ops)

	type line struct {
		kind  timeline.OpKind
		track timeline.TrackKind
		slice timeline.SliceKind
		time  int64
	}
	var got []line
	for _, op := range ops {
		got = append(got, line{op.Kind, op.Track.Kind, op.Slice, op.Time})
		assert.Equal(t, -1, op.Buffer, "op %+v: recorded on the control buffer", op)
	}
	C, S := timeline.TrackControl, timeline.TrackStages
	B, E := timeline.Begin, timeline.End
	assert.Equal(t, []line{
		{B, C, timeline.SliceCycle, 10}, {B, S, timeline.SliceStage, 11},
		{E, S, timeline.SliceStage, 12}, {B, S, timeline.SliceStage, 12},
		{E, S, timeline.SliceStage, 14}, {E, C, timeline.SliceCycle, 14},
		{B, C, timeline.SliceCycle, 20}, {B, S, timeline.SliceStage, 21}, {E, S, timeline.SliceStage, 22},
		{E, C, timeline.SliceCycle, 30}, {B, C, timeline.SliceCycle, 30}, {E, C, timeline.SliceCycle, 30},
	}, got)

	cycles := named(ops, timeline.NameCycle)
	require.Len(t, cycles, 3)
	assert.Equal(t, uint64(7), arg(t, cycles[0], timeline.ArgCycle).Uint)
	assert.Equal(t, uint64(9), arg(t, cycles[2], timeline.ArgCycle).Uint)
	stages := named(ops, "Closure")
	require.Len(t, stages, 1)
	assert.Equal(t, 2, stages[0].Stage)
	assert.Equal(t, clos, stages[0].NameID)
	assert.Equal(t, int64(2), arg(t, stages[0], timeline.ArgStage).Int)
}

// TestWalkConfigFirst: the configuration is an instant on the process
// track before the first event's op, one string argument per pair.
func TestWalkConfigFirst(t *testing.T) {
	b := tracebuf.NewBuilder(1)
	b.SetConfig("wake=wake-n steal=steal-half")
	b.Park(0, 40)
	ops, _ := walk(b.Snapshot())
	require.NotEmpty(t, ops)
	cfg := ops[0]
	assert.Equal(t, timeline.NameConfig, cfg.Name)
	assert.Equal(t, timeline.Instant, cfg.Kind)
	assert.Equal(t, timeline.Track{Kind: timeline.TrackProcess}, cfg.Track)
	assert.Equal(t, int64(40), cfg.Time)
	assert.Equal(t, []timeline.Arg{
		{Key: "wake", Kind: timeline.ArgString, Str: "wake-n"},
		{Key: "steal", Kind: timeline.ArgString, Str: "steal-half"},
	}, cfg.Args)
	assert.Len(t, named(ops, timeline.NameConfig), 1, "drawn once")
}

// TestWalkStealArrows: a stamped steal's arrow starts at a "queued"
// instant on the spawner's track (the control track for an add) at the
// birth, drawn on the thief's buffer before the steal, and ends at the
// stolen packet's begin, which takes its queuing from the origin; an
// unstamped steal's arrow starts at a "stolen" instant on the victim's
// track; a steal whose packet never began draws no arrow.
func TestWalkStealArrows(t *testing.T) {
	b := tracebuf.NewBuilder(3)
	p := b.Intern("P")
	const spawned, added, unstamped, lost = 1<<40 | 1, 1<<40 | 2, 1<<40 | 3, 1<<40 | 4
	b.PacketBegin(0, 10, p, 1, 0, trace.FromAdd, 0, false)
	b.PacketEnd(0, 100)
	b.Steal(1, 50, 0, 2, spawned, 20, 0) // spawned on worker 0 at 20
	b.PacketBegin(1, 51, p, 1, spawned, 0, 0, false)
	b.PacketEnd(1, 60)
	b.Steal(1, 61, 0, 1, added, 30, -1) // added from outside at 30
	b.PacketBegin(1, 62, p, 1, added, 0, 0, false)
	b.PacketEnd(1, 70)
	b.Steal(2, 71, 0, 1, unstamped, 0, -5) // an origin no buffer has
	b.PacketBegin(2, 72, p, 1, unstamped, 0, 0, false)
	b.PacketEnd(2, 80)
	b.Steal(2, 81, 0, 1, lost, 40, 0) // its packet's begin is not in the snapshot
	ops, st := walk(b.Snapshot())
	require.Zero(t, st.Orphans)
	checkWellFormed(t, ops)

	queued := named(ops, timeline.NameQueued)
	require.Len(t, queued, 2, "one queued instant per stamped steal whose packet began")
	q0, q1 := queued[0], queued[1]
	assert.Equal(t, int64(20), q0.Time)
	assert.Equal(t, timeline.Track{Kind: timeline.TrackWorker, Index: 0}, q0.Track, "on the spawner's track")
	assert.Equal(t, 1, q0.Buffer, "on the thief's buffer")
	assert.Equal(t, uint64(spawned), q0.FlowOut)
	assert.Equal(t, int64(1), arg(t, q0, timeline.ArgThief).Int)
	assert.Equal(t, int64(0), arg(t, q0, timeline.ArgVictim).Int)
	assert.Equal(t, int64(30), q1.Time)
	assert.Equal(t, timeline.Track{Kind: timeline.TrackControl}, q1.Track, "an add's packet: the control track")
	assert.Equal(t, uint64(added), q1.FlowOut)

	steals := named(ops, timeline.NameSteal)
	require.Len(t, steals, 4)
	for _, s := range steals {
		assert.Zero(t, s.FlowOut, "the steal instant %+v starts no arrow (the victim has a track)", s)
		assert.Equal(t, int64(0), arg(t, s, timeline.ArgVictim).Int)
	}
	assert.Equal(t, int64(2), arg(t, steals[0], timeline.ArgMoved).Int)

	stolen := named(ops, timeline.NameStolen)
	require.Len(t, stolen, 1, "the unstamped steal's arrow starts on the victim")
	assert.Equal(t, timeline.Track{Kind: timeline.TrackWorker, Index: 0}, stolen[0].Track)
	assert.Equal(t, 2, stolen[0].Buffer)
	assert.Equal(t, int64(71), stolen[0].Time)
	assert.Equal(t, uint64(unstamped), stolen[0].FlowOut)
	assert.Equal(t, int64(2), arg(t, stolen[0], timeline.ArgThief).Int)

	begins := map[uint64]timeline.Op{}
	for _, op := range ops {
		if op.Kind == timeline.Begin && op.FlowIn != 0 {
			begins[op.FlowIn] = op
		}
	}
	require.Len(t, begins, 3, "arrows end at the stolen packets' begins")
	assert.Equal(t, 0, begins[spawned].QueuedFrom, "the spawned packet's queuing comes from its origin")
	assert.Equal(t, int64(20), begins[spawned].Queued)
	assert.Equal(t, trace.FromAdd, begins[added].QueuedFrom)
	assert.Equal(t, int64(30), begins[added].Queued)
	assert.Equal(t, trace.FromUnknown, begins[unstamped].QueuedFrom, "an origin from no buffer of the snapshot")
	for _, op := range ops {
		assert.NotEqual(t, uint64(lost), op.FlowOut, "an arrow to a packet not in the snapshot: %+v", op)
	}
}

// TestWalkAdd: an add is an instant on the control track naming how,
// which call, the stage (or the target worker), the packets, the stamp
// and the wake policy the call chose.
func TestWalkAdd(t *testing.T) {
	b := tracebuf.NewBuilder(2)
	b.Add(10, tracebuf.AddPriority, false, 3, 65, 0, 8)
	b.Add(20, tracebuf.AddDesignated, true, 1, 1, 2, 20)
	adds := named(func() []timeline.Op { ops, _ := walk(b.Snapshot()); return ops }(), timeline.NameAdd)
	require.Len(t, adds, 2)
	a := adds[0]
	assert.Equal(t, timeline.Instant, a.Kind)
	assert.Equal(t, timeline.Track{Kind: timeline.TrackControl}, a.Track)
	assert.Equal(t, "priority", arg(t, a, timeline.ArgHow).Str)
	assert.Equal(t, "AddAll", arg(t, a, timeline.ArgCall).Str)
	assert.Equal(t, int64(3), arg(t, a, timeline.ArgStage).Int)
	assert.Equal(t, uint64(65), arg(t, a, timeline.ArgPackets).Uint)
	assert.Equal(t, int64(8), arg(t, a, timeline.ArgBornNs).Int)
	for _, x := range a.Args {
		assert.NotEqual(t, timeline.ArgWake, x.Key, "the call chose no wake policy")
	}
	d := adds[1]
	assert.Equal(t, "designated", arg(t, d, timeline.ArgHow).Str)
	assert.Equal(t, "Add", arg(t, d, timeline.ArgCall).Str)
	assert.Equal(t, int64(1), arg(t, d, timeline.ArgTarget).Int)
	assert.Equal(t, "wake-all", arg(t, d, timeline.ArgWake).Str)
}

// TestWalkWakesAndCounters: wakes are instants on the worker's track;
// counter samples go on their counter's track, named by CounterName.
func TestWalkWakesAndCounters(t *testing.T) {
	b := tracebuf.NewBuilder(2)
	b.StageOpen(1, 1, b.Intern("Scan"))
	b.WakeSent(0, 2, 1)
	b.WakeReceived(1, 3, true)
	b.WakeReceived(1, 4, false)
	b.Counter(0, 5, tracebuf.CounterBucketDepth, 1, 42)
	b.Counter(1, 6, tracebuf.CounterBucketDepth, 1, -1)
	ops, _ := walk(b.Snapshot())
	wake := named(ops, timeline.NameWake)
	require.Len(t, wake, 1)
	assert.Equal(t, timeline.Track{Kind: timeline.TrackWorker, Index: 0}, wake[0].Track)
	assert.Equal(t, int64(1), arg(t, wake[0], timeline.ArgTarget).Int)
	woken := named(ops, timeline.NameWoken)
	require.Len(t, woken, 2)
	assert.Equal(t, int64(1), arg(t, woken[0], timeline.ArgBlocked).Int)
	assert.Equal(t, int64(0), arg(t, woken[1], timeline.ArgBlocked).Int)
	counters := named(ops, "bucket: Scan")
	require.Len(t, counters, 2)
	tr := timeline.Track{Kind: timeline.TrackCounter, Counter: trace.CounterBucketDepth, Index: 1}
	assert.Equal(t, timeline.Counter, counters[0].Kind)
	assert.Equal(t, tr, counters[0].Track)
	assert.Equal(t, tr, counters[1].Track, "one track per counter, whichever buffer sampled it")
	assert.Equal(t, int64(42), counters[0].Value)
	assert.Equal(t, int64(-1), counters[1].Value)
	assert.Equal(t, 1, counters[1].Buffer)
}

// TestWalkStopDrops: a buffer that stopped recording gets its open slices
// closed at the first drop and a "trace buffer full" instant there, which
// carries Dropped (the op that marks the loss), and a summary on the
// process track ends the walk.
func TestWalkStopDrops(t *testing.T) {
	b := tracebuf.NewBuilder(2)
	p := b.Intern("P")
	b.PacketBegin(0, 10, p, 1, 0, trace.FromAdd, 10, false)
	b.PacketBegin(1, 15, p, 1, 0, trace.FromAdd, 15, false)
	b.PacketEnd(1, 20)
	b.Park(0, 40) // after the drops: recorded once the buffer had room
	b.PacketBegin(1, 50, p, 1, 0, trace.FromAdd, 50, false)
	s := b.Snapshot()
	s.Buffers[0].Dropped, s.Buffers[0].DropStart, s.Buffers[0].DropEnd = 3, 25, 35
	s.End = 60
	ops, _ := walk(s)
	checkWellFormed(t, ops)

	full := named(ops, timeline.NameFull)
	require.Len(t, full, 1)
	assert.Equal(t, int64(25), full[0].Time)
	assert.Equal(t, timeline.Track{Kind: timeline.TrackWorker, Index: 0}, full[0].Track)
	assert.Equal(t, uint64(3), arg(t, full[0], timeline.ArgDropped).Uint)
	assert.Equal(t, uint64(35), arg(t, full[0], timeline.ArgDropUntil).Uint)
	var marked []timeline.Op
	for i, op := range ops {
		if op.Dropped {
			marked = append(marked, op)
		}
		if op.Name == timeline.NameFull {
			prev := ops[i-1]
			assert.Equal(t, timeline.End, prev.Kind, "the open packet is closed at the drop")
			assert.Equal(t, int64(25), prev.Time)
			assert.Equal(t, 0, prev.Buffer)
		}
	}
	require.Len(t, marked, 1, "one op carries the drop mark")
	assert.Equal(t, timeline.NameFull, marked[0].Name)
	assert.Equal(t, 0, marked[0].Buffer)

	last := ops[len(ops)-1]
	assert.Equal(t, timeline.NameDropped, last.Name)
	assert.Equal(t, timeline.Track{Kind: timeline.TrackProcess}, last.Track)
	assert.Equal(t, int64(60), last.Time)
	assert.Equal(t, uint64(3), arg(t, last, timeline.ArgDropped).Uint)
	assert.Equal(t, "stop", arg(t, last, timeline.ArgPolicy).Str)
	assert.Equal(t, uint64(3), arg(t, last, "worker 0").Uint)
}

// TestWalkOverwriteDrops: when an Overwrite recorder lost its oldest
// events, times count from the oldest event kept, the wrapped buffer's
// first op is preceded by a "trace buffer wrapped" instant, which carries
// Dropped, and the summary names the policy.
func TestWalkOverwriteDrops(t *testing.T) {
	b := tracebuf.NewBuilder(1)
	p := b.Intern("P")
	b.PacketEnd(0, 1000) // its begin was overwritten
	b.PacketBegin(0, 1010, p, 1, 0, trace.FromAdd, 900, false)
	b.PacketEnd(0, 1020)
	b.Add(1005, tracebuf.AddNormal, false, 1, 1, 0, 1005)
	s := b.Snapshot()
	s.Overwrite = true
	s.Buffers[0].Dropped = 7
	ops, st := walk(s)
	assert.Equal(t, 1, st.Orphans, "the end whose begin was overwritten")
	checkWellFormed(t, ops)

	wrapped := named(ops, timeline.NameWrapped)
	require.Len(t, wrapped, 1)
	assert.Zero(t, wrapped[0].Time, "times count from the oldest event kept")
	assert.Equal(t, uint64(7), arg(t, wrapped[0], timeline.ArgDropped).Uint)
	assert.True(t, wrapped[0].Dropped, "the wrap mark carries Dropped")
	assert.Equal(t, 0, wrapped[0].Buffer)
	add := named(ops, timeline.NameAdd)
	require.Len(t, add, 1)
	assert.Equal(t, int64(5), add[0].Time)
	assert.Equal(t, int64(5), arg(t, add[0], timeline.ArgBornNs).Int)
	var begin timeline.Op
	for _, op := range ops {
		if op.Kind == timeline.Begin && op.Slice == timeline.SlicePacket {
			begin = op
		}
	}
	assert.Equal(t, int64(10), begin.Time)
	assert.False(t, begin.Dropped, "only the wrap mark carries Dropped")
	assert.Equal(t, trace.FromUnknown, begin.QueuedFrom, "queued before the window")
	last := ops[len(ops)-1]
	assert.Equal(t, timeline.NameDropped, last.Name)
	assert.Equal(t, "overwrite", arg(t, last, timeline.ArgPolicy).Str)
	assert.Equal(t, int64(20), last.Time)
}

// TestWalkSyntheticRuns: on simulated runs, plain and with either drop
// policy, Walk's ops are in time order and properly nested, every packet
// slice is drawn, and every flow has both ends.
func TestWalkSyntheticRuns(t *testing.T) {
	for name, cfg := range map[string]synth.Config{
		"plain":     {Workers: 3, Cycles: 2, Seed: 1, Heavy: 30000},
		"stop":      {Workers: 2, Cycles: 3, Seed: 3, MaxBytes: 16 << 10},
		"overwrite": {Workers: 2, Cycles: 3, Seed: 4, MaxBytes: 16 << 10, Overwrite: true},
	} {
		t.Run(name, func(t *testing.T) {
			res := synth.Generate(cfg)
			ops, st := walk(res.Snapshot)
			checkWellFormed(t, ops)
			flows := map[uint64]int{}
			slices := 0
			for _, op := range ops {
				if op.FlowOut != 0 {
					flows[op.FlowOut]++
				}
				if op.FlowIn != 0 {
					flows[op.FlowIn] += 10
				}
				if op.Kind == timeline.Begin && op.Slice == timeline.SlicePacket {
					slices++
				}
			}
			for f, n := range flows {
				assert.Equal(t, 11, n, "flow %#x: want one source and one destination", f)
			}
			if res.Snapshot.Dropped() == 0 {
				assert.Equal(t, res.Packets, slices, "packet slices")
				assert.Zero(t, st.Orphans)
				assert.NotEmpty(t, flows, "steal arrows")
			} else {
				assert.NotZero(t, slices)
				assert.Len(t, named(ops, timeline.NameDropped), 1, "the drop summary")
			}
		})
	}
}
