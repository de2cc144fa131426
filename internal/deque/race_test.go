//go:build race

package deque_test

// raceEnabled scales the stress tests down under the race detector, which
// slows atomics and channel operations by 5-20x: the exactly-once runs move
// 2.5·10^5 items instead of 10^6 so that `go test -race ./internal/deque/` stays
// within CI's budget on 2 cores. WSCHED_STRESS=1 restores the full counts.
const raceEnabled = true
