package scheduler

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/bucket"
)

// hashJob is a value packet bigger than a pointer: AddAll of a []Packet
// would box each one.
type hashJob struct {
	path string
	size int64
	runs []atomic.Int32
	idx  int
}

func (j hashJob) Run(*Worker) error {
	j.runs[j.idx].Add(1)
	if j.size < 0 {
		return errItem
	}
	return nil
}

func (j hashJob) String() string { return j.path }

func hashJobs(n int, runs []atomic.Int32) []hashJob {
	js := make([]hashJob, n)
	for i := range js {
		js[i] = hashJob{path: fmt.Sprintf("/f/%d", i), size: int64(i), runs: runs, idx: i}
	}
	return js
}

// TestAddValues: every value AddValues queues runs exactly once, counted
// under its type's name, through the span of its copy, through the copy
// of tasks when Priority asks or every span slot is in use, and in a
// later stage; the caller's slice may change once AddValues returns.
func TestAddValues(t *testing.T) {
	for _, how := range []string{"span", "priority", "no span slot", "stage 2"} {
		t.Run(how, func(t *testing.T) {
			s := newSched(t, Config{Workers: 2, Stages: []string{"one", "two"}})
			const n = 3000
			runs := make([]atomic.Int32, n)
			js := hashJobs(n, runs)
			var opts []Option
			switch how {
			case "priority":
				opts = append(opts, Priority)
			case "stage 2":
				opts = append(opts, StageID(2))
			case "no span slot":
				for range bucket.MaxSpans { // fill every span slot of stage 1
					require.NoError(t, s.AddAll([]Packet{Func("filler", func(*Worker) error { return nil })}, Lend))
				}
			}
			require.NoError(t, AddValues(s, js, opts...))
			for i := range js {
				js[i].idx = 0 // the queued copy is AddValues' own
			}
			require.NoError(t, runCycle(t, s))
			i, r, bad := notOnce(runs)
			require.False(t, bad, "value %d ran %d times", i, r)
			var counted uint64
			for _, p := range s.Stats().Packets {
				if p.Name == "scheduler.hashJob" {
					counted = p.Count
				}
			}
			assert.Equal(t, uint64(n), counted, "runs counted under the value's type")
		})
	}
}

// TestAddValuesErrors: Lend does not apply; a failing value's CycleError
// names its type and item; pointer values are queued too; an empty slice
// is no add.
func TestAddValuesErrors(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	runs := make([]atomic.Int32, 3)
	assert.ErrorIs(t, AddValues(s, hashJobs(3, runs), Lend), ErrInvalid)
	assert.NoError(t, AddValues[hashJob](s, nil))
	js := hashJobs(3, runs)
	js[1].size = -1
	require.NoError(t, AddValues(s, js))
	var ce *CycleError
	require.ErrorAs(t, runCycle(t, s), &ce)
	assert.Equal(t, "scheduler.hashJob", ce.Packet)
	assert.Equal(t, "/f/1", ce.Item)

	var ran atomic.Int64
	ptrs := []*counter{{&ran}, {&ran}}
	require.NoError(t, AddValues(s, ptrs))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(2), ran.Load())
}

// TestAddValuesAllocations: queuing 1,000 values allocates their copy and
// its span, not an interface per value.
func TestAddValuesAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s := newSched(t, Config{Workers: 1})
	runs := make([]atomic.Int32, 1000)
	js := hashJobs(1000, runs)
	allocs := testing.AllocsPerRun(20, func() {
		if err := AddValues(s, js); err != nil {
			panic(err)
		}
		if err := s.Run(context.Background()); err != nil {
			panic(err)
		}
	})
	assert.LessOrEqual(t, allocs, 3.0)
}

// BenchmarkAddValues: queuing and running 4,096 value packets of 48
// bytes by AddValues, against AddAll of the same values as a []Packet
// (an interface, so a box, per value) in the same run; ns/packet covers
// the add and the run.
func BenchmarkAddValues(b *testing.B) {
	const n = 4096
	runs := make([]atomic.Int32, n)
	js := hashJobs(n, runs)
	for _, how := range []string{"AddValues", "AddAll"} {
		b.Run("add="+how, func(b *testing.B) {
			s, err := New(Config{Workers: 2})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			for b.Loop() {
				if how == "AddValues" {
					err = AddValues(s, js)
				} else {
					ps := make([]Packet, n)
					for i, j := range js {
						ps[i] = j
					}
					err = s.AddAll(ps)
				}
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/packet")
		})
	}
}
