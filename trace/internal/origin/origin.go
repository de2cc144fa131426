// Package origin encodes how each packet slice's packet was queued, as
// perfetto.Options.Origins writes it and trace/simulate reads it: one
// varint a slice, on a counter track of the slice's worker (see "Origins"
// in trace/perfetto's doc). The writer and the reader keep one Codec per
// packet sequence, step it at every packet slice's begin in file order,
// and reset it when the sequence's incremental state is cleared, so both
// hold the same references.
//
// Where: a code, 1 designated, 2 an add, 3 an add taken from a priority
// lane, 4 + i a spawn on worker i. When: a stamp, at most the slice's
// begin, written as d = stamp − ref, ref the nearer of two earlier times
// both sides know: for b = 0 the stamp of the sequence's previous slice of
// the same code (the slice's own begin if there is none), for b = 1 the
// begin of the sequence's previous packet slice. A value is
//
//	4·zigzag(d) + 2b + 1                 the code of the sequence's previous slice with an origin
//	2·(code + m·(2·zigzag(d) + b))       any code; m = workers + 4
//
// Runs of one code are the rule (the packets of one add, a worker's own
// spawns), packets taken from one add carry stamps a few nanoseconds
// apart, and a child run right after its parent is stamped within it:
// about 2 bytes a slice on the demo's runs, where the time from queuing
// to the begin took 3 to 4.
package origin

import "math"

// Codes of where a packet was queued.
const (
	None     = 1 // designated: queued without a stamp
	Add      = 2
	Priority = 3 // an add taken from a priority lane
	Worker0  = 4 // 4 + i: a spawn on worker i
)

// Codec is one sequence's state. The zero Codec can Skip; it encodes and
// decodes once New or SetWorkers gave it the trace's workers.
type Codec struct {
	m         uint64
	last      map[uint64]int64 // code → the stamp of its previous slice
	prevBegin int64
	hasPrev   bool
	prevCode  uint64 // of the previous slice with an origin; 0 = none
}

// New returns a Codec for a trace of workers workers.
func New(workers int) Codec { return Codec{m: uint64(workers) + Worker0} }

// SetWorkers sets the trace's workers and keeps the references.
func (c *Codec) SetWorkers(workers int) { c.m = uint64(workers) + Worker0 }

// Codes is the number of codes a trace of this Codec's workers has, plus
// one: a valid code c has 1 ≤ c < Codes.
func (c *Codec) Codes() uint64 { return c.m }

// Reset forgets the references: the sequence's incremental state was
// cleared.
func (c *Codec) Reset() {
	clear(c.last)
	c.hasPrev, c.prevCode = false, 0
}

// Encode returns the value of a slice beginning at begin whose packet was
// queued at stamp (0 ≤ stamp ≤ begin) as code, and steps the Codec. ok is
// false if it cannot be written (a bad code or stamp, or a value beyond 64
// bits); the Codec is then stepped as by Skip.
func (c *Codec) Encode(code uint64, stamp, begin int64) (v uint64, ok bool) {
	if code == 0 || code >= c.m || stamp < 0 || stamp > begin {
		c.Skip(begin)
		return 0, false
	}
	ref, _ := c.ref(code, begin)
	v, ok = c.value(code, stamp-ref, 0)
	if c.hasPrev && c.prevBegin >= 0 { // both ≥ 0: the difference fits
		if w, ok1 := c.value(code, stamp-c.prevBegin, 1); ok1 && (!ok || w < v) {
			v, ok = w, true
		}
	}
	if !ok {
		c.Skip(begin)
		return 0, false
	}
	c.step(code, stamp, begin)
	return v, true
}

// Decode returns the code and stamp of value v on a slice beginning at
// begin, and steps the Codec. ok is false for a value no Encode returns
// for begin (the Codec is then stepped as by Skip).
func (c *Codec) Decode(v uint64, begin int64) (code uint64, stamp int64, ok bool) {
	var n uint64
	if v&1 == 1 {
		code, n = c.prevCode, v>>1
	} else {
		code, n = (v>>1)%c.m, (v>>1)/c.m
	}
	if code == 0 {
		c.Skip(begin)
		return 0, 0, false
	}
	var ref int64
	if n&1 == 0 {
		ref, _ = c.ref(code, begin)
	} else if c.hasPrev {
		ref = c.prevBegin
	} else {
		c.Skip(begin)
		return 0, 0, false
	}
	z := n >> 1
	d := int64(z>>1) ^ -int64(z&1) // zigzag
	stamp = ref + d
	if (d > 0 && stamp < ref) || (d < 0 && stamp > ref) || stamp < 0 || stamp > begin {
		c.Skip(begin)
		return 0, 0, false
	}
	c.step(code, stamp, begin)
	return code, stamp, true
}

// Skip steps the Codec past a packet slice that says nothing of its
// queuing.
func (c *Codec) Skip(begin int64) {
	c.prevBegin, c.hasPrev = begin, true
}

func (c *Codec) ref(code uint64, begin int64) (int64, bool) {
	if s, ok := c.last[code]; ok {
		return s, true
	}
	return begin, false
}

func (c *Codec) step(code uint64, stamp, begin int64) {
	if c.last == nil {
		c.last = make(map[uint64]int64)
	}
	c.last[code] = stamp
	c.prevCode = code
	c.Skip(begin)
}

// value is the value of code with d and b (see the package doc), ok false
// past 64 bits.
func (c *Codec) value(code uint64, d int64, b uint64) (uint64, bool) {
	z := uint64(d<<1) ^ uint64(d>>63)
	if z > (math.MaxUint64>>2)-1 {
		return 0, false
	}
	n := 2*z + b
	if code == c.prevCode {
		return 2*n + 1, true
	}
	if n > (math.MaxUint64>>1-code)/c.m {
		return 0, false
	}
	return 2 * (code + c.m*n), true
}
