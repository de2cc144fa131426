package bucket

import "runtime"

// spinYield is the wait step of Disable: an Add holds the gate for a few
// pushes only, so yielding the processor is enough.
func spinYield() { runtime.Gosched() }
