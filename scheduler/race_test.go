//go:build race

package scheduler

// raceEnabled scales the big tests down under the race detector, which
// slows the scheduler's atomics by 10-50×; every wake × steal pair still runs.
const raceEnabled = true
