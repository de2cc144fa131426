//go:build race

package simulate

// raceEnabled: the race detector slows the scheduler's own code several
// times over, so a recorded run is no longer what the measured costs
// describe.
const raceEnabled = true
