//go:build !race

package deque_test

// raceEnabled: see race_test.go.
const raceEnabled = false
