package simulate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContention: a type whose runs beside others take 2.5× its runs
// alone is found with both medians; a type whose run times do not change
// is reported level; a type with too few runs of either kind is left out;
// back-to-back runs are alone; a trace of one worker has no shared runs.
func TestContention(t *testing.T) {
	wl := &Workload{Workers: 2, Names: []string{"Waits", "Computes", "Rare"}}
	var c Cycle
	at := int64(0)
	for range 12 {
		// Alone, back to back: Waits then Computes.
		c.Packets = append(c.Packets, Packet{Name: 0, Cost: 100, Begin: at, Worker: 0},
			Packet{Name: 1, Cost: 50, Begin: at + 100, Worker: 0})
		at += 150
		// Side by side: two of each.
		c.Packets = append(c.Packets, Packet{Name: 0, Cost: 250, Begin: at, Worker: 0},
			Packet{Name: 0, Cost: 250, Begin: at, Worker: 1})
		at += 250
		c.Packets = append(c.Packets, Packet{Name: 1, Cost: 50, Begin: at, Worker: 0},
			Packet{Name: 1, Cost: 50, Begin: at + 10, Worker: 1})
		at += 60
	}
	c.Packets = append(c.Packets, Packet{Name: 2, Cost: 10, Begin: at})
	wl.Cycles = []Cycle{c}
	got := wl.Contention()
	require.Len(t, got, 2)
	assert.Equal(t, Contention{Name: "Computes", Alone: 12, Shared: 24, AloneNs: 50, SharedNs: 50}, got[0])
	assert.Equal(t, Contention{Name: "Waits", Alone: 12, Shared: 24, AloneNs: 100, SharedNs: 250}, got[1])
	assert.InDelta(t, 2.5, got[1].Ratio(), 1e-9)

	// One worker: every run alone, nothing to compare.
	one := &Workload{Workers: 1, Names: []string{"Waits"}}
	var oc Cycle
	for i := range 30 {
		oc.Packets = append(oc.Packets, Packet{Name: 0, Cost: 100, Begin: int64(i) * 100})
	}
	one.Cycles = []Cycle{oc}
	assert.Empty(t, one.Contention())
}
