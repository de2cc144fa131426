//go:build race

package perfetto_test

// raceEnabled: the race detector slows packets several times, so their
// slices' end deltas take more bytes.
const raceEnabled = true
