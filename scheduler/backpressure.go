package scheduler

import "context"

// Backpressure: the count of queued packets that Config.MaxQueued
// bounds, and the adds that wait for room (Block).

// admit counts k packets about to be queued against Config.MaxQueued: they
// are admitted, all or none, while the queue holds at most MaxQueued-k,
// so the bound holds for an AddAll too; otherwise ErrQueueFull, or with
// Block it waits for room until ctx is done. A call of more than
// MaxQueued packets could never be admitted: an error wrapping
// ErrInvalid.
func (s *sched) admit(k int, block context.Context) error {
	limit := int64(s.cfg.MaxQueued)
	if int64(k) > limit {
		return invalid("%d packets in one call, more than Config.MaxQueued (%d) lets queue at once: add them in smaller slices", k, limit)
	}
	room := limit - int64(k) // admitted while at most room are queued
	for {
		q := s.nQueued.Load()
		if q <= room {
			if s.nQueued.CompareAndSwap(q, q+int64(k)) {
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
		if s.nQueued.Load() > room { // a take may have made room meanwhile
			select {
			case <-ch:
			case <-block.Done():
				s.waiters.Add(-1)
				return context.Cause(block)
			}
		}
		s.waiters.Add(-1)
	}
}

// unqueue records that k packets counted by admit left the queue (taken
// by a worker, dropped, or never queued), and wakes waiting adds if that
// made room. Any goroutine; only when s.bounded.
func (s *sched) unqueue(k int) {
	if s.bounded {
		s.unqueueSlow(k)
	}
}

func (s *sched) unqueueSlow(k int) {
	// Wake the waiting adds once there is room for one packet at least:
	// each looks at whether its own call fits now.
	if q := s.nQueued.Add(-int64(k)); s.waiters.Load() != 0 && q < int64(s.cfg.MaxQueued) {
		s.roomMu.Lock()
		close(s.room)
		s.room = make(chan struct{})
		s.roomMu.Unlock()
	}
}
