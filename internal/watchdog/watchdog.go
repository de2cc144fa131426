// Package watchdog keeps wsched's concurrency tests from hanging: it runs
// the code under test on another goroutine and, if that has not returned in
// time, fails the test with every goroutine's stack instead of waiting for
// the test binary's global timeout. Test code only.
package watchdog

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// Watch runs f on another goroutine and fails t with every goroutine's
// stack if f has not returned within d. f must report failures with
// t.Error, not t.Fatal (it does not run on the test's goroutine).
func Watch(t testing.TB, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Logf("goroutines:\n%s", Stacks())
		t.Fatalf("watchdog: no progress after %v (stacks above)", d)
	}
}

// Within runs f like Watch and returns its value, failing t if f returns
// an error.
func Within[T any](t testing.TB, d time.Duration, f func() (T, error)) T {
	t.Helper()
	var v T
	var err error
	Watch(t, d, func() { v, err = f() })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Stacks returns the stacks of every goroutine.
func Stacks() []byte {
	buf := make([]byte, 8<<20)
	return buf[:runtime.Stack(buf, true)]
}

// Start arms a watchdog for the calling test and returns its stop
// function, for `defer watchdog.Start(t, d)()`: if stop has not been
// called after d, the test is marked failed and every goroutine's stack
// is written to stderr (the test's own goroutine may be the stuck one, so
// it cannot be stopped from here). stop waits for the watchdog goroutine.
func Start(t testing.TB, d time.Duration) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	fired := make(chan struct{})
	go func() {
		defer close(fired)
		select {
		case <-done:
		case <-time.After(d):
			fmt.Fprintf(os.Stderr, "watchdog: %s still running after %v\n%s", t.Name(), d, Stacks())
			t.Errorf("watchdog: timed out after %v (goroutine dump on stderr)", d)
		}
	}()
	return func() { close(done); <-fired }
}
