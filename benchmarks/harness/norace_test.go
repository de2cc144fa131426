//go:build !race

package harness

// raceEnabled: see race_test.go.
const raceEnabled = false
