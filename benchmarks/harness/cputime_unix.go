//go:build unix

package harness

import (
	"syscall"
	"time"
)

// ProcessCPU returns the process's user plus system CPU time so far, and
// whether the platform reports it.
func ProcessCPU() (time.Duration, bool) {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0, false
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano()), true
}
