package tracebuf

import "time"

// The hot-path clock.
//
// On amd64 events are stamped with the CPU's time-stamp counter (RDTSC,
// about 12 ns on the reference machine) rather than the monotonic clock
// (runtime nanotime through the vDSO, about 35 ns there, which alone would
// exceed the 25 ns/event budget). The TSC is invariant and synchronised
// across cores on every x86 CPU of the last decade (cpuinfo flags
// constant_tsc, nonstop_tsc); Go's own execution tracer relies on the same.
// Ticks are converted to nanoseconds when a Snapshot is taken, by the line
// through two (ticks, monotonic ns) pairs: one taken at NewRecorder and one at
// Snapshot. Per-buffer timestamps are then clamped to be non-decreasing, so
// a TSC that is slightly off between cores cannot reorder one worker's
// events.
//
// On other architectures cputicks is the monotonic clock itself (ns since
// an arbitrary origin) and the conversion is the identity.

// calibration maps raw ticks to ns since the recorder started.
type calibration struct {
	tick0 int64   // ticks at the start
	scale float64 // ns per tick
}

// startClock reads the clocks at recorder start.
func startClock() (time.Time, int64) {
	t0 := cputicks()
	start := time.Now()
	t1 := cputicks()
	return start, t0 + (t1-t0)/2
}

// calibrate returns the tick→ns map for a recorder started at (start, tick0).
func calibrate(start time.Time, tick0 int64) calibration {
	if !tscClock {
		return calibration{tick0: tick0, scale: 1}
	}
	t0 := cputicks()
	ns := time.Since(start)
	t1 := cputicks()
	dt := t0 + (t1-t0)/2 - tick0
	if dt <= 0 || ns <= 0 {
		return calibration{tick0: tick0, scale: 1}
	}
	return calibration{tick0: tick0, scale: float64(ns) / float64(dt)}
}

func (c calibration) ns(ticks int64) int64 {
	if c.scale == 1 {
		return ticks - c.tick0
	}
	return int64(float64(ticks-c.tick0) * c.scale)
}
