//go:build race

package tracebuf

// raceEnabled: the race detector keeps shadow memory for the heap and maps
// it as the program touches memory, so resident-set figures
// (TestRecorderTouchesPages) say little under it.
const raceEnabled = true
