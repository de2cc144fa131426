package scheduler

import (
	"reflect"
	"sync"

	"github.com/wsched/wsched/trace"
)

// Packet is a unit of work. Run executes it on worker w; w is valid only
// until Run returns. A packet may spawn more packets (w.Spawn), add to any
// stage (w.Scheduler().Add) and add designated work.
type Packet interface {
	Run(w *Worker)
}

// Namer is implemented by packets that name themselves for stats and
// traces. Packets that do not are named by their Go type (reflect's
// Type.String, e.g. "*gc.ScanRoots"), derived once per type.
type Namer interface {
	PacketName() string
}

// StageID identifies a stage: 0 is Unconstrained, always open during a
// cycle; user stages are 1..n in Config.Stages order.
type StageID int

// Unconstrained is the stage whose bucket is open for the whole cycle.
const Unconstrained StageID = 0

// task is what the queues hold: a packet and the stage it belongs to.
// Packets spawned by a packet inherit its stage. While tracing, a task
// also carries where and when it was queued, so that a steal can draw its
// flow arrow from there (trace.WorkerBuf.StealStamped).
//
// All of that is packed into one word beside the packet, so a task stays
// 24 bytes, tracing or not: meta = stage | from<<12 | born<<24, born
// being the low 40 bits of the tracer's clock (trace.StampBits; 2^40 CPU
// ticks are several minutes, and the tracer rebuilds the full time from
// the steal's own clock reading). A 32-byte task with separate fields cost
// BulkAddFanout about 5 ns more per packet (+23-30% on its add path, +11%
// end to end, 2 vCPU KVM, interleaved A/B) with tracing off, as its
// Injector blocks hold a third more bytes.
type task struct {
	p    Packet
	meta uint64
}

// The fields of task.meta. from is fromNone when tracing is off or the
// packet was never queued, fromControl for an add from outside the
// workers (Scheduler.Add*, a sentinel), fromWorker0+i for Spawn on
// worker i; the trace buffer is from-fromWorker0 (-1 = control).
const (
	stageBits = 12
	fromBits  = 12
	bornShift = stageBits + fromBits

	fromNone    = 0
	fromControl = 1
	fromWorker0 = 2

	// maxStages bounds Config.Stages (StageIDs 1..maxStages).
	maxStages = 1<<stageBits - 1
	// maxWorkers bounds Config.Workers: fromWorker0+i must fit in
	// fromBits. Far beyond any machine this runs on, and low enough that
	// a typo (Workers: 1e9) fails instead of starting a billion goroutines.
	maxWorkers = 1<<fromBits - fromWorker0
)

// mkTask returns the unstamped task of p in stage st.
func mkTask(p Packet, st StageID) task { return task{p: p, meta: uint64(st)} }

// stage is the task's stage.
func (t *task) stage() StageID { return StageID(t.meta & (1<<stageBits - 1)) }

// stamp records that t was queued at born (a trace.WorkerBuf.Stamp value)
// by from.
func (t *task) stamp(born int64, from int32) {
	t.meta = t.meta&(1<<stageBits-1) | uint64(from)<<stageBits | uint64(born)<<bornShift
}

// born is the low 64-bornShift bits of the stamp (trace.StampBits).
func (t *task) born() int64 { return int64(t.meta >> bornShift) }

// origin is the trace buffer (a worker, -1 = control) whose clock stamped
// t, or -2 (below any buffer: no origin) if t was not stamped.
func (t *task) origin() int { return int(t.meta>>stageBits&(1<<fromBits-1)) - fromWorker0 }

// typeInfo is what the registry knows about one packet type. Immutable.
type typeInfo struct {
	namer bool // the type implements Namer: look the name up per packet
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
	types  sync.Map // reflect.Type → *typeInfo
	byName sync.Map // string → int (stats index)
	tracer *trace.Recorder

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
	r.names = append(r.names, nameEntry{name: name, id: r.tracer.Intern(name)})
	r.byName.Store(name, i)
	return i
}

// entry returns the name and trace ID of stats index i.
func (r *registry) entry(i int) nameEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.names[i]
}

// nameOf returns p's name (slow path: panics, errors).
func (r *registry) nameOf(p Packet) string {
	if p == nil {
		return "<nil>"
	}
	if n, ok := p.(Namer); ok {
		return n.PacketName()
	}
	return reflect.TypeOf(p).String()
}
