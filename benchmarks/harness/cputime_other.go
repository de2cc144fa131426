//go:build !unix

package harness

import "time"

// ProcessCPU reports false: the platform does not say (no cpu-ns/op).
func ProcessCPU() (time.Duration, bool) { return 0, false }
