package scheduler_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/wsched/wsched/scheduler"
)

// countdown adds n to a total and spawns n-1, by value: the spawned
// struct is kept in the worker's memory, so spawning allocates nothing.
type countdown struct {
	n     int
	total *atomic.Int64
}

func (c countdown) Run(w *scheduler.Worker) error {
	c.total.Add(int64(c.n))
	if c.n > 1 {
		scheduler.Spawn(w, countdown{c.n - 1, c.total})
	}
	return nil
}

func ExampleSpawn_value() {
	s, err := scheduler.New(scheduler.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	var total atomic.Int64
	if err := s.Add(countdown{100, &total}); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(total.Load())
	for _, p := range s.Stats().Packets {
		fmt.Println(p.Name, p.Count)
	}
	// Output:
	// 5050
	// scheduler_test.countdown 100
}

// rangeSum adds lo..hi-1 to sum, halving the range with SpawnOrRun:
// while every worker is busy the halves run inline, at the cost of a
// call; an idle worker is handed some.
type rangeSum struct {
	lo, hi int
	sum    *atomic.Int64
}

func (r rangeSum) Run(w *scheduler.Worker) error {
	if r.hi-r.lo <= 1000 {
		var s int64
		for i := r.lo; i < r.hi; i++ {
			s += int64(i)
		}
		r.sum.Add(s)
		return nil
	}
	mid := (r.lo + r.hi) / 2
	scheduler.SpawnOrRun(w, rangeSum{r.lo, mid, r.sum})
	scheduler.SpawnOrRun(w, rangeSum{mid, r.hi, r.sum})
	return nil
}

func ExampleSpawnOrRun() {
	s, err := scheduler.New(scheduler.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	var sum atomic.Int64
	if err := s.Add(rangeSum{0, 1_000_000, &sum}); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(sum.Load())
	// Output: 499999500000
}

func ExampleFunc() {
	s, err := scheduler.New(scheduler.Config{Workers: 1})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	hello := scheduler.Func("hello", func(w *scheduler.Worker) error {
		fmt.Println("hello from worker", w.ID())
		return nil
	})
	if err := s.Add(hello); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}

	// The name is the packet's in Stats, traces and errors.
	load := scheduler.Func("load-config", func(*scheduler.Worker) error {
		return errors.New("file not found")
	})
	if err := s.Add(load); err != nil {
		panic(err)
	}
	err = s.Run(context.Background())
	var ce *scheduler.CycleError
	if errors.As(err, &ce) {
		fmt.Printf("%s: %v\n", ce.Packet, ce.Err)
	}
	for _, p := range s.Stats().Packets {
		fmt.Println(p.Name, p.Count)
	}
	// Output:
	// hello from worker 0
	// load-config: file not found
	// hello 1
	// load-config 1
}

// addN adds n to a sum.
type addN struct {
	n   int64
	sum *atomic.Int64
}

func (p addN) Run(*scheduler.Worker) error {
	p.sum.Add(p.n)
	return nil
}

func ExampleBlock() {
	s, err := scheduler.New(scheduler.Config{Workers: 2, MaxQueued: 8})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ctx := context.Background()
	var sum atomic.Int64

	// A producer feeding a running cycle: with Block, an add waits for
	// room under MaxQueued. The producer's Hold keeps the cycle open
	// until it is released, with no worker blocked.
	hold, err := s.Hold(1)
	if err != nil {
		panic(err)
	}
	ran := make(chan error)
	go func() { ran <- s.Run(ctx) }()
	for i := 1; i <= 100; i++ {
		if err := hold.Add(addN{int64(i), &sum}, scheduler.Block(ctx)); err != nil {
			panic(err)
		}
	}
	hold.Release()
	if err := <-ran; err != nil {
		panic(err)
	}
	fmt.Println(sum.Load())

	// Without Block, a full queue is an error.
	for range 8 {
		if err := s.Add(addN{1, &sum}); err != nil {
			panic(err)
		}
	}
	fmt.Println(s.Add(addN{1, &sum}))
	// Output:
	// 5050
	// scheduler: queue full
}

func ExampleWakePolicy_UnmarshalText() {
	fs := flag.NewFlagSet("gc", flag.ContinueOnError)
	var cfg scheduler.Config
	fs.TextVar(&cfg.Wake, "wake", scheduler.WakeN, "whom an add wakes")
	fs.TextVar(&cfg.Take, "take", scheduler.TakeGuided, "how many packets a bucket take moves")
	if err := fs.Parse([]string{"-wake=wake-searcher", "-take", "take-fair"}); err != nil {
		panic(err)
	}
	fmt.Println(cfg.Wake, cfg.Take)

	var p scheduler.WakePolicy
	err := p.UnmarshalText([]byte("wake-sometimes"))
	fmt.Println(errors.Is(err, scheduler.ErrInvalid))
	// Output:
	// wake-searcher take-fair
	// true
}

type requestKey struct{}

func ExampleWorker_Context() {
	s, err := scheduler.New(scheduler.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	// The cycle's context carries Run's context's values...
	ctx := context.WithValue(context.Background(), requestKey{}, "request 42")
	if err := s.Add(scheduler.Func("handler", func(w *scheduler.Worker) error {
		fmt.Println("serving", w.Context().Value(requestKey{}))
		return nil
	})); err != nil {
		panic(err)
	}
	if err := s.Run(ctx); err != nil {
		panic(err)
	}

	// ...and is cancelled, with the cycle's cause, when a packet fails.
	errDiskFull := errors.New("disk full")
	started := make(chan struct{})
	if err := s.AddDesignated(0, scheduler.Func("waiter", func(w *scheduler.Worker) error {
		close(started)
		<-w.Context().Done()
		fmt.Println("waiter released:", errors.Is(context.Cause(w.Context()), errDiskFull))
		return nil
	})); err != nil {
		panic(err)
	}
	if err := s.AddDesignated(1, scheduler.Func("writer", func(*scheduler.Worker) error {
		<-started
		return errDiskFull
	})); err != nil {
		panic(err)
	}
	err = s.Run(ctx)
	fmt.Println(errors.Is(err, errDiskFull))
	// Output:
	// serving request 42
	// waiter released: true
	// true
}

func ExampleCycleError() {
	s, err := scheduler.New(scheduler.Config{Workers: 1, Stages: []string{"mark"}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	errCorrupt := errors.New("corrupt object")
	if err := s.Add(scheduler.Func("scan-roots", func(*scheduler.Worker) error {
		return fmt.Errorf("root 7: %w", errCorrupt)
	})); err != nil {
		panic(err)
	}
	var sum atomic.Int64
	if err := s.AddAll([]scheduler.Packet{addN{1, &sum}, addN{2, &sum}, addN{3, &sum}}); err != nil {
		panic(err)
	}
	err = s.Run(context.Background())
	var ce *scheduler.CycleError
	if errors.As(err, &ce) {
		fmt.Println(ce.Packet, ce.StageName, ce.Worker, ce.Dropped)
	}
	fmt.Println(errors.Is(err, errCorrupt))
	fmt.Println(err)
	// Output:
	// scan-roots mark 0 3
	// true
	// scheduler: packet scan-roots (stage mark) failed on worker 0: root 7: corrupt object (cycle 1; 3 packets dropped)
}

// countLen adds its word's length to its worker's sum.
type countLen struct {
	word string
	sums *scheduler.Reducer[int]
}

func (c countLen) Run(w *scheduler.Worker) error {
	*c.sums.Local(w) += len(c.word)
	return nil
}

// A producer outside the workers (a directory walk, a socket reader)
// streams packets into a cycle through a Hold: the cycle stays open,
// with no worker blocked, until the hold is released, and with MaxQueued
// and Block the producer never gets more than the bound ahead. The order:
// take the hold (before Run it holds the next cycle), start Run on its own
// goroutine, add, release, wait for Run. A producer that fails on its own
// cancels the cycle before it releases the hold: released, the cycle would
// finish with what it has. An add after the cycle ended early returns the
// cycle's error, the one Run returns.
func ExampleHold() {
	s, err := scheduler.New(scheduler.Config{Workers: 2, MaxQueued: 4, Stages: []string{"count", "total"}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	sums := scheduler.NewReducer(s, func(a, b int) int { return a + b })
	var total int
	// The aggregate, queued up front in the later stage: it runs once the
	// hold is released and every count has run.
	if err := s.Add(scheduler.Func("total", func(*scheduler.Worker) error { total = sums.Result(); return nil }), scheduler.StageID(2)); err != nil {
		panic(err)
	}
	hold, err := s.Hold(1)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()

	var produceErr error
	for _, word := range strings.Fields("the cycle stays open while the producer holds it") {
		if err := hold.Add(countLen{word, sums}, scheduler.Block(ctx)); err != nil {
			produceErr = err // the cycle ended early: Run returns it too
			break
		}
	}
	if produceErr != nil {
		cancel(produceErr)
	}
	hold.Release()
	if err := <-ran; err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(total)
	// Output:
	// 40
}
