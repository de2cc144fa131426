package scheduler

import (
	"reflect"
	"unsafe"
)

// Per-type packet counts: the one-entry caches in front of the registry
// that make counting a run of one type a compare and an increment.

// countRun counts a run of the value packet type whose slot key is key,
// as countPacket counts a Packet, if it is the type counted last (a
// compare and an increment), and reports whether it did; countSlot or
// countValueSlow count it when not. Owner.
func (w *Worker) countRun(key unsafe.Pointer) bool {
	if key == w.lastType {
		w.lastRun++
		return true
	}
	return false
}

// countSlot counts a run of the value in a slot, at p, when countRun could
// not: as countValueSlow, but a Namer's name is asked through p, so that
// the value is not copied into an interface (which allocates for a value
// bigger than a pointer, once a run). Owner.
func countSlot[P Packet](w *Worker, p *P) {
	if ti := w.s.reg.valueType(slotKey[P](), reflect.TypeFor[P]()); ti.namer && !ti.iface {
		w.types[w.nameIndex(namerAt(p))].count++
		return
	}
	countValueSlow(w, *p)
}

// namerAt returns the PacketName of the Namer value at p, called through
// p (a value's methods are its pointer's too) or, for a P of pointer
// shape, whose methods *P lacks, through the value, which then fits an
// interface without a box.
func namerAt[P Packet](p *P) string {
	if n, ok := any(p).(Namer); ok {
		if name := n.PacketName(); name != "" {
			return name
		}
		return reflect.TypeFor[P]().String()
	}
	return namerName(any(*p).(Namer))
}

// countValueSlow counts a run of v when countRun could not (SpawnOrRun's
// inline run: v is its own copy). Owner.
func countValueSlow[P Packet](w *Worker, v P) {
	key := slotKey[P]()
	ti := w.s.reg.valueType(key, reflect.TypeFor[P]())
	switch {
	case ti.iface:
		w.countPacket(any(v).(Packet)) // an interface: its dynamic packet
	case ti.namer:
		w.types[w.nameIndex(inlineName(w, v))].count++
	default:
		w.foldRun()
		w.lastType, w.lastIdx = key, ti.idx
		w.growTypes(ti.idx)
		w.lastRun++
	}
}

// inlineName is the Namer name of v, a child SpawnOrRun runs inline. v
// lives in SpawnOrRun's frame: calling PacketName on it through an
// interface would move it to the heap, an allocation per run. So a value
// that is not pointer-shaped is copied into a slot of w's arena for P,
// named there and the slot consumed at once (about a spawn's slot cost,
// and only for Namer types). Owner.
func inlineName[P Packet](w *Worker, v P) string {
	a := slotArena[P](w)
	if a.direct {
		return valueName(v) // pointer-shaped: the interface holds v itself
	}
	s, c := a.get()
	s.v = v
	name := namerAt(&s.v)
	var zero P
	s.v = zero
	c.consumed(w)
	return name
}

// valueIndex is the stats index of value packet v. Owner, slow path.
func valueIndex[P Packet](w *Worker, v P) int {
	key := slotKey[P]()
	ti := w.s.reg.valueType(key, reflect.TypeFor[P]())
	switch {
	case ti.iface:
		return w.statIndex(any(v).(Packet))
	case ti.namer:
		return w.nameIndex(valueName(v))
	}
	w.growTypes(ti.idx)
	return ti.idx
}

// countPacket counts a run of p in its type's stats: for a run of packets
// of one (non-Namer) type, a compare and an increment of lastRun, folded
// into types[lastIdx] by foldRun. Owner.
func (w *Worker) countPacket(p Packet) {
	if typeWord(p) == w.lastType {
		w.lastRun++
		return
	}
	w.countPacketSlow(p)
}

func (w *Worker) countPacketSlow(p Packet) {
	idx := w.statIndex(p) // folds the old run if it moves lastType
	if typeWord(p) == w.lastType {
		w.lastRun++
		return
	}
	w.types[idx].count++ // a Namer: counted by name
}

// foldRun adds lastRun to its type's count. Owner; before anything reads
// the counts (flush) and before lastType changes (statIndexSlow).
func (w *Worker) foldRun() {
	if w.lastRun != 0 {
		w.types[w.lastIdx].count += w.lastRun
		w.lastRun = 0
	}
}

// statIndex returns the stats index of p's name. The one-entry caches make
// it a type comparison for runs of packets of one type.
func (w *Worker) statIndex(p Packet) int {
	tw := typeWord(p)
	if tw == w.lastType {
		return w.lastIdx
	}
	if tw == w.lastNamer {
		// A Namer type seen last time: its name may differ per packet,
		// but the last name is the likely one (no reflection, no map).
		if name := p.(Namer).PacketName(); w.hasName && name == w.lastName {
			return w.lastNIdx
		}
	}
	return w.statIndexSlow(p)
}

// typeWord returns the first word of p's interface value, its itab: one
// per (Packet, dynamic type) pair, so two Packets have equal type words
// exactly when their dynamic types are equal (TestTypeWord). One load and
// compare, where reflect.TypeOf(p) == last costs a load, a conversion and
// a call to compare two reflect.Type interfaces (about 2 ns per packet on
// the 2-vCPU EPYC).
func typeWord(p Packet) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&p))[0]
}

func (w *Worker) statIndexSlow(p Packet) int {
	ti := w.s.reg.typeOf(reflect.TypeOf(p), p)
	if ti.namer {
		w.lastNamer = typeWord(p)
		return w.nameIndex(namerName(p.(Namer)))
	}
	w.foldRun() // the pending run belongs to the old lastIdx
	w.lastType, w.lastIdx = typeWord(p), ti.idx
	w.growTypes(ti.idx)
	return ti.idx
}

// nameIndex returns the stats index of a packet named name, with a
// one-entry cache of the last name. Owner.
func (w *Worker) nameIndex(name string) int {
	if w.hasName && name == w.lastName {
		return w.lastNIdx
	}
	idx := w.s.reg.index(name)
	w.lastName, w.lastNIdx, w.hasName = name, idx, true
	w.growTypes(idx)
	return idx
}

// growTypes makes w.types cover stats index idx. Owner.
func (w *Worker) growTypes(idx int) {
	for len(w.types) <= idx {
		e := w.s.reg.entry(len(w.types))
		w.types = append(w.types, typeStat{name: e.name, nameID: e.id})
	}
}
