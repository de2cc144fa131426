package prepare

import (
	"math"
	"math/rand/v2"
)

// Model is the shape of the work of one GC cycle's Prepare and Closure
// stages. Work is counted in slots; a slot costs SlotWork rounds of a
// 64-bit xorshift (about 1.8 ns a round on the project's machine: six
// dependent instructions).
type Model struct {
	// StackSlots is the root slots of each mutator's stack: one
	// ScanMutatorRoots packet per mutator.
	StackSlots []int
	// CodeCacheSlots is the slots of the one ScanCodeCacheRoots packet
	// (26,845 in the luindex investigation, mmtk-core #1200).
	CodeCacheSlots int
	// SplitSlots is the most slots per packet when a configuration splits
	// the code-cache packet: 4096, MMTk's edge-buffer size.
	SplitSlots int
	// CollectorSlots is the work of each worker's designated
	// PrepareCollector packet.
	CollectorSlots int
	// SlotWork is mixing rounds per slot.
	SlotWork int
	// StopMicros is how long the StopMutators packet runs (waiting for the
	// mutators to reach a safepoint) before it queues the Prepare stage's
	// work. It is long enough for idle workers to stop searching and park,
	// so that how they are woken matters, as it does in a GC.
	StopMicros int
	// ClosureDepth: each root packet queues one Closure packet per
	// SplitSlots of its slots, and each Closure packet spawns two children
	// of the same size, down to this depth.
	ClosureDepth int
}

// DefaultModel returns the model at a given scale (scale multiplies the
// per-slot work, so the shape stays and the stages grow) and seed (which
// draws the stack depths). At scale 1 a slot costs about 100 ns, the
// Prepare stage holds about 4.3 ms of work, 2.7 ms of it the code-cache
// packet, and Closure about 30 ms.
func DefaultModel(scale float64, seed uint64) Model {
	rng := rand.New(rand.NewPCG(seed, 0x243f6a8885a308d3))
	// 64 mutators, depths 64 + a power law (α 1.5): mean about 250 slots,
	// a few of several thousand. The same law as examples/gcmark.
	stacks := make([]int, 64)
	for i := range stacks {
		stacks[i] = 64 + min(int(64*math.Pow(1-rng.Float64(), -1/1.5)), 64*64)
	}
	return Model{
		StackSlots:     stacks,
		CodeCacheSlots: 26845,
		SplitSlots:     4096,
		CollectorSlots: 200,
		SlotWork:       max(int(math.Round(56*scale)), 1),
		StopMicros:     500,
		ClosureDepth:   2,
	}
}

// PrepareSlots returns the Prepare stage's work in slots for w workers.
func (m Model) PrepareSlots(workers int) int {
	n := m.CodeCacheSlots + m.CollectorSlots*workers
	for _, s := range m.StackSlots {
		n += s
	}
	return n
}

// burn does rounds of xorshift on x: the model's unit of CPU work.
func burn(x uint64, rounds int) uint64 {
	x |= 1
	for range rounds {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}
