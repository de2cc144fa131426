package wsfile

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wsched/wsched/trace/internal/origin"
	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/perfetto"
)

// MaxWorkers is the most workers a file may claim: the process track's
// "workers=N" above it is an error.
const MaxWorkers = 1 << 16

// Role is what a track descriptor says its track is.
type Role uint8

const (
	// RoleOther: a track of another producer, or one described before the
	// wsched process track.
	RoleOther Role = iota
	RoleProcess
	RoleControl
	RoleStages
	RoleWorker
	RoleCounter
	// RoleOrigins: the counter track that holds a worker's origins
	// (perfetto.Options.Origins).
	RoleOrigins
)

// Track is a track descriptor as wsched reads it.
type Track struct {
	Role Role
	// Worker is the worker a Worker or Origins track belongs to (0 ≤
	// Worker < Decls.Workers).
	Worker int
	// Counter is what follows perfetto.DescCounter in a Counter track's
	// description ("KIND:INDEX", parsed by the reader that draws it).
	Counter string
}

// Decls holds what the file has declared so far. The zero Decls is ready;
// call Packet for every packet, in file order.
type Decls struct {
	// Wsched: a wsched process track has been seen (at most one may be).
	Wsched bool
	// Workers is its "workers=N", 0 if it said none.
	Workers int

	seqs    map[uint32]*strs
	cur     *strs
	origins map[uint64]int // Origins tracks: uuid → the workers their codes count
}

// strs is one sequence's incremental state: its interned strings, each
// map made on first use, and its origins codec (org.Codes() == 0 until
// first use).
type strs struct {
	names, cats, annots map[uint64]string
	org                 origin.Codec
}

// Packet takes in p's interned strings (a sequence's are dropped when p
// clears its incremental state) and, when p describes a track, what the
// track is (ok reports that it does). p's names resolve through Name,
// Category and Annotation until the next call. An error says what in p
// cannot be a wsched file: a second process track, a bad worker count, a
// worker track beyond the count. Which packet, the caller adds.
func (d *Decls) Packet(p *pfwire.Packet) (t Track, ok bool, err error) {
	if d.seqs == nil {
		d.seqs = make(map[uint32]*strs)
	}
	st := d.seqs[p.Seq]
	if st == nil || p.Flags&1 != 0 { // SEQ_INCREMENTAL_STATE_CLEARED
		st = &strs{}
		d.seqs[p.Seq] = st
	}
	define(&st.names, p.Interned.Names)
	define(&st.cats, p.Interned.Categories)
	define(&st.annots, p.Interned.AnnotationNames)
	d.cur = st
	if !p.HasTrack {
		return Track{}, false, nil
	}
	t, err = d.track(&p.Track)
	return t, true, err
}

func (d *Decls) track(td *pfwire.TrackDesc) (Track, error) {
	desc := td.Description
	switch {
	case td.HasProcess && strings.HasPrefix(desc, perfetto.DescProcess):
		if d.Wsched {
			return Track{}, fmt.Errorf("two wsched process tracks")
		}
		d.Wsched = true
		if i := strings.Index(desc, "workers="); i >= 0 {
			f, _, _ := strings.Cut(desc[i+len("workers="):], " ")
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 || n > MaxWorkers {
				return Track{}, fmt.Errorf("bad worker count in %q", desc)
			}
			d.Workers = n
		}
		return Track{Role: RoleProcess}, nil
	case !d.Wsched:
		// Not ours (yet): a reader reports the events on it.
		return Track{}, nil
	case desc == perfetto.DescControl:
		return Track{Role: RoleControl}, nil
	case desc == perfetto.DescStages:
		return Track{Role: RoleStages}, nil
	case strings.HasPrefix(desc, perfetto.DescWorker):
		n, err := strconv.Atoi(strings.TrimPrefix(desc, perfetto.DescWorker))
		if err != nil || n < 0 || n >= d.Workers {
			return Track{}, fmt.Errorf("bad worker track %q (trace has %d workers)", desc, d.Workers)
		}
		return Track{Role: RoleWorker, Worker: n}, nil
	case strings.HasPrefix(desc, perfetto.DescCounter):
		return Track{Role: RoleCounter, Counter: strings.TrimPrefix(desc, perfetto.DescCounter)}, nil
	case strings.HasPrefix(desc, perfetto.DescOrigins):
		is, ns, _ := strings.Cut(strings.TrimPrefix(desc, perfetto.DescOrigins), "/")
		i, err1 := strconv.Atoi(is)
		n, err2 := strconv.Atoi(ns)
		if err1 != nil || err2 != nil || i < 0 || i >= n || n > MaxWorkers || !td.Counter {
			return Track{}, fmt.Errorf("bad origins track %q", desc)
		}
		if d.origins == nil {
			d.origins = make(map[uint64]int)
		}
		d.origins[td.UUID] = n
		return Track{Role: RoleOrigins, Worker: i}, nil
	}
	return Track{}, nil
}

// Origin reads how the packet of a packet slice was queued: the slice's
// BEGIN is the last packet's event, at time begin. The reader calls it
// for every packet slice BEGIN, in file order, whether or not the file
// has origins: each sequence's values are relative to its earlier slices
// (trace/internal/origin), and their codes count the workers the origins
// track's description says. ok is false for a slice without a valid value
// on an Origins track; code 4 + i is then a spawn on worker i, which the
// caller checks against the workers it has.
func (d *Decls) Origin(e *pfwire.TrackEvent, begin int64) (code uint64, stamp int64, ok bool) {
	if len(d.origins) == 0 || d.cur == nil {
		return 0, 0, false
	}
	org := &d.cur.org
	for i, u := range e.ExtraCounterTrackUUIDs {
		if n, ok := d.origins[u]; ok && i < len(e.ExtraCounterValues) {
			if org.Codes() != uint64(n)+origin.Worker0 {
				org.SetWorkers(n) // first use (or another track's: a file of no writer)
			}
			return org.Decode(uint64(e.ExtraCounterValues[i]), begin)
		}
	}
	org.Skip(begin)
	return 0, 0, false
}

// HasOrigins reports whether the file has described an Origins track.
func (d *Decls) HasOrigins() bool { return len(d.origins) > 0 }

// Name returns the event name interned as iid on the last packet's
// sequence.
func (d *Decls) Name(iid uint64) (string, bool) { return lookup(d.cur, iid, 0) }

// Category returns the category interned as iid on the last packet's
// sequence.
func (d *Decls) Category(iid uint64) (string, bool) { return lookup(d.cur, iid, 1) }

// Annotation returns the debug annotation name interned as iid on the last
// packet's sequence.
func (d *Decls) Annotation(iid uint64) (string, bool) { return lookup(d.cur, iid, 2) }

// Tracks maps the uuids of the tracks a file describes to a reader's
// state for each.
type Tracks[T any] map[uint64]*T

// Describe records t for the track uuid; a track described twice is an
// error.
func (ts Tracks[T]) Describe(uuid uint64, t *T) error {
	if _, dup := ts[uuid]; dup {
		return fmt.Errorf("track %d described twice", uuid)
	}
	ts[uuid] = t
	return nil
}

// Event returns the state of the track p's event is on and the event's
// time: an event on a track not described before it, or a time beyond
// int64, is an error.
func (ts Tracks[T]) Event(p *pfwire.Packet) (*T, int64, error) {
	t := ts[p.Event.TrackUUID]
	if t == nil {
		return nil, 0, fmt.Errorf("event on track %d before its descriptor", p.Event.TrackUUID)
	}
	if int64(p.Timestamp) < 0 {
		return nil, 0, fmt.Errorf("timestamp out of range")
	}
	return t, int64(p.Timestamp), nil
}

// EventName returns e's name, written inline or interned on the last
// packet's sequence; ok is false for an interned name the sequence has not
// defined.
func (d *Decls) EventName(e *pfwire.TrackEvent) (name string, ok bool) {
	if e.NameIID != 0 {
		return d.Name(e.NameIID)
	}
	return e.Name, true
}

// Arg returns e's debug annotation named key (inline or interned).
func (d *Decls) Arg(e *pfwire.TrackEvent, key string) (pfwire.Annotation, bool) {
	for _, a := range e.Annotations {
		k := a.Name
		if a.NameIID != 0 {
			k, _ = d.Annotation(a.NameIID)
		}
		if k == key {
			return a, true
		}
	}
	return pfwire.Annotation{}, false
}

// ArgInt returns e's integer annotation named key, signed or unsigned
// (one above math.MaxInt64 is not an int64: ok is false).
func (d *Decls) ArgInt(e *pfwire.TrackEvent, key string) (int64, bool) {
	a, ok := d.Arg(e, key)
	switch {
	case !ok:
		return 0, false
	case a.Kind == pfwire.AnnotInt:
		return a.Int, true
	case a.Kind == pfwire.AnnotUint:
		return int64(a.Uint), a.Uint <= math.MaxInt64
	}
	return 0, false
}

func lookup(st *strs, iid uint64, which int) (string, bool) {
	if st == nil {
		return "", false
	}
	m := [...]map[uint64]string{st.names, st.cats, st.annots}[which]
	s, ok := m[iid]
	return s, ok
}

// define records interned entries in set, making it on first use.
func define(set *map[uint64]string, entries []pfwire.InternedString) {
	if len(entries) == 0 {
		return
	}
	if *set == nil {
		*set = make(map[uint64]string)
	}
	for _, e := range entries {
		(*set)[e.IID] = e.Name
	}
}
