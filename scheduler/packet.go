package scheduler

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/trace"
)

// Packet is a unit of work. Run executes it on worker w; w is valid only
// until Run returns. A packet may spawn more packets (Spawn, SpawnOrRun),
// open a join (Join), and add to any stage (w.Scheduler().Add).
//
// Run returns nil, or an error that ends the cycle: the other workers stop
// after their running packet, nothing queued starts, and Run returns a
// *CycleError that wraps it and names the packet.
//
// A packet's type is its name in Stats and traces (reflect's Type.String,
// "*gc.ScanRoots"), unless it implements Namer. Any type may be a packet:
// a pointer, or a small struct spawned by value (Spawn keeps the value in
// the worker's queue memory, so spawning it allocates nothing).
type Packet interface {
	Run(w *Worker) error
}

// Namer is implemented by packets that name themselves for Stats, traces
// and errors; a PacketName of "" names the packet by its Go type, as if
// it were no Namer. Names should come from a small set: each distinct name gets
// a stats slot on every worker. Value packets may be Namers: naming one
// allocates nothing (a SpawnOrRun child run inline costs 54 ns against 25
// unnamed, BenchmarkSpawnOrRunNamerValue, one worker, 2-vCPU Xeon), but a
// PacketName that builds its string (fmt.Sprintf) allocates on every call.
// Config.LearnHeavy tells a Namer type's names apart: give long and short
// work of one Go type different names, or it is judged as a whole.
type Namer interface {
	PacketName() string
}

// Func returns a packet that runs fn and is named name in Stats, traces
// and errors: a plain function as a packet. Making it allocates once;
// spawning or adding it allocates nothing more. It panics for a nil fn or
// an empty name.
func Func(name string, fn func(w *Worker) error) Packet {
	if fn == nil {
		panic("scheduler: Func(" + name + ", nil)")
	}
	if name == "" {
		panic("scheduler: Func with an empty name (packets are named in Stats, traces and errors)")
	}
	return &funcPacket{name: name, fn: fn}
}

type funcPacket struct {
	name string
	fn   func(w *Worker) error
}

func (f *funcPacket) Run(w *Worker) error { return f.fn(w) }
func (f *funcPacket) PacketName() string  { return f.name }

// StageID identifies a stage: 0 is Unconstrained, open throughout every
// cycle; Config.Stages[i] is StageID i+1. A StageID is an Option of Add,
// AddAll and SetSentinel: the stage to queue into (stage 1 by default).
type StageID int

// Unconstrained is the stage whose bucket is open for the whole cycle.
const Unconstrained StageID = 0

// task is what the queues hold: a packet and the stage it belongs to.
// Packets spawned by a packet inherit its stage. While tracing, a task
// also carries where and when it was queued, so that a steal can draw its
// flow arrow from there (tracebuf's Buf.StealStamped).
//
// All of that is packed into one word beside the packet, so a task stays
// 24 bytes, tracing or not: meta = stage | slot<<11 | from<<12 | born<<24,
// born being the low 40 bits of the tracer's clock (2^40 CPU ticks are
// several minutes, and the tracer rebuilds the full time from the steal's
// own clock reading). slot marks a value packet (a *slot[P]), which counts
// itself in the stats. A 32-byte task with separate fields cost
// BulkAddFanout about 5 ns more per packet (+11% end to end, 2 vCPU KVM,
// interleaved A/B) with tracing off, as its Injector blocks hold a third
// more bytes.
type task struct {
	p    Packet
	meta uint64
}

// The fields of task.meta. from is fromNone when tracing is off or the
// packet was never queued, fromControl for an add from outside the
// workers (Add, AddAll, a sentinel), fromWorker0+i for a spawn on worker
// i; the trace buffer is from-fromWorker0 (-1 = control).
const (
	stageBits = 11
	slotBit   = 1 << stageBits
	fromShift = stageBits + 1
	fromBits  = 12
	bornShift = fromShift + fromBits
	stageMask = 1<<stageBits - 1

	fromNone    = 0
	fromControl = 1
	fromWorker0 = 2

	// maxStages bounds Config.Stages (StageIDs 1..maxStages).
	maxStages = policy.MaxStage
	// maxWorkers bounds Config.Workers: fromWorker0+i must fit in
	// fromBits. Far beyond any machine this runs on, and low enough that
	// a typo (Workers: 1e9) fails instead of starting a billion goroutines.
	maxWorkers = policy.MaxWorkers
)

// The shared bounds fit the task word exactly (a constant conversion of
// a negative number to uint does not compile).
const (
	_ = uint(stageMask-maxStages) + uint(maxStages-stageMask)
	_ = uint(1<<fromBits-fromWorker0-maxWorkers) + uint(maxWorkers-(1<<fromBits-fromWorker0))
)

// mkTask returns the unstamped task of p in stage st.
func mkTask(p Packet, st StageID) task { return task{p: p, meta: uint64(st)} }

// stage is the task's stage.
func (t *task) stage() StageID { return StageID(t.meta & stageMask) }

// stamp records that t was queued at born (a trace stamp) by from.
func (t *task) stamp(born int64, from int32) {
	t.meta = t.meta&(1<<fromShift-1) | uint64(from)<<fromShift | uint64(born)<<bornShift
}

// born is the low 64-bornShift bits of the stamp.
func (t *task) born() int64 { return int64(t.meta >> bornShift) }

// origin is the trace buffer (a worker, -1 = control) whose clock stamped
// t, or -2 (below any buffer: no origin) if t was not stamped.
func (t *task) origin() int { return int(t.meta>>fromShift&(1<<fromBits-1)) - fromWorker0 }

// typeInfo is what the registry knows about one packet type. Immutable.
type typeInfo struct {
	namer bool // look the name up per packet (Namer, or a value packet of an interface type)
	iface bool // a value packet of an interface type: count its dynamic packet
	idx   int  // stats index of the type's name, when !namer
}

// nameEntry is one stats name: the packet name and its trace NameID.
type nameEntry struct {
	name string
	id   trace.NameID
}

// registry assigns each packet name a dense stats index, and caches the
// name of each Go type, so that the per-packet path needs neither
// reflection beyond reflect.TypeOf nor hashing: workers keep a one-entry
// cache in front of it (Worker.statIndex).
//
// Callers: any worker, on its slow path (first packet of a type it has not
// seen last); Stats.
type registry struct {
	types  sync.Map // reflect.Type or a value packet's slot type word → *typeInfo
	byName sync.Map // string → int (stats index)
	intern func(string) trace.NameID

	mu    sync.Mutex
	names []nameEntry // guarded by mu; append-only, index = stats index
}

// typeOf returns the info of p's dynamic type t, computing it once per type.
func (r *registry) typeOf(t reflect.Type, p Packet) *typeInfo {
	if v, ok := r.types.Load(t); ok {
		return v.(*typeInfo)
	}
	_, namer := p.(Namer)
	ti := &typeInfo{namer: namer}
	if !namer {
		ti.idx = r.index(t.String())
	}
	v, _ := r.types.LoadOrStore(t, ti)
	return v.(*typeInfo)
}

// valueType returns the info of value packets of type elem, whose slot
// type word is key, computing it once per type.
func (r *registry) valueType(key unsafe.Pointer, elem reflect.Type) *typeInfo {
	if v, ok := r.types.Load(key); ok {
		return v.(*typeInfo)
	}
	ti := &typeInfo{}
	switch {
	case elem.Kind() == reflect.Interface:
		ti.namer, ti.iface = true, true
	case elem.Implements(namerType):
		ti.namer = true
	default:
		ti.idx = r.index(elem.String())
	}
	v, _ := r.types.LoadOrStore(key, ti)
	return v.(*typeInfo)
}

var namerType = reflect.TypeFor[Namer]()

// index returns the stats index of name, assigning the next one on first
// use (and interning the name in the tracer).
func (r *registry) index(name string) int {
	if v, ok := r.byName.Load(name); ok {
		return v.(int)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.byName.Load(name); ok {
		return v.(int)
	}
	i := len(r.names)
	r.names = append(r.names, nameEntry{name: name, id: r.intern(name)})
	r.byName.Store(name, i)
	return i
}

// entry returns the name and trace ID of stats index i.
func (r *registry) entry(i int) nameEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.names[i]
}

// nameOf returns p's name (slow path: panics, errors). A value packet's
// slot names its value.
func nameOf(p Packet) string {
	switch q := p.(type) {
	case nil:
		return "<nil>"
	case valuePacket:
		return q.valueName()
	case Namer:
		return namerName(q)
	}
	return reflect.TypeOf(p).String()
}

// namerName is n's PacketName, or its Go type when that is "": a packet
// is never named "", which errors keep for a cycle ended from outside.
func namerName(n Namer) string {
	if name := n.PacketName(); name != "" {
		return name
	}
	return reflect.TypeOf(n).String()
}
