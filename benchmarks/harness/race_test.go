//go:build race

package harness

// raceEnabled: the race detector allocates, so allocation counts are not
// checked under it.
const raceEnabled = true
