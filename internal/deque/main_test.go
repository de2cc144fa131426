package deque_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's run if a test leaves a goroutine behind:
// the stress and linearizability tests start owners and thieves, and
// their watchdogs stop them on a hang.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
