package perfetto

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's run if a test leaves a goroutine behind:
// the real-run tests start schedulers, whose workers must end with Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
