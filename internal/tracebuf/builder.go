package tracebuf

import "fmt"

// Builder makes a Snapshot from events given with their times (in
// nanoseconds), for a simulated run (trace/simulate): no clock, no
// capacity, each buffer's events appended in the order given, which must
// be by time. The events are encoded as the hooks encode them; stamps are
// kept whole. Not safe for concurrent use.
type Builder struct {
	s   Snapshot
	ids map[string]NameID
}

// NewBuilder returns a builder for workers worker buffers and the
// control buffer. It panics if workers < 1.
func NewBuilder(workers int) *Builder {
	if workers < 1 {
		panic(fmt.Sprintf("tracebuf: NewBuilder with %d workers", workers))
	}
	b := &Builder{ids: make(map[string]NameID)}
	b.s.Names = []string{""}
	b.s.Buffers = make([]Buffer, workers+1)
	for i := range workers {
		b.s.Buffers[i].Worker = i
	}
	b.s.Buffers[workers].Worker = -1
	return b
}

// Intern returns the NameID of name.
func (b *Builder) Intern(name string) NameID {
	if id, ok := b.ids[name]; ok {
		return id
	}
	id := NameID(len(b.s.Names))
	b.s.Names = append(b.s.Names, name)
	b.ids[name] = id
	return id
}

// SetConfig sets the snapshot's Config.
func (b *Builder) SetConfig(config string) { b.s.Config = config }

func (b *Builder) put(buffer int, t int64, kindArg uint32, arg int32, val uint64) {
	i := len(b.s.Buffers) - 1
	if buffer >= 0 {
		i = buffer
	}
	bf := &b.s.Buffers[i]
	bf.Events = append(bf.Events, Event{Time: t, val: val, arg: arg, kindArg: kindArg})
	b.s.End = max(b.s.End, t)
}

// The events, as the hooks of the same names record them; buffer is a
// worker index or -1 for the control buffer.

func (b *Builder) CycleBegin(t int64, cycle uint64) {
	b.put(-1, t, uint32(KindCycleBegin), 0, cycle)
}
func (b *Builder) CycleEnd(t int64, cycle uint64) { b.put(-1, t, uint32(KindCycleEnd), 0, cycle) }
func (b *Builder) StageOpen(t int64, stage int, name NameID) {
	b.put(-1, t, makeKindArg(KindStageOpen, uint32(name)), int32(stage), 0)
}
func (b *Builder) StageClose(t int64, stage int) {
	b.put(-1, t, uint32(KindStageClose), int32(stage), 0)
}

// PacketBegin is PacketBeginQueued's event with a whole stamp (born in
// nanoseconds); from < FromNone records no queuing.
func (b *Builder) PacketBegin(buffer int, t int64, name NameID, stage int, flow uint64, from int, born int64, priority bool) {
	if from < FromNone {
		b.put(buffer, t, makeKindArg(KindPacketBegin, uint32(name)), int32(stage), flow)
		return
	}
	arg := uint32(stage)&beginStageMask | uint32(from+beginFromWorker)<<beginFromShift
	val := flow
	if flow == 0 {
		arg |= beginBornBit
		val = uint64(min(max(born, 0), t))
	}
	if priority {
		arg |= beginPrioBit
	}
	b.put(buffer, t, makeKindArg(KindPacketBegin, uint32(name)), int32(arg), val)
}
func (b *Builder) PacketEnd(buffer int, t int64) { b.put(buffer, t, uint32(KindPacketEnd), 0, 0) }

// Steal is StealStamped's pair of events (born in nanoseconds).
func (b *Builder) Steal(buffer int, t int64, victim, moved int, flow uint64, born int64, from int) {
	b.put(buffer, t, makeKindArg(KindSteal, uint32(victim)), int32(moved), flow)
	b.put(buffer, t, uint32(KindStealOrigin), int32(from), uint64(min(max(born, 0), t)))
}
func (b *Builder) Park(buffer int, t int64)   { b.put(buffer, t, uint32(KindPark), 0, 0) }
func (b *Builder) Unpark(buffer int, t int64) { b.put(buffer, t, uint32(KindUnpark), 0, 0) }
func (b *Builder) WakeSent(buffer int, t int64, target int) {
	b.put(buffer, t, uint32(KindWakeSent), int32(target), 0)
}
func (b *Builder) WakeReceived(buffer int, t int64, blocked bool) {
	var a int32
	if blocked {
		a = 1
	}
	b.put(buffer, t, uint32(KindWakeReceived), a, 0)
}

// Add is the add hook's event (stamp in nanoseconds).
func (b *Builder) Add(t int64, how AddHow, single bool, stage, packets int, wake uint8, stamp int64) {
	arg := uint32(how)&addHowMask | uint32(wake&0xF)<<addWakeShift | uint32(stage)<<addTargetShift
	if single {
		arg |= addSingleBit
	}
	b.put(-1, t, makeKindArg(KindAdd, uint32(min(max(packets, 0), MaxAddPackets))), int32(arg), uint64(min(max(stamp, 0), t)))
}
func (b *Builder) Counter(buffer int, t int64, kind CounterKind, index int, value int64) {
	b.put(buffer, t, makeKindArg(KindCounter, uint32(kind)), int32(index), uint64(value))
}

// Snapshot returns the snapshot built so far (sharing the builder's
// slices: build nothing more after it).
func (b *Builder) Snapshot() *Snapshot { return &b.s }
