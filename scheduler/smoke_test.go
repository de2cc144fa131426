package scheduler

import (
	"context"
	"sync/atomic"
	"testing"
)

type leaf struct{ n *atomic.Int64 }

func (l leaf) Run(w *Worker) { l.n.Add(1) }

type tree struct {
	depth int
	n     *atomic.Int64
}

func (t *tree) Run(w *Worker) {
	t.n.Add(1)
	if t.depth > 0 {
		w.Spawn(&tree{t.depth - 1, t.n})
		w.Spawn(&tree{t.depth - 1, t.n})
	}
}

func TestSmoke(t *testing.T) {
	s, err := New(Config{Stages: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n atomic.Int64
	for c := 0; c < 100; c++ {
		n.Store(0)
		s.Add(1, &tree{10, &n})
		s.Add(2, leaf{&n})
		if err := s.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n.Load() != 2048 {
			t.Fatalf("cycle %d: n=%d", c, n.Load())
		}
	}
	t.Logf("%+v", s.Stats().Workers)
}
