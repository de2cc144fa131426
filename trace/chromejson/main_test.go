package chromejson_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's run if a test or example leaves a
// goroutine behind (the example runs a scheduler, whose workers must end
// with its Close).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
