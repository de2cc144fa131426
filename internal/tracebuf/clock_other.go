//go:build !amd64

package tracebuf

import "time"

// tscClock: cputicks is already nanoseconds.
const tscClock = false

var clockOrigin = time.Now()

// cputicks returns monotonic nanoseconds since package initialisation.
func cputicks() int64 { return int64(time.Since(clockOrigin)) }
