package tracebuf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPacketBeginQueued: a begin records where and when its packet was
// queued (or its steal's flow) in the one event, and the snapshot gives
// back the stamp in nanoseconds, rebuilt from its low StampBits bits.
func TestPacketBeginQueued(t *testing.T) {
	var now int64 = 1 << 44 // past 2^40: the stamp's cut bits matter
	r := NewRecorder(3, Options{Clock: func() int64 { now += 10; return now }})
	w := r.Worker(1)
	name := r.Intern("P")
	born := now - 500
	w.PacketBeginQueued(name, 7, 0, 2, born, false) // spawned on worker 2
	born2 := now - 30
	w.PacketBeginQueued(name, 2047, 0, -1, born2, true) // an add, priority lane
	w.PacketBeginQueued(name, 0, 0, -2, 0, false)       // designated
	w.PacketBeginQueued(name, 1, 9<<40, 0, now, false)  // stolen: the flow
	w.PacketBegin(name, 5000, 3)                        // not recorded
	ev := r.Snapshot().Buffers[1].Events
	require.Len(t, ev, 5)

	assert.Equal(t, 7, ev[0].Stage())
	assert.Equal(t, 2, ev[0].From())
	assert.True(t, ev[0].HasBorn())
	assert.Equal(t, born, ev[0].Born())
	assert.Zero(t, ev[0].Flow())
	assert.False(t, ev[0].Priority())

	assert.Equal(t, 2047, ev[1].Stage())
	assert.Equal(t, FromAdd, ev[1].From())
	assert.True(t, ev[1].Priority())
	assert.Equal(t, born2, ev[1].Born())

	assert.Equal(t, 0, ev[2].Stage())
	assert.Equal(t, FromNone, ev[2].From())

	assert.Equal(t, uint64(9<<40), ev[3].Flow())
	assert.False(t, ev[3].HasBorn())

	assert.Equal(t, 5000, ev[4].Stage(), "an old-style begin keeps its stage whole")
	assert.Equal(t, FromUnknown, ev[4].From())
	assert.False(t, ev[4].HasBorn())
	assert.Equal(t, uint64(3), ev[4].Flow())
}

// TestBornClampedToBegin: a stamp after its begin (another core's clock
// ahead) comes back as the begin's time.
func TestBornClampedToBegin(t *testing.T) {
	var now int64
	r := NewRecorder(1, Options{Clock: func() int64 { now += 10; return now }})
	w := r.Worker(0)
	w.PacketBeginQueued(1, 1, 0, 0, 1000, false)
	ev := r.Snapshot().Buffers[0].Events
	require.Len(t, ev, 1)
	assert.Equal(t, ev[0].Time, ev[0].Born())
}

func TestAddEvent(t *testing.T) {
	var now int64 = 1 << 41
	r := NewRecorder(2, Options{Clock: func() int64 { now += 10; return now }})
	c := r.Control()
	stamp := now - 100
	c.Add(AddPriority, false, 3, 65, 3, stamp&(1<<StampBits-1))
	c.Add(AddDesignated, true, 1, 1, 0, now)
	c.Add(AddNormal, false, 1, 1<<30, 0, now)
	ev := r.Snapshot().Control().Events
	require.Len(t, ev, 3)
	assert.Equal(t, KindAdd, ev[0].Kind())
	assert.Equal(t, AddPriority, ev[0].How())
	assert.Equal(t, 3, ev[0].Stage())
	assert.Equal(t, 65, ev[0].Packets())
	assert.Equal(t, uint8(3), ev[0].Wake())
	assert.Equal(t, stamp, ev[0].Born(), "a cut stamp is rebuilt")
	assert.False(t, ev[0].Single())
	assert.True(t, ev[1].Single())
	assert.Equal(t, AddDesignated, ev[1].How())
	assert.Equal(t, 1, ev[1].Target())
	assert.Equal(t, MaxAddPackets, ev[2].Packets(), "capped")
	for h := AddNormal; h < addHowCount; h++ {
		got, ok := ParseAddHow(h.String())
		assert.True(t, ok)
		assert.Equal(t, h, got)
	}
}

func TestConfig(t *testing.T) {
	r := NewRecorder(1, Options{})
	r.SetConfig("wake=wake-n")
	assert.Equal(t, "wake=wake-n", r.Snapshot().Config)
	var nilRec *Recorder
	nilRec.SetConfig("x") // no panic
}

// TestBuilderMatchesHooks: a builder's events read back as the hooks'.
func TestBuilderMatchesHooks(t *testing.T) {
	b := NewBuilder(2)
	n := b.Intern("P")
	assert.Equal(t, n, b.Intern("P"))
	b.CycleBegin(1, 1)
	b.StageOpen(2, 1, b.Intern("S"))
	b.Add(3, AddPriority, true, 1, 1, 3, 2)
	b.PacketBegin(0, 10, n, 1, 0, -1, 3, true)
	b.Steal(1, 11, 0, 2, 1<<40, 5, 0)
	b.PacketBegin(1, 12, n, 1, 1<<40, 0, 0, false)
	b.WakeSent(0, 13, 1)
	b.WakeReceived(1, 14, true)
	b.PacketEnd(0, 20)
	b.PacketEnd(1, 21)
	b.StageClose(22, 1)
	b.CycleEnd(23, 1)
	s := b.Snapshot()
	require.Equal(t, 2, s.Workers())
	assert.Equal(t, int64(23), s.End)
	w0, w1, c := s.Buffers[0].Events, s.Buffers[1].Events, s.Control().Events
	assert.Equal(t, -1, s.Control().Worker)
	assert.Equal(t, FromAdd, w0[0].From())
	assert.Equal(t, int64(3), w0[0].Born())
	assert.True(t, w0[0].Priority())
	assert.Equal(t, KindStealOrigin, w1[1].Kind())
	assert.Equal(t, int64(5), w1[1].Born())
	assert.Equal(t, uint64(1<<40), w1[2].Flow())
	assert.True(t, w1[3].Blocked())
	assert.Equal(t, AddPriority, c[2].How())
	assert.True(t, c[2].Single())
	assert.Equal(t, uint8(3), c[2].Wake())
	assert.Equal(t, "S", s.Name(c[1].Name()))
}
