package wsfile

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/perfetto"
)

func trackPacket(seq uint32, desc string, process bool) *pfwire.Packet {
	return &pfwire.Packet{Seq: seq, HasTrack: true, Track: pfwire.TrackDesc{Description: desc, HasProcess: process}}
}

// TestTracks: before the wsched process track nothing is wsched's; after
// it, each description names its role, and a worker beyond the count, a
// second process track or a bad count is an error.
func TestTracks(t *testing.T) {
	var d Decls
	tr, ok, err := d.Packet(trackPacket(1, perfetto.DescWorker+"0", false))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, RoleOther, tr.Role, "a worker track before the process track")
	assert.False(t, d.Wsched)

	_, ok, err = d.Packet(trackPacket(1, perfetto.DescProcess+" workers=3 more", true))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.True(t, d.Wsched)
	assert.Equal(t, 3, d.Workers)

	for desc, want := range map[string]Track{
		perfetto.DescControl:                {Role: RoleControl},
		perfetto.DescStages:                 {Role: RoleStages},
		perfetto.DescWorker + "2":           {Role: RoleWorker, Worker: 2},
		perfetto.DescCounter + "bucket:1":   {Role: RoleCounter, Counter: "bucket:1"},
		"a track of another producer":       {Role: RoleOther},
		perfetto.DescProcess + " workers=9": {Role: RoleOther}, // not a process track
	} {
		tr, _, err := d.Packet(trackPacket(1, desc, false))
		require.NoError(t, err, desc)
		assert.Equal(t, want, tr, desc)
	}
	_, _, err = d.Packet(trackPacket(1, perfetto.DescWorker+"3", false))
	assert.ErrorContains(t, err, "bad worker track")
	_, _, err = d.Packet(trackPacket(1, perfetto.DescProcess+" workers=2", true))
	assert.ErrorContains(t, err, "two wsched process tracks")

	for _, desc := range []string{"workers=0", "workers=x", "workers=65537"} {
		var d Decls
		_, _, err := d.Packet(trackPacket(1, perfetto.DescProcess+" "+desc, true))
		assert.ErrorContains(t, err, "bad worker count", desc)
	}
	var none Decls
	_, _, err = none.Packet(trackPacket(1, perfetto.DescProcess, true))
	require.NoError(t, err)
	assert.Zero(t, none.Workers, "a process track that gives no count")
}

// TestInterned: names resolve on the sequence of the last packet, and a
// sequence that clears its incremental state forgets its own.
func TestInterned(t *testing.T) {
	var d Decls
	p := &pfwire.Packet{Seq: 1, Interned: pfwire.Interned{
		Names:           []pfwire.InternedString{{IID: 1, Name: "packet"}},
		Categories:      []pfwire.InternedString{{IID: 1, Name: "Prepare"}},
		AnnotationNames: []pfwire.InternedString{{IID: 1, Name: "victim"}},
	}}
	_, ok, err := d.Packet(p)
	require.NoError(t, err)
	assert.False(t, ok, "no track in the packet")
	n, ok := d.Name(1)
	assert.True(t, ok)
	assert.Equal(t, "packet", n)
	c, _ := d.Category(1)
	assert.Equal(t, "Prepare", c)
	a, _ := d.Annotation(1)
	assert.Equal(t, "victim", a)

	_, _, err = d.Packet(&pfwire.Packet{Seq: 2})
	require.NoError(t, err)
	_, ok = d.Name(1)
	assert.False(t, ok, "another sequence's name")

	_, _, err = d.Packet(&pfwire.Packet{Seq: 1})
	require.NoError(t, err)
	_, ok = d.Name(1)
	assert.True(t, ok, "the first sequence's name, still defined")

	_, _, err = d.Packet(&pfwire.Packet{Seq: 1, Flags: 1})
	require.NoError(t, err)
	_, ok = d.Name(1)
	assert.False(t, ok, "cleared with the sequence's incremental state")
}

// TestEventNameAndArgs: an event's name and annotations resolve inline or
// through the sequence's interned strings; an unsigned value above
// math.MaxInt64 is not an int64.
func TestEventNameAndArgs(t *testing.T) {
	var d Decls
	_, _, err := d.Packet(&pfwire.Packet{Seq: 1, Interned: pfwire.Interned{
		Names:           []pfwire.InternedString{{IID: 7, Name: "steal"}},
		AnnotationNames: []pfwire.InternedString{{IID: 3, Name: "victim"}},
	}})
	require.NoError(t, err)
	e := &pfwire.TrackEvent{NameIID: 7, Annotations: []pfwire.Annotation{
		{NameIID: 3, Kind: pfwire.AnnotUint, Uint: 1},
		{Name: "moved", Kind: pfwire.AnnotInt, Int: -2},
		{Name: "huge", Kind: pfwire.AnnotUint, Uint: 1 << 63},
		{Name: "how", Kind: pfwire.AnnotString, String: "priority"},
	}}
	n, ok := d.EventName(e)
	assert.True(t, ok)
	assert.Equal(t, "steal", n)
	v, ok := d.ArgInt(e, "victim")
	assert.True(t, ok)
	assert.EqualValues(t, 1, v)
	v, ok = d.ArgInt(e, "moved")
	assert.True(t, ok)
	assert.EqualValues(t, -2, v)
	_, ok = d.ArgInt(e, "huge")
	assert.False(t, ok)
	_, ok = d.ArgInt(e, "how")
	assert.False(t, ok, "a string is not an int")
	a, ok := d.Arg(e, "how")
	assert.True(t, ok)
	assert.Equal(t, "priority", a.String)
	_, ok = d.Arg(e, "absent")
	assert.False(t, ok)

	n, ok = d.EventName(&pfwire.TrackEvent{Name: "inline"})
	assert.True(t, ok)
	assert.Equal(t, "inline", n)
	_, ok = d.EventName(&pfwire.TrackEvent{NameIID: 99})
	assert.False(t, ok, "an iid the sequence has not defined")
}

// TestTracksTable: a track is described once, and an event resolves to its
// track's state only after the description, at a time that fits int64.
func TestTracksTable(t *testing.T) {
	ts := Tracks[int]{}
	v := 7
	require.NoError(t, ts.Describe(3, &v))
	assert.ErrorContains(t, ts.Describe(3, &v), "track 3 described twice")
	got, at, err := ts.Event(&pfwire.Packet{Timestamp: 42, Event: pfwire.TrackEvent{TrackUUID: 3}})
	require.NoError(t, err)
	assert.Same(t, &v, got)
	assert.EqualValues(t, 42, at)
	_, _, err = ts.Event(&pfwire.Packet{Event: pfwire.TrackEvent{TrackUUID: 4}})
	assert.ErrorContains(t, err, "event on track 4 before its descriptor")
	_, _, err = ts.Event(&pfwire.Packet{Timestamp: 1 << 63, Event: pfwire.TrackEvent{TrackUUID: 3}})
	assert.ErrorContains(t, err, "timestamp out of range")
}

// TestOriginAfterSliceWithout: a packet slice that does not say how its
// packet was queued still moves its sequence's reference, so the next
// slice's origin, written against that slice's begin, reads back: worker
// 0 runs A (queuing unknown) and then B, spawned 10 ns into A.
func TestOriginAfterSliceWithout(t *testing.T) {
	b := tracebuf.NewBuilder(1)
	name := b.Intern("P")
	b.CycleBegin(100, 1)
	b.PacketBegin(0, 1000, name, 1, 0, tracebuf.FromUnknown, 0, false)
	b.PacketEnd(0, 2000)
	b.PacketBegin(0, 5000, name, 1, 0, 0, 1010, false)
	b.PacketEnd(0, 6000)
	b.CycleEnd(7000, 1)
	var buf bytes.Buffer
	_, err := perfetto.Write(&buf, b.Snapshot(), perfetto.Options{Origins: true})
	require.NoError(t, err)

	var d Decls
	type org struct {
		code  uint64
		stamp int64
		ok    bool
	}
	var got []org
	require.NoError(t, pfwire.Decode(buf.Bytes(), func(p *pfwire.Packet) error {
		_, _, err := d.Packet(p)
		require.NoError(t, err)
		if p.HasEvent && p.Event.Type == 1 && len(p.Event.CategoryIIDs) > 0 {
			c, s, ok := d.Origin(&p.Event, int64(p.Timestamp))
			got = append(got, org{c, s, ok})
		}
		return nil
	}))
	require.True(t, d.HasOrigins())
	assert.Equal(t, []org{{}, {perfetto.QueuedWorker0, 1010, true}}, got)
}
