package scheduler

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errItem = errors.New("permission denied")

// describedCalls counts String calls of the described packets.
var describedCalls atomic.Int64

// described is a value packet that describes itself and fails when bad.
type described struct {
	path string
	bad  bool
}

func (d described) String() string { describedCalls.Add(1); return d.path }

func (d described) Run(*Worker) error {
	if d.bad {
		return errItem
	}
	return nil
}

// describedPtr is a pointer packet that describes itself and panics.
type describedPtr struct{ path string }

func (d *describedPtr) String() string    { return d.path }
func (d *describedPtr) Run(*Worker) error { panic("broken " + d.path) }

// pathItem is a worklist item that describes itself.
type pathItem struct{ dir, name string }

func (p pathItem) String() string { return p.dir + "/" + p.name }

// TestCycleErrorNamesItem: a failing or panicking packet's CycleError
// carries its description (its String, or its value's), asked only on
// failure; so does a failing inline child and a worklist item (its
// String, or its value printed); a packet that is no Stringer has none.
func TestCycleErrorNamesItem(t *testing.T) {
	run := func(t *testing.T, p Packet) *CycleError {
		t.Helper()
		s := newSched(t, Config{Workers: 2})
		require.NoError(t, s.Add(p))
		var ce *CycleError
		require.ErrorAs(t, runCycle(t, s), &ce)
		return ce
	}
	t.Run("spawned value", func(t *testing.T) {
		ce := run(t, Func("walk", func(w *Worker) error {
			Spawn(w, described{"/src/a", false})
			Spawn(w, described{"/src/secret", true})
			return nil
		}))
		assert.Equal(t, "/src/secret", ce.Item)
		assert.Contains(t, ce.Error(), `packet scheduler.described "/src/secret" (stage main) failed`)
		assert.ErrorIs(t, ce, errItem)
	})
	t.Run("added value", func(t *testing.T) {
		assert.Equal(t, "/src/x", run(t, described{"/src/x", true}).Item)
	})
	t.Run("pointer panics", func(t *testing.T) {
		ce := run(t, &describedPtr{"/src/p"})
		assert.True(t, ce.Panicked)
		assert.Equal(t, "/src/p", ce.Item)
	})
	t.Run("inline child", func(t *testing.T) {
		ce := run(t, Func("walk", func(w *Worker) error {
			SpawnOrRun(w, described{"/src/inline", true})
			return nil
		}))
		assert.Equal(t, "/src/inline", ce.Item)
	})
	t.Run("no Stringer", func(t *testing.T) {
		ce := run(t, Func("plain", func(*Worker) error { return errItem }))
		assert.Empty(t, ce.Item)
		assert.NotContains(t, ce.Error(), `""`)
	})
	for _, how := range []string{"error", "panic"} {
		t.Run("worklist stringer "+how, func(t *testing.T) {
			s := newSched(t, Config{Workers: 2})
			wl, err := NewWorklist(s, "walk", func(w *Worker, it *pathItem, f *Feeder[pathItem]) error {
				if it.name == "secret" {
					if how == "panic" {
						panic("unreadable")
					}
					return errItem
				}
				if it.name == "" {
					for _, n := range []string{"a", "secret", "b"} {
						f.Add(pathItem{it.dir, n})
					}
				}
				return nil
			})
			require.NoError(t, err)
			require.NoError(t, wl.Add([]pathItem{{dir: "/src"}}))
			var ce *CycleError
			require.ErrorAs(t, runCycle(t, s), &ce)
			assert.Equal(t, "walk", ce.Packet)
			assert.Equal(t, "/src/secret", ce.Item)
			assert.Equal(t, how == "panic", ce.Panicked)
		})
	}
	t.Run("worklist value", func(t *testing.T) {
		s := newSched(t, Config{Workers: 1})
		wl, err := NewWorklist(s, "ids", func(w *Worker, it *uint32, f *Feeder[uint32]) error {
			if *it == 77 {
				return errItem
			}
			if *it < 100 {
				f.Add(*it + 1)
			}
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, wl.Add([]uint32{0}))
		var ce *CycleError
		require.ErrorAs(t, runCycle(t, s), &ce)
		assert.Equal(t, "77", ce.Item)
	})
	t.Run("long value cut", func(t *testing.T) {
		assert.Len(t, describeItem(make([]byte, 1000)), maxItemText+len("…"))
	})
}

// TestStringOnlyOnFailure: a cycle of Stringer value packets that all
// succeed never asks for a description.
func TestStringOnlyOnFailure(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	before := describedCalls.Load()
	require.NoError(t, s.Add(Func("fan", func(w *Worker) error {
		for i := range 10_000 {
			Spawn(w, described{fmt.Sprint(i), false})
		}
		return nil
	})))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, before, describedCalls.Load())
}

// TestDroppedCountInNumber: "1 queued packet", "2 queued packets".
func TestDroppedCountInNumber(t *testing.T) {
	assert.Contains(t, (&CycleError{Cycle: 1, Worker: -1, Err: ErrClosed, Dropped: 1}).Error(), "(1 packet dropped)")
	assert.Contains(t, (&CycleError{Cycle: 1, Worker: -1, Err: ErrClosed, Dropped: 2}).Error(), "(2 packets dropped)")
	assert.Contains(t, (&CycleError{Cycle: 1, Worker: 0, Packet: "p", StageName: "main", Err: errItem, Dropped: 1}).Error(), "cycle 1; 1 packet dropped")
}

// TestStageByName: Stage finds each stage's ID by its name, StageName
// goes back, and an unknown name is ErrInvalid listing the stages.
func TestStageByName(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"walk", "hash", "sum"}})
	for i, name := range []string{"Unconstrained", "walk", "hash", "sum"} {
		id, err := s.Stage(name)
		require.NoError(t, err, name)
		assert.Equal(t, StageID(i), id, name)
		assert.Equal(t, name, s.StageName(id))
	}
	_, err := s.Stage("Hash")
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, `no stage "Hash" (the stages: walk, hash, sum)`)
	assert.Empty(t, s.StageName(4))
	assert.Empty(t, s.StageName(-1))
	one := newSched(t, Config{Workers: 1})
	id, err := one.Stage("main")
	require.NoError(t, err)
	assert.Equal(t, StageID(1), id)
}
