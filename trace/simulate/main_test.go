package simulate

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine running: the recordings
// here run the scheduler (scheduler.New starts its workers), and each test
// closes what it starts.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
