package scheduler_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/wsched/wsched/scheduler"
)

// drainOne takes one item off a shared work list and re-arms the stage's
// sentinel while items are left: a stage that loops, as a collector's
// reference processing does.
type drainOne struct {
	items *[]string
	done  *[]string
}

func (d drainOne) Run(w *scheduler.Worker) error {
	list := *d.items
	*d.done = append(*d.done, list[0])
	*d.items = list[1:]
	if len(*d.items) > 0 {
		return w.Scheduler().SetSentinel(1, d) // the stage runs again once drained
	}
	return nil
}

// A sentinel runs when its stage has drained, before the next stage opens;
// one that sets a new sentinel makes its stage loop.
func ExampleScheduler_SetSentinel() {
	s, err := scheduler.New(scheduler.Config{Workers: 2, Stages: []string{"refs", "release"}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	items, done := []string{"soft", "weak", "final"}, []string(nil)
	if err := s.SetSentinel(1, drainOne{&items, &done}); err != nil {
		panic(err)
	}
	if err := s.Add(scheduler.Func("release", func(*scheduler.Worker) error {
		fmt.Println("release after", done)
		return nil
	}), scheduler.StageID(2)); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	// Output:
	// release after [soft weak final]
}

// Designated packets run on the worker they name, before anything else it
// has to do: a per-worker step such as MMTk's PrepareCollector.
func ExampleScheduler_AddDesignated() {
	s, err := scheduler.New(scheduler.Config{Workers: 3})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	var ran [3]atomic.Int32
	for i := range s.Workers() {
		err := s.AddDesignated(i, scheduler.Func("prepare", func(w *scheduler.Worker) error {
			ran[w.ID()].Add(1)
			return nil
		}))
		if err != nil {
			panic(err)
		}
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(ran[0].Load(), ran[1].Load(), ran[2].Load())
	// Output:
	// 1 1 1
}

// scanList works through a list of its own, newest first, and splits off
// the oldest half for an idle worker when ShouldSplit says one is waiting.
type scanList struct {
	items []int
	sum   *atomic.Int64
}

func (p scanList) Run(w *scheduler.Worker) error {
	items := p.items
	for len(items) > 0 {
		if len(items) >= 64 && len(items)%16 == 0 && w.ShouldSplit() {
			half := len(items) / 2
			scheduler.Spawn(w, scanList{items[:half], p.sum}) // the oldest half
			items = items[half:]
		}
		p.sum.Add(int64(items[len(items)-1]))
		items = items[:len(items)-1]
	}
	return nil
}

// A packet that works through a queue of its own (a marker's mark stack)
// splits it only when another worker is idle, so that work moves only when
// someone can take it.
func ExampleWorker_ShouldSplit() {
	s, err := scheduler.New(scheduler.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	items := make([]int, 100_000)
	for i := range items {
		items[i] = i
	}
	var sum atomic.Int64
	if err := s.Add(scanList{items, &sum}); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(sum.Load())
	// Output:
	// 4999950000
}

// Stats counts packets by name, per worker and per stage; exact once Run
// has returned.
func ExampleScheduler_Stats() {
	s, err := scheduler.New(scheduler.Config{Workers: 2, Stages: []string{"parse", "sum"}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	nop := func(*scheduler.Worker) error { return nil }
	for range 3 {
		if err := s.Add(scheduler.Func("parse", nop)); err != nil {
			panic(err)
		}
	}
	if err := s.Add(scheduler.Func("sum", nop), scheduler.StageID(2)); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	st := s.Stats()
	fmt.Println("cycles:", st.Cycles, "packets:", st.Ran)
	for _, p := range st.Packets {
		fmt.Println(p.Name, p.Count)
	}
	for _, g := range st.Stages[1:] {
		fmt.Println(g.Name, "opened", g.Opens, "time(s)")
	}
	// Output:
	// cycles: 1 packets: 4
	// parse 3
	// sum 1
	// parse opened 1 time(s)
	// sum opened 1 time(s)
}
