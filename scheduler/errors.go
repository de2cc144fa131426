package scheduler

import (
	"errors"
	"fmt"
	"reflect"
)

// Errors for conditions a caller can meet at run time.
var (
	// ErrClosed: the scheduler is closed (Add, AddAll, AddDesignated,
	// SetSentinel, Run), or Close ended the running cycle (Run's
	// *CycleError wraps it).
	ErrClosed = errors.New("scheduler: closed")
	// ErrCycleRunning: Run was called while another Run is in progress.
	ErrCycleRunning = errors.New("scheduler: a cycle is already running")
	// ErrQueueFull: Add or AddAll met Config.MaxQueued (without the Block
	// option, or from a packet, which must never wait), or a worker's
	// designated queue (64 packets) is full.
	ErrQueueFull = errors.New("scheduler: queue full")
	// ErrInvalid is wrapped by every error for a bad argument: a bad Config
	// (New), an unknown stage or worker, a nil packet, an option that does
	// not apply, a stage that already has a sentinel. The message names
	// what was wrong.
	ErrInvalid = errors.New("scheduler: invalid argument")
)

// CycleError is the error Run returns when its cycle ended early: a packet
// failed (returned an error or panicked), Run's context was cancelled, or
// the scheduler was closed. Every packet still queued was discarded and is
// counted in Dropped; the next Run starts clean.
//
// errors.Is and errors.As see through it to the cause: the packet's error
// (for a panic, the panic value when it is an error), or the context's
// cause (context.Cause) and its error, or ErrClosed.
type CycleError struct {
	Cycle uint64 // 1 for the first Run
	// Err is the packet's error, an error describing its panic, the
	// context's cause, or ErrClosed.
	Err error
	// Packet is the failing packet's name ("" when the cycle was ended
	// from outside, never otherwise): its Namer name, its Func name, or
	// its Go type (also for a Namer named "").
	Packet string
	// Item describes the failing packet, or the worklist item whose run
	// failed: its String method's result if it implements fmt.Stringer
	// (asked only then, never on success), else "".
	Item  string
	Stage StageID // the failing packet's stage
	// StageName is Stage's name.
	StageName string
	Worker    int    // the worker that ran the failing packet; -1 if none
	Panicked  bool   // the packet panicked (or called runtime.Goexit)
	Value     any    // the panic's value
	Stack     []byte // the panicking goroutine's stack, from the panic site
	Dropped   uint64 // packets the cycle did not run: queued, held by workers or spawned when it ended
	// ctxErr is ctx.Err() when Err is a cancelled context's cause that
	// differs from it, so that errors.Is(err, context.Canceled) holds.
	ctxErr error
}

// Error says what ended the cycle, whole: for a failing packet
//
//	scheduler: packet NAME "ITEM" (stage STAGE) failed on worker W: ERR (cycle C; N packets dropped)
//
// ("panicked" for a panic; the quoted Item only when there is one), and
// for a cycle ended from outside (a cancelled context, Close)
//
//	scheduler: cycle C aborted: ERR (N packets dropped)
//
// so a caller that wraps it need not repeat the packet or the item. N
// counts every packet the cycle did not run: queued in buckets, held by
// workers, spawned and not yet run.
func (e *CycleError) Error() string {
	if e.Worker < 0 || e.Packet == "" {
		return fmt.Sprintf("scheduler: cycle %d aborted: %v (%s dropped)", e.Cycle, e.Err, droppedPackets(e.Dropped))
	}
	verb := "failed"
	if e.Panicked {
		verb = "panicked"
	}
	item := ""
	if e.Item != "" {
		item = fmt.Sprintf(" %q", e.Item)
	}
	return fmt.Sprintf("scheduler: packet %s%s (stage %s) %s on worker %d: %v (cycle %d; %s dropped)",
		e.Packet, item, e.StageName, verb, e.Worker, e.Err, e.Cycle, droppedPackets(e.Dropped))
}

// droppedPackets is "1 packet" or "n packets".
func droppedPackets(n uint64) string {
	if n == 1 {
		return "1 packet"
	}
	return fmt.Sprintf("%d packets", n)
}

// describe is the Item of a failing packet p: its String, or its
// value's for a value packet, if it implements fmt.Stringer, else "".
// Surviving a String that panics. Slow path: failures only.
func describe(p Packet) (item string) {
	defer func() {
		if recover() != nil {
			item = ""
		}
	}()
	switch q := p.(type) {
	case valuePacket:
		return q.describe()
	case fmt.Stringer:
		return q.String()
	}
	return ""
}

// describeValue is describe for a value v of type P.
func describeValue[P any](v P) (item string) {
	defer func() {
		if recover() != nil {
			item = ""
		}
	}()
	if st, ok := any(v).(fmt.Stringer); ok {
		return st.String()
	}
	return ""
}

// Unwrap returns the cause, and the context's error if the cause is a
// distinct context cause.
func (e *CycleError) Unwrap() []error {
	if e.ctxErr != nil {
		return []error{e.Err, e.ctxErr}
	}
	return []error{e.Err}
}

// panicError is the Err of a CycleError for a panicking packet.
type panicError struct{ value any }

func (e panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

// Unwrap returns the panic value if it is an error.
func (e panicError) Unwrap() error {
	err, _ := e.value.(error)
	return err
}

// goexitValue is the Value of a CycleError for a packet that called
// runtime.Goexit.
const goexitValue = "runtime.Goexit called by the packet"

// invalid returns an error wrapping ErrInvalid.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// packetPanicked records the panic (or Goexit) of the packet named name,
// which w ran, and ends the cycle. Owner.
func (w *Worker) packetPanicked(name, item string, v any, stack []byte) {
	w.hot.panics++
	w.packetEnded(&CycleError{Packet: name, Item: item, Err: panicError{v}, Panicked: true, Value: v, Stack: stack})
}

// packetFailed records the error of the packet named name, which w ran,
// and ends the cycle. Owner.
func (w *Worker) packetFailed(name, item string, err error) {
	w.hot.failures++
	w.packetEnded(&CycleError{Packet: name, Item: item, Err: err})
}

// failedItem is the Item of p, the failing packet w ran: the worklist
// item a drain left in w.item, or p's description. Owner.
func (w *Worker) failedItem(p Packet) string {
	if it := w.item; it != "" {
		w.item = ""
		return it
	}
	return describe(p)
}

func (w *Worker) packetEnded(ce *CycleError) {
	s := w.s
	if w.inPacket {
		w.tb.PacketEnd()
		w.inPacket = false
	}
	ce.Stage = w.cur.stage()
	ce.StageName = s.stageNames[ce.Stage]
	ce.Worker = w.id
	s.mu.Lock()
	s.abortCycle(ce)
	s.mu.Unlock()
}

// safeName is nameOf, surviving a PacketName that panics too.
func safeName(p Packet) (name string) {
	defer func() {
		if recover() != nil {
			name = reflect.TypeOf(p).String()
		}
	}()
	return nameOf(p)
}
