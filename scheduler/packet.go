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
// also carries where and when it was queued (born, from), so that a steal
// can draw its flow arrow from there. That makes it 32 bytes instead of
// 24, tracing or not. Measured (2 vCPU KVM, interleaved A/B, 10 runs
// each): BenchmarkSpawnTrivial and ForkJoinTree show no difference outside
// the noise (±15-30% on that machine); BulkAddFanout's add path costs
// about 5 ns more per packet (17-21 → 22-27 ns, +23-30%; +11-15% per
// packet end to end), as its Injector blocks hold a third more bytes (25 →
// 38 B/op); a 32-byte task with a padding word instead of these fields
// costs the same, so it is the size, not the stamping.
type task struct {
	p Packet
	// born is the tracer's clock (trace.WorkerBuf.Stamp) when the packet
	// was spawned or added; 0 when tracing is off.
	born  int64
	stage int32 // StageID (< len(buckets), far below 2^31)
	// from says whose clock stamped born: fromControl (an add from outside
	// the workers: Scheduler.Add*, a sentinel) or fromWorker0+i (Spawn on
	// worker i); 0 when tracing is off or the packet was never queued.
	from int32
}

// task.from values; the trace buffer is from-fromWorker0 (-1 = control).
const (
	fromNone    = 0
	fromControl = 1
	fromWorker0 = 2
)

// origin is the trace buffer (a worker, -1 = control) whose clock stamped
// t.born, or -2 (below any buffer: no origin) if t was not stamped.
func (t *task) origin() int { return int(t.from) - fromWorker0 }

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
