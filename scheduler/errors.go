package scheduler

import (
	"errors"
	"fmt"
)

// Errors returned for conditions a caller can meet at run time.
var (
	// ErrClosed: the scheduler is closed (Add*, SetSentinel, Run), or a
	// cycle was ended by Close (wrapped in a *CycleError).
	ErrClosed = errors.New("scheduler: closed")
	// ErrCycleRunning: Run was called while another Run is in progress.
	ErrCycleRunning = errors.New("scheduler: a cycle is already running")
	// ErrUnknownStage: a StageID or stage name the scheduler does not have,
	// or a stage that cannot take the request (Unconstrained has no
	// sentinel).
	ErrUnknownStage = errors.New("scheduler: unknown stage")
	// ErrNilPacket: a nil Packet was passed (BulkAdd rejects the whole
	// slice).
	ErrNilPacket = errors.New("scheduler: nil packet")
	// ErrUnknownWorker: AddDesignated named a worker outside [0, Workers()).
	ErrUnknownWorker = errors.New("scheduler: unknown worker")
	// ErrDesignatedFull: the worker's designated queue is full.
	ErrDesignatedFull = errors.New("scheduler: designated queue full")
	// ErrSentinelSet: the stage already has a sentinel.
	ErrSentinelSet = errors.New("scheduler: stage already has a sentinel")
)

// PanicError is the error Run returns when a packet panicked. The first
// panic of a cycle ends it: the other workers stop after their current
// packet and every queued packet is discarded and counted in Dropped.
type PanicError struct {
	Packet  string  // the packet's name (Namer or Go type)
	Stage   StageID // the stage of the packet
	Worker  int     // the worker that ran it
	Value   any     // the value passed to panic
	Stack   []byte  // the panicking goroutine's stack, from the panic site
	Dropped uint64  // packets discarded when the cycle was aborted
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("scheduler: packet %s (stage %d) panicked on worker %d: %v (%d queued packets dropped)",
		e.Packet, e.Stage, e.Worker, e.Value, e.Dropped)
}

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// CycleError is the error Run returns when a cycle was aborted from outside:
// its context was cancelled (Err wraps ctx.Err()) or the scheduler was
// closed (Err is ErrClosed).
type CycleError struct {
	Cycle   uint64 // 1 for the first Run
	Err     error
	Dropped uint64 // packets discarded
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("scheduler: cycle %d aborted: %v (%d queued packets dropped)", e.Cycle, e.Err, e.Dropped)
}

// Unwrap returns the cause: ctx.Err() or ErrClosed.
func (e *CycleError) Unwrap() error { return e.Err }
