package scheduler

import (
	"sync/atomic"
	"testing"
)

// plainNode is namedNode without a name of its own: the baseline of
// BenchmarkSpawnOrRunNamerValue.
type plainNode struct {
	depth int32
	pad   [3]int64
	done  *atomic.Int64
}

func (n plainNode) Run(w *Worker) error {
	n.done.Add(1)
	if n.depth > 0 {
		SpawnOrRun(w, plainNode{depth: n.depth - 1, done: n.done})
		SpawnOrRun(w, plainNode{depth: n.depth - 1, done: n.done})
	}
	return nil
}

// BenchmarkSpawnOrRunNamerValue: a binary tree of 40-byte value nodes run
// inline by SpawnOrRun on one worker, with and without a PacketName of
// their own. Nothing is allocated either way; a Namer costs its name's
// lookup and an arena slot per inline run.
func BenchmarkSpawnOrRunNamerValue(b *testing.B) {
	for _, named := range []bool{false, true} {
		name := "plain"
		if named {
			name = "namer"
		}
		b.Run(name, func(b *testing.B) {
			s := newSched(b, Config{Workers: 1})
			var done atomic.Int64
			var root Packet = plainNode{depth: 16, done: &done}
			if named {
				root = namedNode{depth: 16, done: &done}
			}
			b.ReportAllocs()
			for b.Loop() {
				s.Add(root)
				s.Run(bg)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(done.Load()), "ns/node")
		})
	}
}
