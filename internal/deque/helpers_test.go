package deque_test

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stress reports whether the heavy variants were asked for
// (WSCHED_STRESS=1): full item counts under -race, longer runs, more
// goroutines.
func stress() bool { return os.Getenv("WSCHED_STRESS") == "1" }

// items is the number of items an exactly-once run moves: 10^6, scaled
// to 2.5·10^5 under -race (see race_test.go) and to 2·10^5 under -short
// (enough for the owner's bursts of 1000+ to grow the buffer several
// times while thieves steal) unless WSCHED_STRESS=1.
func items() int {
	switch {
	case stress():
		return 1_000_000
	case testing.Short():
		return 200_000
	case raceEnabled:
		return 250_000
	}
	return 1_000_000
}

// starts are the initial indices every concurrent test runs from: zero,
// and just below the uint64 wrap-around, so that top and bottom cross it
// in the first few hundred items while thieves are active.
var starts = []uint64{0, ^uint64(0) - 100}

func startName(s uint64) string {
	if s == 0 {
		return "start=0"
	}
	return fmt.Sprintf("start=max-%d", ^uint64(0)-s)
}

func modeName(fifo bool) string {
	if fifo {
		return "fifo"
	}
	return "lifo"
}

// group runs the goroutines of one concurrent test. Every goroutine polls
// stopped() in its loops, so a test that fails its watchdog also ends its
// goroutines instead of leaving them to spin under later tests.
type group struct {
	wg   sync.WaitGroup
	stop atomic.Bool
}

func (g *group) Go(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}

func (g *group) stopped() bool { return g.stop.Load() }

// watchdogLimit is how long a concurrent test may run before it is
// declared hung. Normal runs take a few seconds; the margin covers a loaded
// 2-core machine under -race.
func watchdogLimit(t testing.TB) time.Duration {
	limit := 60 * time.Second
	if stress() {
		limit = 10 * time.Minute
	}
	if tt, ok := t.(*testing.T); ok {
		if dl, ok := tt.Deadline(); ok {
			// Leave time to print the dump before go test's own
			// timeout panics.
			if left := time.Until(dl) - 10*time.Second; left < limit {
				limit = max(left, time.Second)
			}
		}
	}
	return limit
}

// Wait waits for the group's goroutines. If they have not finished within
// the watchdog limit it stops them, prints every goroutine's stack and
// diag() (what was lost, how full the queues are), and fails the test.
func (g *group) Wait(t testing.TB, what string, diag func() string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	limit := watchdogLimit(t)
	select {
	case <-done:
		return
	case <-time.After(limit):
	}
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	g.stop.Store(true)
	var state string
	if diag != nil {
		state = diag()
	}
	// Give the goroutines a moment to see stop; a wedged one is in the
	// dump above.
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	require.FailNow(t, fmt.Sprintf("%s: no progress after %v (watchdog)", what, limit), "state: %s\ngoroutines:\n%s", state, buf)
}

// counter records how many times each item 0..n-1 was consumed.
type counter struct {
	seen  []atomic.Int32
	total atomic.Int64 // items consumed so far, all goroutines
}

func newCounter(n int) *counter { return &counter{seen: make([]atomic.Int32, n)} }

func (c *counter) add(v int) { c.seen[v].Add(1) }

// done reports whether every item has been consumed at least once (or
// duplicates made the total reach n, which check then reports).
func (c *counter) done() bool { return c.total.Load() >= int64(len(c.seen)) }

// missing summarises the items not yet seen exactly once.
func (c *counter) summary() string {
	var lost, dup []int
	for i := range c.seen {
		switch n := c.seen[i].Load(); {
		case n == 0:
			lost = append(lost, i)
		case n > 1:
			dup = append(dup, i)
		}
	}
	trim := func(s []int) string {
		if len(s) > 10 {
			return fmt.Sprintf("%v... (%d in all)", s[:10], len(s))
		}
		return fmt.Sprint(s)
	}
	return fmt.Sprintf("consumed %d of %d; unseen %s; duplicated %s",
		c.total.Load(), len(c.seen), trim(lost), trim(dup))
}

// check fails the test unless every item was consumed exactly once.
func (c *counter) check(t testing.TB) {
	t.Helper()
	for i := range c.seen {
		if n := c.seen[i].Load(); n != 1 {
			require.Equal(t, int32(1), n, "item %d consumed: %s", i, c.summary())
		}
	}
	require.Equal(t, int64(len(c.seen)), c.total.Load(), "total consumed")
}
