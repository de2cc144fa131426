package tracebuf

// tscClock: cputicks reads the time-stamp counter, which needs calibration.
const tscClock = true

// cputicks returns the CPU time-stamp counter (RDTSC). Implemented in
// clock_amd64.s; not serialising, which is fine for timestamps that only
// need per-thread order (clamped in Snapshot).
func cputicks() int64
