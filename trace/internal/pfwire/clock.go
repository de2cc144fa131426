package pfwire

import (
	"fmt"
	"slices"
	"sort"
)

// resolver is Decode's state across packets: each sequence's
// TracePacketDefaults and the clocks that ClockSnapshots declared. It does
// what Perfetto's trace processor does with them (proto_trace_reader.cc and
// clock_synchronizer.cc in google/perfetto), for the cases a reader of
// track events meets:
//
//  1. A packet with SEQ_INCREMENTAL_STATE_CLEARED drops its sequence's
//     defaults; a packet with trace_packet_defaults then sets them.
//  2. A packet with a ClockSnapshot declares clocks and is read for nothing
//     else: its own timestamp is not resolved. A snapshot is rejected
//     whole, as Perfetto rejects it, if it declares an incremental clock
//     that is not sequence-scoped (ids 64-127), a sequence-scoped clock on
//     no sequence, a clock twice, or a clock with another unit or
//     incrementality than before. Each reading of an incremental clock
//     sets where its deltas count from.
//  3. A timestamp is on timestamp_clock_id, else on the sequence's default
//     clock, else on the trace clock. The trace clock and BOOTTIME (6) are
//     the same clock (Perfetto takes BOOTTIME as the trace clock of a
//     protobuf trace whose snapshots do not say otherwise) and need no
//     conversion. Another clock is converted through the latest snapshot
//     that read it together with BOOTTIME at or before the time being
//     converted (the first such snapshot for earlier times); an
//     incremental clock's timestamp is first added to the clock's last
//     time. A clock with no such snapshot stays Unresolved and its deltas
//     do not accumulate (Perfetto converts nothing then either).
//
// Perfetto also converts through chains of snapshots (A to B to BOOTTIME)
// and can be told that the trace clock is another one
// (primary_trace_clock); a file that needs either is read here with
// Unresolved timestamps, which Check reports.
//
// Memory: one entry per sequence with defaults and per clock declared, one
// reading per clock per snapshot: bounded by the input's size.
type resolver struct {
	defaults map[uint32]Defaults
	clocks   map[clockKey]*clockDomain
	dup      map[clockKey]bool // scratch: clocks of the snapshot being read
}

// clockKey names a clock: a sequence-scoped clock (ids 64-127) is a
// different clock on every sequence.
type clockKey struct {
	id, seq uint32
}

func keyOf(id, seq uint32) clockKey {
	if id >= ClockSequenceFirst && id < ClockSequenceEnd {
		return clockKey{id, seq}
	}
	return clockKey{id: id}
}

// clockDomain is what the snapshots say about one clock.
type clockDomain struct {
	unit        int64 // ns per unit
	incremental bool
	last        int64 // incremental: the time, in ns, deltas count from
	// points are the clock's readings beside BOOTTIME's, one per snapshot
	// that read both, in file order; backwards marks a later reading of
	// either below an earlier one (the clock can no longer be converted,
	// as in Perfetto).
	points    []clockPoint
	backwards bool
}

type clockPoint struct{ ns, boot int64 }

func (r *resolver) resolve(p *Packet) {
	if p.Flags&SeqIncrementalStateCleared != 0 && p.Seq != 0 {
		delete(r.defaults, p.Seq)
	}
	if p.HasDefaults && p.Seq != 0 {
		if r.defaults == nil {
			r.defaults = make(map[uint32]Defaults)
		}
		d := p.Defaults // p's slices are reused by the next packet
		d.ExtraCounterTrackUUIDs = slices.Clone(d.ExtraCounterTrackUUIDs)
		r.defaults[p.Seq] = d
	}
	var def Defaults
	var hasDef bool
	if len(r.defaults) > 0 {
		def, hasDef = r.defaults[p.Seq]
	}
	if p.HasEvent && !p.Event.HasTrackUUID && hasDef && def.HasTrackUUID {
		e := &p.Event
		e.TrackUUID, e.HasTrackUUID, e.DefaultTrack = def.TrackUUID, true, true
	}
	if p.HasEvent && len(p.Event.ExtraCounterValues) > 0 && len(p.Event.ExtraCounterTrackUUIDs) == 0 && hasDef {
		e := &p.Event
		e.ExtraCounterTrackUUIDs = append(e.ExtraCounterTrackUUIDs, def.ExtraCounterTrackUUIDs...)
		e.DefaultExtraTracks = len(e.ExtraCounterTrackUUIDs) > 0
	}
	p.Timestamp = p.RawTimestamp
	if p.ClockSnapshot {
		p.ClockProblem = r.snapshot(p)
		return
	}
	switch {
	case p.HasClockID:
		p.Clock = p.ClockID
	case hasDef && def.HasClockID:
		p.Clock = def.ClockID
	}
	if !p.HasTimestamp || p.Clock == 0 || p.Clock == ClockBoottime {
		return
	}
	key := keyOf(p.Clock, p.Seq)
	dom := r.clocks[key]
	if (key.seq == 0 && p.Clock >= ClockSequenceFirst && p.Clock < ClockSequenceEnd) ||
		dom == nil || len(dom.points) == 0 || dom.backwards {
		p.Unresolved = true
		return
	}
	ns := int64(p.RawTimestamp) * dom.unit
	if dom.incremental {
		dom.last += ns
		ns = dom.last
		p.Delta = true
	}
	i := sort.Search(len(dom.points), func(i int) bool { return dom.points[i].ns > ns }) - 1
	pt := dom.points[max(i, 0)]
	p.Timestamp = uint64(ns - pt.ns + pt.boot)
}

// snapshot applies p's ClockSnapshot, or returns why Perfetto would reject
// it.
func (r *resolver) snapshot(p *Packet) string {
	if r.dup == nil {
		r.dup = make(map[clockKey]bool)
		r.clocks = make(map[clockKey]*clockDomain)
	}
	clear(r.dup)
	var boot int64
	hasBoot := false
	for _, c := range p.Clocks {
		seqScoped := c.ID >= ClockSequenceFirst && c.ID < ClockSequenceEnd
		switch {
		case seqScoped && p.Seq == 0:
			return fmt.Sprintf("sequence-scoped clock %d in a snapshot without trusted_packet_sequence_id", c.ID)
		case c.Incremental && !seqScoped:
			return fmt.Sprintf("clock %d is incremental but not sequence-scoped (ids 64-127)", c.ID)
		}
		key := keyOf(c.ID, p.Seq)
		if r.dup[key] {
			return fmt.Sprintf("clock %d read twice", c.ID)
		}
		r.dup[key] = true
		if d := r.clocks[key]; d != nil && (d.unit != unitOf(c) || d.incremental != c.Incremental) {
			return fmt.Sprintf("clock %d declared with unit %d ns, incremental %v; before: unit %d ns, incremental %v",
				c.ID, unitOf(c), c.Incremental, d.unit, d.incremental)
		}
		if c.ID == ClockBoottime {
			boot, hasBoot = int64(c.Timestamp)*unitOf(c), true
		}
	}
	problem := ""
	for _, c := range p.Clocks {
		key := keyOf(c.ID, p.Seq)
		d := r.clocks[key]
		if d == nil {
			d = &clockDomain{unit: unitOf(c), incremental: c.Incremental}
			r.clocks[key] = d
		}
		ns := int64(c.Timestamp) * d.unit
		d.last = ns
		if c.ID == ClockBoottime || !hasBoot {
			continue
		}
		if n := len(d.points); n > 0 && (ns < d.points[n-1].ns || boot < d.points[n-1].boot) {
			d.backwards = true
			problem = fmt.Sprintf("clock %d or BOOTTIME reads less than in an earlier snapshot", c.ID)
		}
		d.points = append(d.points, clockPoint{ns: ns, boot: boot})
	}
	return problem
}

func unitOf(c Clock) int64 {
	if c.Unit == 0 {
		return 1
	}
	return int64(c.Unit)
}
