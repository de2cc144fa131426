package scheduler

import (
	"reflect"
	"unsafe"
)

// Value packets.
//
// Spawn[P] keeps the spawned value in a slot of an arena owned by the
// spawning worker, one arena per packet type, and queues a pointer to the
// slot: a *slot[P] is a Packet whose Run runs the value. So a small packet
// spawned by value costs a copy into memory the worker reuses, not a heap
// allocation.
//
// The slots come from arenas (arena.go).

// slot holds one value packet spawned by a worker.
type slot[P Packet] struct {
	v    P
	join *joinHdr // the join the packet belongs to, or nil
	c    *chunk[slot[P]]
}

// slotKey is the type word of *slot[P] as a Packet: one per P, so it keys
// P's arena and P's stats.
func slotKey[P Packet]() unsafe.Pointer { return typeWord(Packet((*slot[P])(nil))) }

// slotArena returns w's arena of P slots, making it on first use. Owner.
func slotArena[P Packet](w *Worker) *arena[slot[P]] {
	key := slotKey[P]()
	if a := w.lookupArena(key); a != nil {
		return (*arena[slot[P]])(a)
	}
	a := newArena[slot[P]](w)
	k := reflect.TypeFor[P]().Kind()
	a.direct = k == reflect.Pointer || k == reflect.Interface
	w.addArena(key, unsafe.Pointer(a), a)
	return a
}

// valuePacket is a *slot[P]: a value packet as its queues hold it.
type valuePacket interface {
	Packet
	valueName() string
	// describe is the value's String, if it is a fmt.Stringer.
	describe() string
	// statIndex is the stats index of the packet's value (instrumented
	// runs, which look it up before the packet runs).
	statIndex(w *Worker) int
}

// Run runs the slot's value as a packet of its own: it counts it in the
// stats (an instrumented run counts it in execInstrumented), enters its
// join, runs it and consumes the slot. A slot whose packet fails or panics
// is left as it is (the error names its value) and freed when the aborted
// cycle ends.
func (s *slot[P]) Run(w *Worker) error {
	v := s.v
	w.js = joinState{join: s.join, spawn: s.join}
	if !w.instrument && !w.countRun(slotKey[P]()) {
		countSlot(w, &s.v)
	}
	if err := v.Run(w); err != nil {
		return err
	}
	var zero P
	s.v, s.join = zero, nil
	s.c.consumed(w)
	return nil
}

func (s *slot[P]) valueName() string { return valueName(s.v) }

func (s *slot[P]) describe() string { return describeValue(s.v) }

func (s *slot[P]) statIndex(w *Worker) int {
	if ti := w.s.reg.valueType(slotKey[P](), reflect.TypeFor[P]()); ti.namer && !ti.iface {
		return w.nameIndex(namerAt(&s.v))
	}
	return valueIndex(w, s.v)
}

// valueName is the name of value packet v: its Namer name, its dynamic
// packet's name for an interface type, or its type. Slow path.
func valueName[P Packet](v P) string {
	if ti := reflect.TypeFor[P](); ti.Kind() == reflect.Interface {
		return nameOf(any(v).(Packet))
	}
	if n, ok := any(v).(Namer); ok {
		return namerName(n)
	}
	return reflect.TypeFor[P]().String()
}

// safeValueName is valueName, surviving a PacketName that panics too.
func safeValueName[P Packet](v P) (name string) {
	defer func() {
		if recover() != nil {
			name = reflect.TypeFor[P]().String()
		}
	}()
	return valueName(v)
}
