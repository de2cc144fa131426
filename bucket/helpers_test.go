package bucket

import (
	"runtime"
	"testing"
	"time"
)

// watch runs f and fails the test with every goroutine's stack if f has not
// returned within d, instead of hanging. f must report with t.Error.
func watch(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 8<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Logf("goroutines:\n%s", buf)
		t.Fatalf("watchdog: no progress after %v (stacks above)", d)
	}
}
