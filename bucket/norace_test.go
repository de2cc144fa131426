//go:build !race

package bucket

// raceEnabled: see race_test.go.
const raceEnabled = false
