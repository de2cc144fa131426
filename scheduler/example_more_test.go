package scheduler_test

import (
	"context"
	"fmt"
	"sync"
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

// scanList works through a list of its own, newest first. Every 16 items
// it asks ShouldSplit and, when an idle worker wants work, spawns the
// oldest half of what is left as two packets (two, because the newest
// packet a worker spawns stays its own, to run next) and goes on with
// the rest.
type scanList struct {
	items []int
	sh    *scanShared
	seed  bool
}

type scanShared struct {
	sum   *scheduler.Reducer[int64] // each worker's sum of its items
	first int                       // the worker that ran the seed
	// taken is closed by the first split-off part that starts on another
	// worker: the seed waits for it once, so that the output does not
	// depend on timing (a real marker would just go on).
	taken chan struct{}
	once  sync.Once
}

func (p scanList) Run(w *scheduler.Worker) error {
	sh := p.sh
	if p.seed {
		sh.first = w.ID() // before any split: the parts see it
	} else if w.ID() != sh.first {
		sh.once.Do(func() { close(sh.taken) })
	}
	items := p.items
	waited := !p.seed
	for n := 0; len(items) > 0; n++ {
		if n%16 == 0 && len(items) >= 4 && w.ShouldSplit() {
			half, quarter := len(items)/2, len(items)/4
			scheduler.Spawn(w, scanList{items[:quarter], sh, false})     // the oldest quarter: offered to thieves
			scheduler.Spawn(w, scanList{items[quarter:half], sh, false}) // the next: this worker's, run after this packet
			items = items[half:]
			if !waited {
				<-sh.taken
				waited = true
			}
		}
		*sh.sum.Local(w) += int64(items[len(items)-1])
		items = items[:len(items)-1]
	}
	return nil
}

// A packet that works through a queue of its own splits it only when
// another worker is idle, so that work moves only when someone can take
// it. (A Worklist does this for any queue of items: see ExampleWorklist.)
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
	sh := &scanShared{sum: scheduler.NewReducer(s, func(a, b int64) int64 { return a + b }), taken: make(chan struct{})}
	if err := s.Add(scanList{items, sh, true}); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	both := true
	sh.sum.Values(func(_ int, v *int64) { both = both && *v > 0 })
	fmt.Println("sum:", sh.sum.Result(), "both workers ran items:", both)
	// Output:
	// sum: 4999950000 both workers ran items: true
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
