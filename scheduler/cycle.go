package scheduler

import (
	"context"
	"runtime"
	rtrace "runtime/trace"
)

// Cycles from the caller's side: Run, a cycle's context, the abort, and
// Close. The stage transitions within a cycle are in stage.go.

// Run runs one cycle: it opens stage 1 (the Unconstrained bucket is open
// throughout), lets the workers drain the stages in order, and returns
// when the last stage is done and every worker is idle. Packets queued
// before Run take part.
//
// It returns nil, or a *CycleError if the cycle ended early: a packet
// failed or panicked (the error names it and wraps its error), ctx was
// cancelled (it wraps context.Cause(ctx) and ctx.Err()), or the scheduler
// was closed (it wraps ErrClosed). Either way the other workers stopped
// after their running packet, the remaining packets were discarded and
// counted, and the next Run starts clean. A ctx cancelled before Run runs
// no packet. ErrCycleRunning during another Run. After Close (or racing
// it and coming second) Run runs nothing: the first such Run waits for
// Close to drop what was queued and, if it dropped packets that no cycle
// reported, returns a *CycleError wrapping ErrClosed that counts them in
// Dropped; otherwise, and for every later Run, ErrClosed. So every packet
// queued either runs or is counted in one Run's error (and in
// Stats().Dropped), unless no Run comes after Close.
//
// The calling goroutine only waits (for the cycle's end or ctx); it runs
// no packets. Everything the cycle's packets wrote happens before Run
// returns: the caller reads their results (a Reducer's Result, a count a
// continuation added to) with plain loads.
func (h *Scheduler) Run(ctx context.Context) error {
	s := h.sched()
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return s.runClosed()
	}
	if s.running {
		s.mu.Unlock()
		return ErrCycleRunning
	}
	s.running = true
	s.runCtx = ctx
	var task *rtrace.Task
	if s.cfg.RuntimeTrace {
		s.traceCtx, task = rtrace.NewTask(ctx, "wsched.cycle")
	}
	s.beginCycle()
	if ctx.Err() != nil {
		// Cancelled already: end the cycle before any worker wakes, so no
		// packet runs (every worker is parked: abortCycle finishes it).
		s.abortCycle(ctxCause(ctx))
	} else {
		s.advance(nil)
	}
	s.mu.Unlock()

	select {
	case <-s.done:
	case <-ctx.Done():
		s.mu.Lock()
		s.abortCycle(ctxCause(ctx))
		s.mu.Unlock()
		<-s.done
	}

	s.mu.Lock()
	err := s.result
	s.result = nil
	s.running = false
	s.runCtx = nil
	s.mu.Unlock()
	if task != nil {
		task.End()
	}
	runtime.KeepAlive(h)
	return err
}

// runClosed is Run on a closed scheduler: it waits for Close to have
// dropped what was queued and reports those packets, which no cycle has
// reported, in a *CycleError wrapping ErrClosed; with none, or from a
// packet (which cannot wait for the workers), ErrClosed. Not holding mu.
func (s *sched) runClosed() error {
	if s.onWorker() {
		return ErrClosed
	}
	s.wg.Wait()
	s.closeOnce.Do(s.dropClosed)
	s.mu.Lock()
	n := s.unreported
	s.unreported = 0
	cycle := s.cycle + 1
	s.mu.Unlock()
	if n == 0 {
		return ErrClosed
	}
	return &CycleError{Cycle: cycle, Err: ErrClosed, Worker: -1, Dropped: n}
}

// ctxCause is the abort cause of a cancelled Run context.
func ctxCause(ctx context.Context) *CycleError {
	ce := &CycleError{Err: context.Cause(ctx), Worker: -1}
	if err := ctx.Err(); err != ce.Err {
		ce.ctxErr = err
	}
	return ce
}

// cycleContext returns the running cycle's context, making it on the first
// call of the cycle. A worker running a packet.
func (s *sched) cycleContext() context.Context {
	if c := s.cctx.Load(); c != nil {
		return c.ctx
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cctx.Load(); c != nil {
		return c.ctx
	}
	parent := s.runCtx
	if parent == nil {
		parent = context.Background()
	}
	// Run's values, but not its cancellation: when Run's context is done,
	// Run aborts the cycle first and the abort cancels this one, so a
	// packet that stops because its context is done is the last its
	// worker starts. (A child of Run's context would be done before the
	// abort, while workers go on starting queued packets.)
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	if s.cause != nil {
		cancel(s.cause)
	}
	s.cctx.Store(&cycleCtx{ctx, cancel})
	return ctx
}

// abortCycle starts ending the current cycle early with cause. Only the
// first cause counts. Caller holds mu.
func (s *sched) abortCycle(cause *CycleError) {
	if !s.cycleActive.Load() || s.cause != nil {
		return
	}
	s.cause = cause
	s.abort.Store(true) // workers stop between packets
	s.stopHolds()       // hold adds stop (hold.go, H1)
	if c := s.cctx.Load(); c != nil {
		c.cancel(cause)
	}
	if s.parked == s.n {
		// Every worker is parked in an active cycle: the state the wake
		// protocol (wake.go) never leaves outside advance. Should it ever
		// be reached, no worker would park again to finish the abort, so
		// finish it here: a cancelled Run and Close never hang (and a
		// test's watchdog can close the scheduler after its dump).
		s.finishAbort()
	}
}

// Close ends the scheduler: a running cycle is aborted (Run returns a
// *CycleError wrapping ErrClosed), the workers exit, and queued packets are
// discarded and counted in Stats().Dropped, and in the error of the next
// Run if no cycle reported them (see Run). It waits for the workers, is
// idempotent, and always returns nil. Called from one of the scheduler's
// own packets, it would wait for the worker it runs on: it panics instead
// (the cycle ends with a *CycleError naming the packet) and closes
// nothing.
func (h *Scheduler) Close() error {
	s := h.sched()
	if s.onWorker() {
		panic("scheduler: Close called from a packet of the scheduler it closes (it would wait for its own worker); close it after Run returns")
	}
	s.close()
	return nil
}

// close is Close, and the cleanup of an unreachable Scheduler.
func (s *sched) close() {
	s.mu.Lock()
	if !s.closed.Load() {
		s.closed.Store(true)
		if s.cycleActive.Load() {
			s.abortCycle(&CycleError{Err: ErrClosed, Worker: -1}) // the cycle's end releases the workers
		} else {
			s.releaseAll()
		}
		// Holds of the next cycle, which will not run (the running
		// cycle's end ends its own).
		kept := s.holds[:0]
		for _, hd := range s.holds {
			if hd.cycle == s.cycle && s.cycleActive.Load() {
				kept = append(kept, hd)
				continue
			}
			hd.end(ErrClosed)
		}
		clear(s.holds[len(kept):])
		s.holds = kept
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.closeOnce.Do(s.dropClosed)
}

// dropClosed discards what is still queued once the workers have exited
// (Close, once), counting it in Stats.Dropped and for the next Run to
// report (runClosed), and releases waiting adds.
func (s *sched) dropClosed() {
	var n uint64
	for st, b := range s.buckets {
		b.Disable() // adds racing with Close now fail or are drained below
		d := b.Drain(nil)
		s.unqueue(st, d)
		n += uint64(d)
		b.Reclaim() // the workers are gone: releases lent slices
		if _, ok := b.TakeSentinel(); ok {
			n++
		}
	}
	for _, w := range s.workers {
		n += w.drainDesignated()
	}
	s.mu.Lock()
	s.totals.dropped += n
	s.unreported += n
	s.mu.Unlock()
	s.roomMu.Lock()
	close(s.room) // waiting adds see closed
	s.room = make(chan struct{})
	s.roomMu.Unlock()
}
