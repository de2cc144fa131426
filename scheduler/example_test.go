package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/wsched/wsched/scheduler"
)

// square adds n² to its worker's partial sum. Each worker has its own
// slot, so the packets need no lock.
type square struct {
	n        int
	partials []int64 // partials[w.ID()]
}

func (p *square) Run(w *scheduler.Worker) { p.partials[w.ID()] += int64(p.n * p.n) }

// total sums the partial sums. It runs in a later stage, which opens only
// when every square packet has run, so it sees all their writes.
type total struct {
	partials []int64
	result   *int64
}

func (p *total) Run(w *scheduler.Worker) {
	for _, v := range p.partials {
		*p.result += v
	}
}

// A two-stage job: Map squares the numbers 1 … 1000, Reduce adds the
// squares up. Stage 2 opens only when stage 1 is drained.
func Example() {
	s, err := scheduler.New(scheduler.Config{Workers: 4, Stages: []string{"Map", "Reduce"}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	mapStage, _ := s.Stage("Map")
	reduceStage, _ := s.Stage("Reduce")

	partials := make([]int64, s.Workers())
	var ps []scheduler.Packet
	for n := 1; n <= 1000; n++ {
		ps = append(ps, &square{n: n, partials: partials})
	}
	var result int64
	if err := s.BulkAdd(mapStage, ps); err != nil {
		panic(err)
	}
	if err := s.Add(reduceStage, &total{partials: partials, result: &result}); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil { // one cycle: Map, then Reduce
		panic(err)
	}
	fmt.Println("sum of squares:", result)
	fmt.Println("packets run:", s.Stats().PacketsRun())
	// Output:
	// sum of squares: 333833500
	// packets run: 1001
}

// sumRange adds up lo … hi-1, splitting itself in two until a range is
// small: a packet that spawns packets. Idle workers steal the spawned
// halves.
type sumRange struct {
	lo, hi int
	sum    *atomic.Int64
}

func (p *sumRange) Run(w *scheduler.Worker) {
	if p.hi-p.lo > 1000 {
		mid := (p.lo + p.hi) / 2
		w.Spawn(&sumRange{lo: p.lo, hi: mid, sum: p.sum}) // queued on this worker, stealable
		w.Spawn(&sumRange{lo: mid, hi: p.hi, sum: p.sum})
		return
	}
	s := 0
	for i := p.lo; i < p.hi; i++ {
		s += i
	}
	p.sum.Add(int64(s))
}

func ExampleWorker_Spawn() {
	s, err := scheduler.New(scheduler.Config{Workers: 2, Stages: []string{"Sum"}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	var sum atomic.Int64
	if err := s.Add(1, &sumRange{lo: 0, hi: 1_000_000, sum: &sum}); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(sum.Load())
	// Output:
	// 499999500000
}

// logged appends its name to a log when it runs.
type logged struct {
	name string
	mu   *sync.Mutex
	log  *[]string
}

func (p *logged) Run(w *scheduler.Worker) {
	p.mu.Lock()
	*p.log = append(*p.log, p.name)
	p.mu.Unlock()
}

// A known-heavy packet goes in the priority lane: the next worker to look
// at the stage takes it before any normal packet, so it starts first
// instead of last (MMTk's luindex case, where a heavy root-scanning packet
// queued behind the others decided the stage's length).
func ExampleScheduler_AddPriority() {
	// One worker and a FIFO local deque make the order deterministic.
	s, err := scheduler.New(scheduler.Config{Workers: 1, Stages: []string{"Prepare"}, LocalFIFO: true})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	var mu sync.Mutex
	var log []string
	for _, name := range []string{"stack-1", "stack-2", "stack-3"} {
		if err := s.Add(1, &logged{name: name, mu: &mu, log: &log}); err != nil {
			panic(err)
		}
	}
	if err := s.AddPriority(1, &logged{name: "code-cache (heavy)", mu: &mu, log: &log}); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(log)
	// Output:
	// [code-cache (heavy) stack-1 stack-2 stack-3]
}

// A batch job lends its packets instead of copying them: AddSlice queues a
// million packets in O(1), and the workers read the slice in place. The
// slice must stay unchanged until Run returns; then it can be refilled and
// lent again for the next batch.
func ExampleScheduler_AddSlice() {
	s, err := scheduler.New(scheduler.Config{Workers: 4, Stages: []string{"Map"}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	partials := make([]int64, s.Workers())
	squares := make([]square, 1_000_000)
	ps := make([]scheduler.Packet, len(squares))
	for batch := 1; batch <= 2; batch++ {
		for i := range squares {
			squares[i] = square{n: batch, partials: partials}
			ps[i] = &squares[i]
		}
		clear(partials)
		if err := s.AddSlice(1, ps); err != nil {
			panic(err)
		}
		if err := s.Run(context.Background()); err != nil {
			panic(err)
		}
		var sum int64
		for _, v := range partials {
			sum += v
		}
		fmt.Printf("batch %d: %d\n", batch, sum)
	}
	// Output:
	// batch 1: 1000000
	// batch 2: 4000000
}
