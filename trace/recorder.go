package trace

import "github.com/wsched/wsched/internal/tracebuf"

// DefaultMaxBytes is the default cap on the memory of all of a recorder's
// buffers together: 32 MiB holds about 1.4 million 24-byte events, some
// 700,000 packets, enough for seconds of a busy 8-worker scheduler and far
// below what the Perfetto UI can load (a 32 MiB recording exports to about
// 25 MiB of protobuf; the UI holds 2-4x the file size).
const DefaultMaxBytes = tracebuf.DefaultMaxBytes

// Options configure a Recorder. The zero value is valid.
type Options struct {
	// MaxBytes caps the memory of all buffers together; 0 means
	// DefaultMaxBytes. It is allocated up front; the control buffer gets
	// 1/16 of it and the worker buffers split the rest evenly.
	MaxBytes int
	// LazyPages leaves the buffers' pages untouched until events are
	// written to them, so that a recorder costs resident memory only for
	// what it records (when its memory comes fresh from the OS: heap
	// memory that the runtime reuses it zeroes, which makes it resident
	// anyway). By default NewRecorder touches every page of its
	// buffers first (it then holds MaxBytes of resident memory): a page
	// touched for the first time while recording costs a page fault in
	// the middle of the run, every 170 events or so, and the trace shows
	// those stalls as a worker's idle time. On the project's 2-vCPU VM
	// the tracing overhead of BenchmarkTraceOverhead/Interleaved
	// (scheduler package) was 7.1-7.6% with lazy pages and 3.7-4.4% with
	// touched ones (see the package documentation).
	LazyPages bool
	// Overwrite selects the policy when a buffer is full. false (default):
	// stop recording on that buffer and count what is dropped, so the
	// beginning of the run is kept. true: overwrite the oldest events, so
	// the end is kept (flight-recorder mode). Either way the drops are
	// counted and marked in every export.
	Overwrite bool
	// Clock, if not nil, replaces the CPU clock: it must return monotonic
	// nanoseconds since the recorder started, and be callable from every
	// worker goroutine. For deterministic tests and golden traces; it costs
	// an indirect call per event.
	Clock func() int64
}

// Recorder records what a scheduler does into one append-only buffer per
// worker plus one for the goroutine that runs cycles. Give it to exactly
// one scheduler (scheduler.Config.Tracer; the scheduler refuses a recorder
// that another one records into), with as many worker buffers as the
// scheduler has workers; then take a [Snapshot] and export it. A nil
// *Recorder is valid and records nothing: it is how tracing is off.
//
// Only the scheduler writes into a Recorder. Its type is the module's
// internal recorder, whose write methods (the hooks) are not part of this
// package's API; the scheduler reaches them by a type conversion that
// only code inside this module can write.
type Recorder tracebuf.Recorder

// NewRecorder returns a recorder for workers worker buffers and one control
// buffer. It panics if workers < 1 or opts.MaxBytes < 0.
func NewRecorder(workers int, opts Options) *Recorder {
	return (*Recorder)(tracebuf.NewRecorder(workers, tracebuf.Options(opts)))
}

// Snapshot copies out all events recorded so far, with times in
// nanoseconds since the recorder started. It must not run during a cycle
// (the workers record without locks): call it once the scheduler is
// closed, or after its Run returned. Between cycles the scheduler records
// only the adds of other goroutines, under a lock that Snapshot takes, so
// those may go on meanwhile. Recording may continue afterwards. Cost: O(events) time and a copy of the events
// (24 bytes each). A nil recorder returns nil.
func (r *Recorder) Snapshot() *Snapshot { return (*tracebuf.Recorder)(r).Snapshot() }

// Workers returns the number of worker buffers (0 for a nil recorder).
func (r *Recorder) Workers() int { return (*tracebuf.Recorder)(r).Workers() }

// Dropped returns the number of events lost so far over all buffers. Any
// goroutine, at any time. In Overwrite mode it counts whole overwritten
// laps only (a lower bound); Snapshot reports the exact figure.
func (r *Recorder) Dropped() uint64 { return (*tracebuf.Recorder)(r).Dropped() }
