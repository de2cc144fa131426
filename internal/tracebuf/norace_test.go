//go:build !race

package tracebuf

// raceEnabled: see race_test.go.
const raceEnabled = false
