package workload

import (
	"sync"
	"time"
)

// Spin does units rounds of xorshift64, a dependent chain of shifts and
// xors that the CPU cannot overlap or the compiler remove (the call is not
// inlined and its result depends on every round). It is the unit of
// simulated packet work: deterministic CPU time with no memory traffic, so
// that the scheduler, not the cache, decides the cost of a workload.
//
//go:noinline
func Spin(units int32) uint64 {
	x := uint64(0x9E3779B97F4A7C15)
	for i := int32(0); i < units; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

var (
	calOnce       sync.Once
	unitsPerMicro float64
)

// UnitsPerMicrosecond reports how many Spin units take one microsecond on
// this machine, measured once per process: the fastest of several timed
// runs of 200,000 units (the fastest run is the one least disturbed by
// other processes; about 1.3 ns per unit on the project's 2-vCPU AMD EPYC
// KVM guest, Go 1.26.8).
func UnitsPerMicrosecond() float64 {
	calOnce.Do(func() {
		const units = 200_000
		best := time.Duration(1 << 62)
		for i := 0; i < 15; i++ {
			t0 := time.Now()
			Spin(units)
			if d := time.Since(t0); d < best && d > 0 {
				best = d
			}
		}
		unitsPerMicro = units / (float64(best) / float64(time.Microsecond))
	})
	return unitsPerMicro
}

// UnitsFor converts a duration of simulated work to Spin units (at least 0).
func UnitsFor(d time.Duration) int32 {
	u := float64(d) / float64(time.Microsecond) * UnitsPerMicrosecond()
	if u < 0 {
		return 0
	}
	if u > 1<<30 {
		return 1 << 30
	}
	return int32(u + 0.5)
}
