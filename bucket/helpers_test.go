package bucket

import (
	"sync"

	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/watchdog"
)

// watch: see watchdog.Watch.
var watch = watchdog.Watch

// A takeWay takes from b once, passing every packet it took to record,
// and reports whether it took any and, if not, whether the take met a
// race (retry: the bucket may hold packets still).
type takeWay func(b *Bucket[int], record func(int)) (took, retry bool)

// takePriorityFirst is TakePriority, then a Take of one if that found
// nothing.
func takePriorityFirst(b *Bucket[int], record func(int)) (bool, bool) {
	v, ok, retry := b.TakePriority()
	if ok {
		record(v)
		return true, false
	}
	var one [1]int
	n, retry2 := b.Take(one[:])
	if n == 1 {
		record(one[0])
	}
	return n == 1, retry || retry2
}

// takeOf is a Take into a slice of n.
func takeOf(n int) takeWay {
	return func(b *Bucket[int], record func(int)) (bool, bool) {
		buf := make([]int, n)
		k, retry := b.Take(buf)
		for _, v := range buf[:k] {
			record(v)
		}
		return k > 0, retry
	}
}

// consume starts one consumer goroutine per way, each taking from b until
// done is closed and a take finds b empty; the returned wait waits for
// them.
func consume(b *Bucket[int], ways []takeWay, record func(int), done <-chan struct{}) (wait func()) {
	var wg sync.WaitGroup
	for _, way := range ways {
		wg.Go(func() {
			for {
				if took, retry := way(b, record); !took && !retry {
					select {
					case <-done:
						return
					default:
					}
				}
			}
		})
	}
	return wg.Wait
}

// add queues vs on the normal lane (prio false) or the priority lane,
// failing the test on an error.
func add(t require.TestingT, b *Bucket[int], prio bool, vs ...int) int {
	n, err := b.Add(vs, prio)
	require.NoError(t, err, "Add(%v, %v)", vs, prio)
	return n
}
