package tracebuf

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's run if a test leaves a goroutine behind
// (TestConcurrentWorkers and the watchdog start them).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
