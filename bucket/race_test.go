//go:build race

package bucket

// raceEnabled skips the allocation tests under the race detector, which
// allocates.
const raceEnabled = true
