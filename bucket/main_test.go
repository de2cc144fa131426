package bucket

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's run if a test leaves a goroutine behind:
// the concurrent tests start producers and consumers.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
