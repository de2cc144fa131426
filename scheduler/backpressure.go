package scheduler

import (
	"context"
	"sync/atomic"
)

// Backpressure: the counts of queued packets that Config.MaxQueued
// bounds, one per stage, and the adds that wait for room (Block).
//
// Each stage's bucket is bounded on its own: a packet queued for a later
// stage (an aggregate, a sentinel's successor) cannot be taken until its
// stage opens, so counted against one bound for every stage it would fill
// the room an open stage's producer waits for, and a producer that holds
// the open stage (Hold) would wait for ever.

// queuedCount is one stage's count, on its own cache line.
type queuedCount struct {
	n atomic.Int64
	_ [56]byte
}

// admit counts k packets about to be queued in stage st against
// Config.MaxQueued: they are admitted, all or none, while the stage's
// bucket holds at most MaxQueued-k, so the bound holds for an AddAll too;
// otherwise ErrQueueFull, or with Block it waits for room until ctx is
// done, or until stop (a Hold's, closed when its cycle ends early) is
// closed: errHoldStopped. A call of more than MaxQueued packets could never
// be admitted: an error wrapping ErrInvalid.
func (s *sched) admit(st StageID, k int, block context.Context, stop <-chan struct{}) error {
	limit := int64(s.cfg.MaxQueued)
	if int64(k) > limit {
		return invalid("%d packets in one call, more than Config.MaxQueued (%d) lets queue at once: add them in smaller slices", k, limit)
	}
	room := limit - int64(k) // admitted while at most room are queued
	nq := &s.nQueued[st].n
	for {
		q := nq.Load()
		if q <= room {
			if nq.CompareAndSwap(q, q+int64(k)) {
				return nil
			}
			continue
		}
		if s.closed.Load() {
			return ErrClosed
		}
		if block == nil || s.onWorker() {
			return ErrQueueFull
		}
		s.roomMu.Lock()
		s.waiters.Add(1)
		ch := s.room
		s.roomMu.Unlock()
		if nq.Load() > room { // a take may have made room meanwhile
			select {
			case <-ch:
			case <-block.Done():
				s.waiters.Add(-1)
				return context.Cause(block)
			case <-stop:
				s.waiters.Add(-1)
				return errHoldStopped
			}
		}
		s.waiters.Add(-1)
	}
}

// unqueue records that k packets of stage st counted by admit left its
// queue (taken by a worker, dropped, or never queued), and wakes waiting
// adds if that made room. Any goroutine.
func (s *sched) unqueue(st int, k int) {
	if s.bounded {
		s.unqueueSlow(st, k)
	}
}

func (s *sched) unqueueSlow(st int, k int) {
	// Wake the waiting adds once there is room for one packet at least:
	// each looks at whether its own call fits now.
	if q := s.nQueued[st].n.Add(-int64(k)); s.waiters.Load() != 0 && q < int64(s.cfg.MaxQueued) {
		s.roomMu.Lock()
		close(s.room)
		s.room = make(chan struct{})
		s.roomMu.Unlock()
	}
}
