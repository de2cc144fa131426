package scheduler

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type (
	tw1 struct{}
	tw2 struct{ x int }
	tw3 struct{ a, b, c int }
	tw4 func(*Worker)
)

func (tw1) Run(*Worker) error   { return nil }
func (tw2) Run(*Worker) error   { return nil }
func (*tw3) Run(*Worker) error  { return nil }
func (f tw4) Run(*Worker) error { return nil }

// TestTypeWord: equal type words exactly when the dynamic types are equal,
// which the per-packet stats cache relies on.
func TestTypeWord(t *testing.T) {
	ps := []Packet{tw1{}, tw2{1}, tw2{2}, &tw3{}, &tw3{a: 1}, tw4(nil), tw4(func(*Worker) {}), fn(nil), counter{},
		Func("a", func(*Worker) error { return nil }), Func("b", func(*Worker) error { return nil })}
	for _, a := range ps {
		for _, b := range ps {
			same := reflect.TypeOf(a) == reflect.TypeOf(b)
			assert.Equal(t, same, typeWord(a) == typeWord(b), "%T vs %T: type words equal %v, types equal %v", a, b, !same, same)
		}
	}
}

// TestValueKeys: the arena and stats keys of value packets (the slot and
// frame type words) are one per packet type, distinct between types and
// from every plain Packet's type word, so that a worker's one-entry type
// cache never confuses a value packet with another packet.
func TestValueKeys(t *testing.T) {
	keys := map[unsafe.Pointer]string{}
	add := func(name string, k unsafe.Pointer) {
		t.Helper()
		require.NotNil(t, k, name)
		if prev, dup := keys[k]; dup {
			assert.Failf(t, "shared key", "%s and %s share a key", name, prev)
		}
		keys[k] = name
	}
	add("slot tw1", slotKey[tw1]())
	add("slot tw2", slotKey[tw2]())
	add("slot *tw3", slotKey[*tw3]())
	add("slot Packet", slotKey[Packet]())
	add("frame tw1", frameKey[tw1]())
	add("frame tw2", frameKey[tw2]())
	add("tw1", typeWord(tw1{}))
	add("tw2", typeWord(tw2{}))
	add("*tw3", typeWord(&tw3{}))
	assert.Equal(t, slotKey[tw1](), slotKey[tw1](), "one key per type")
	assert.Equal(t, frameKey[tw2](), frameKey[tw2](), "one key per type")
}

func TestTypeStatSize(t *testing.T) {
	require.Equal(t, uintptr(64), unsafe.Sizeof(typeStat{}), "typeStat size, want one cache line")
}

// TestFuncPacket: Func names its packet, runs its function, and refuses a
// nil function at once.
func TestFuncPacket(t *testing.T) {
	var ran bool
	p := Func("my packet", func(*Worker) error { ran = true; return nil })
	require.NoError(t, p.Run(nil))
	assert.True(t, ran)
	assert.Equal(t, "my packet", nameOf(p))
	assert.PanicsWithValue(t, "scheduler: Func(x, nil)", func() { Func("x", nil) })
}
