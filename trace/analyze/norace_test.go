//go:build !race

package analyze

// raceEnabled: see race_test.go.
const raceEnabled = false
