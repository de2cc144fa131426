package origin

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type slice struct {
	code         uint64
	stamp, begin int64
	skip         bool
}

// TestRoundTrip: what Encode writes, Decode reads back, slice for slice,
// over sequences that mix codes, slices without an origin and resets,
// including stamps far from every reference.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, workers := range []int{1, 2, 16, 4094} {
		enc, dec := New(workers), New(workers)
		var begin int64
		for i := range 20000 {
			begin += r.Int64N(5000)
			if i%1000 == 0 {
				begin += math.MaxInt32 * int64(r.IntN(3))
			}
			s := slice{code: 1 + r.Uint64N(enc.Codes()-1), begin: begin, skip: r.IntN(10) == 0}
			switch r.IntN(3) {
			case 0:
				s.stamp = begin
			case 1:
				s.stamp = begin - r.Int64N(min(begin, 100000)+1)
			default:
				s.stamp = r.Int64N(begin + 1)
			}
			if r.IntN(500) == 0 {
				enc.Reset()
				dec.Reset()
			}
			if s.skip {
				enc.Skip(s.begin)
				dec.Skip(s.begin)
				continue
			}
			v, ok := enc.Encode(s.code, s.stamp, s.begin)
			require.True(t, ok, "slice %d", i)
			code, stamp, ok := dec.Decode(v, s.begin)
			require.True(t, ok, "slice %d: value %d", i, v)
			require.Equal(t, s.code, code, "slice %d", i)
			require.Equal(t, s.stamp, stamp, "slice %d", i)
		}
	}
}

// TestSmall: the references make the common cases one or two bytes: the
// packets of one add taken one after another, and a child run right
// after its parent, which spawned it.
func TestSmall(t *testing.T) {
	c := New(2)
	_, ok := c.Encode(Add, 1000, 5000)
	require.True(t, ok)
	v, _ := c.Encode(Add, 1003, 9000) // the same add, 3 ns later
	assert.Less(t, v, uint64(128), "one byte")
	v, _ = c.Encode(Worker0, 9300, 12000) // spawned 300 ns into the previous slice
	assert.Less(t, v, uint64(1<<14), "two bytes")
	v, _ = c.Encode(Worker0, 13000, 15000) // the same code again, 1 µs into the previous slice
	assert.Less(t, v, uint64(1<<14), "two bytes")
	v, _ = c.Encode(Worker0, 15010, 16000) // and 10 ns into it
	assert.Less(t, v, uint64(128), "one byte")
}

// TestRejects: values a writer cannot have written are refused, and bad
// input to Encode writes nothing.
func TestRejects(t *testing.T) {
	c := New(2)
	_, ok := c.Encode(0, 1, 2)
	assert.False(t, ok, "code 0")
	_, ok = c.Encode(6, 1, 2)
	assert.False(t, ok, "code past the workers")
	_, ok = c.Encode(Add, 3, 2)
	assert.False(t, ok, "stamp after the begin")
	_, ok = c.Encode(Add, -1, 2)
	assert.False(t, ok, "negative stamp")

	for _, v := range []uint64{
		2 * 6,              // code 0
		2 * (Add + 6*1),    // b = 1 with no previous slice
		2 * (Add + 6*2*2),  // zigzag 2 = +1: after the begin
		1,                  // the previous slice's code, with none before
		math.MaxUint64 - 1, // far before 0
		math.MaxUint64,
	} {
		d := New(2)
		_, _, ok = d.Decode(v, 100)
		assert.False(t, ok, "value %d", v)
	}
}
