package gcmark_test

import (
	"context"
	"fmt"

	"github.com/wsched/wsched/examples/gcmark"
	"github.com/wsched/wsched/scheduler"
)

// A Marker marks a heap on two workers; every cycle finds exactly the
// objects the sequential depth-first marker finds, scanning each once and
// tracing each of its slots once.
func ExampleMarker() {
	h := gcmark.NewHeap(gcmark.DefaultHeapConfig(0.02, 1)) // about 42 Ki objects
	seq, err := gcmark.NewBaseline(h, gcmark.SequentialDFS, gcmark.BaselineOptions{})
	if err != nil {
		panic(err)
	}
	want, err := seq.Mark(context.Background())
	if err != nil {
		panic(err)
	}

	m, err := gcmark.NewMarker(h, gcmark.Options{Scheduler: scheduler.Config{Workers: 2}})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	for range 3 {
		r, err := m.Mark(context.Background())
		if err != nil {
			panic(err)
		}
		fmt.Println(gcmark.FirstDifference(m.Marks(), seq.Marks()) < 0,
			r.Marked == want.Marked, r.Slots == want.Slots, r.Live == r.Marked)
	}
	// Output:
	// true true true true
	// true true true true
	// true true true true
}
