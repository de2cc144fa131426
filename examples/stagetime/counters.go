package stagetime

import (
	"time"

	"github.com/wsched/wsched/scheduler"
)

// Counters are a scheduler's counters over one cycle (or any interval),
// summed over its workers.
type Counters struct {
	Packets       uint64 // packets run
	BucketTakes   uint64 // takes from buckets
	BucketPackets uint64 // packets those takes moved
	Steals        uint64 // successful steals from other workers
	Stolen        uint64 // packets moved by them
	Parks         uint64
	Wakes         uint64        // wake-ups sent, by workers and by other goroutines
	Idle          time.Duration // time workers spent parked
}

// Delta returns the counters accumulated between two Stats snapshots of
// the same scheduler.
func Delta(after, before scheduler.Stats) Counters {
	return sum(after).minus(sum(before))
}

func sum(st scheduler.Stats) Counters {
	c := Counters{Wakes: st.ExternalWakes}
	for _, w := range st.Workers {
		c.Packets += w.Packets
		c.BucketTakes += w.BucketTakes
		c.BucketPackets += w.BucketPackets
		c.Steals += w.Steals
		c.Stolen += w.Stolen
		c.Parks += w.Parks
		c.Wakes += w.WakesSent
		c.Idle += w.Idle
	}
	return c
}

func (c Counters) minus(b Counters) Counters {
	return Counters{
		Packets:       c.Packets - b.Packets,
		BucketTakes:   c.BucketTakes - b.BucketTakes,
		BucketPackets: c.BucketPackets - b.BucketPackets,
		Steals:        c.Steals - b.Steals,
		Stolen:        c.Stolen - b.Stolen,
		Parks:         c.Parks - b.Parks,
		Wakes:         c.Wakes - b.Wakes,
		Idle:          c.Idle - b.Idle,
	}
}
