//go:build race

package analyze

// raceEnabled: the race detector slows the analysis about tenfold; the
// time budget allows for it.
const raceEnabled = true
