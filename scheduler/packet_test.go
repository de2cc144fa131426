package scheduler

import (
	"reflect"
	"testing"
	"unsafe"
)

type (
	tw1 struct{}
	tw2 struct{ x int }
	tw3 struct{ a, b, c int }
	tw4 func(*Worker)
)

func (tw1) Run(*Worker)   {}
func (tw2) Run(*Worker)   {}
func (*tw3) Run(*Worker)  {}
func (f tw4) Run(*Worker) {}

// TestTypeWord: equal type words exactly when the dynamic types are equal,
// which the per-packet stats cache relies on.
func TestTypeWord(t *testing.T) {
	ps := []Packet{tw1{}, tw2{1}, tw2{2}, &tw3{}, &tw3{a: 1}, tw4(nil), tw4(func(*Worker) {}), fn(nil), counter{}}
	for _, a := range ps {
		for _, b := range ps {
			same := reflect.TypeOf(a) == reflect.TypeOf(b)
			if (typeWord(a) == typeWord(b)) != same {
				t.Errorf("%T vs %T: type words equal %v, types equal %v", a, b, !same, same)
			}
		}
	}
}

func TestTypeStatSize(t *testing.T) {
	if n := unsafe.Sizeof(typeStat{}); n != 64 {
		t.Fatalf("typeStat is %d bytes, want 64 (one cache line)", n)
	}
}
