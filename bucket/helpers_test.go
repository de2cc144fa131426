package bucket

import (
	"sync"

	"github.com/wsched/wsched/internal/deque"
	"github.com/wsched/wsched/internal/watchdog"
)

// watch: see watchdog.Watch.
var watch = watchdog.Watch

// A takeWay takes from b once, passing every packet it took to record
// (local is the consumer's own deque, for TakeBatch), and returns the
// take's status.
type takeWay func(b *Bucket[int], local *deque.Deque[int], record func(int)) deque.Status

// takeOne is Take.
func takeOne(b *Bucket[int], _ *deque.Deque[int], record func(int)) deque.Status {
	v, st := b.Take()
	if st == deque.Success {
		record(v)
	}
	return st
}

// takePriorityFirst is TakePriority, then Take if that found nothing.
func takePriorityFirst(b *Bucket[int], local *deque.Deque[int], record func(int)) deque.Status {
	v, st := b.TakePriority()
	if st == deque.Success {
		record(v)
		return st
	}
	return takeOne(b, local, record)
}

// takeBatchOf is TakeBatch with limit n, and the pops of what it moved.
func takeBatchOf(n int) takeWay {
	return func(b *Bucket[int], local *deque.Deque[int], record func(int)) deque.Status {
		v, _, st := b.TakeBatch(local, n)
		if st == deque.Success {
			record(v)
		}
		for {
			x, ok := local.Pop()
			if !ok {
				return st
			}
			record(x)
		}
	}
}

// takeIntoOf is TakeInto a slice of n.
func takeIntoOf(n int) takeWay {
	buf := make([]int, n)
	return func(b *Bucket[int], _ *deque.Deque[int], record func(int)) deque.Status {
		k, st := b.TakeInto(buf)
		for _, v := range buf[:k] {
			record(v)
		}
		return st
	}
}

// consume starts one consumer goroutine per way, each taking from b until
// done is closed and a take finds b empty; the returned wait waits for
// them.
func consume(b *Bucket[int], ways []takeWay, record func(int), done <-chan struct{}) (wait func()) {
	var wg sync.WaitGroup
	for _, way := range ways {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := deque.New[int]()
			for {
				if way(b, local, record) == deque.Empty {
					select {
					case <-done:
						return
					default:
					}
				}
			}
		}()
	}
	return wg.Wait
}
