//go:build !race

package simulate

const raceEnabled = false
