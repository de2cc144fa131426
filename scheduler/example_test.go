package scheduler_test

import (
	"context"
	"errors"
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

func (p *square) Run(w *scheduler.Worker) error {
	p.partials[w.ID()] += int64(p.n * p.n)
	return nil
}

// total sums the partial sums. It runs in a later stage, which opens only
// when every square packet has run, so it sees all their writes.
type total struct {
	partials []int64
	result   *int64
}

func (p *total) Run(w *scheduler.Worker) error {
	for _, v := range p.partials {
		*p.result += v
	}
	return nil
}

// A two-stage job: Map squares the numbers 1 … 1000, Reduce adds the
// squares up. Stage 2 opens only when stage 1 is drained.
func Example() {
	const mapStage, reduceStage scheduler.StageID = 1, 2 // Config.Stages[i] is StageID i+1
	s, err := scheduler.New(scheduler.Config{Workers: 4, Stages: []string{"Map", "Reduce"}})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	partials := make([]int64, s.Workers())
	var ps []scheduler.Packet
	for n := 1; n <= 1000; n++ {
		ps = append(ps, &square{n: n, partials: partials})
	}
	var result int64
	if err := s.AddAll(ps, mapStage); err != nil {
		panic(err)
	}
	if err := s.Add(&total{partials: partials, result: &result}, reduceStage); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil { // one cycle: Map, then Reduce
		panic(err)
	}
	fmt.Println("sum of squares:", result)
	fmt.Println("packets run:", s.Stats().Ran)
	// Output:
	// sum of squares: 333833500
	// packets run: 1001
}

// sumRange adds up lo … hi-1, splitting itself in two until a range is
// small: a packet that spawns packets. It is a small struct, spawned by
// value (no allocation); idle workers steal the spawned halves.
type sumRange struct {
	lo, hi int
	sum    *atomic.Int64
}

func (p sumRange) Run(w *scheduler.Worker) error {
	if p.hi-p.lo > 1000 {
		mid := (p.lo + p.hi) / 2
		scheduler.Spawn(w, sumRange{lo: p.lo, hi: mid, sum: p.sum}) // queued on this worker, stealable
		scheduler.Spawn(w, sumRange{lo: mid, hi: p.hi, sum: p.sum})
		return nil
	}
	s := 0
	for i := p.lo; i < p.hi; i++ {
		s += i
	}
	p.sum.Add(int64(s))
	return nil
}

func ExampleSpawn() {
	s, err := scheduler.New(scheduler.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	var sum atomic.Int64
	if err := s.Add(sumRange{lo: 0, hi: 1_000_000, sum: &sum}); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(sum.Load())
	// Output:
	// 499999500000
}

// fibCall computes fib(n) into *out: it joins its two recursive calls,
// and the join's continuation, fibAdd, adds what they left in it.
type fibCall struct {
	n   int
	out *int
}

type fibAdd struct {
	a, b int
	out  *int
}

func (f fibAdd) Run(*scheduler.Worker) error {
	*f.out = f.a + f.b
	return nil
}

func (f fibCall) Run(w *scheduler.Worker) error {
	if f.n < 2 {
		*f.out = f.n
		return nil
	}
	add := scheduler.Join(w, fibAdd{out: f.out}) // runs once both calls below have
	scheduler.Spawn(w, fibCall{f.n - 1, &add.a})
	scheduler.Spawn(w, fibCall{f.n - 2, &add.b})
	return nil
}

// Fork-join without waiting: each call's continuation runs when its
// children are done, on whichever worker finished last.
func ExampleJoin() {
	s, err := scheduler.New(scheduler.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	var out int
	if err := s.Add(fibCall{30, &out}); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println("fib(30) =", out)
	// Output:
	// fib(30) = 832040
}

// logged appends its name to a log when it runs.
type logged struct {
	name string
	mu   *sync.Mutex
	log  *[]string
}

func (p *logged) Run(w *scheduler.Worker) error {
	p.mu.Lock()
	*p.log = append(*p.log, p.name)
	p.mu.Unlock()
	return nil
}

// A known-heavy packet goes in the priority lane: the next worker to look
// at the stage takes it before any normal packet, so it starts first
// instead of last (MMTk's luindex case, where a heavy root-scanning packet
// queued behind the others decided the stage's length).
func ExamplePriority() {
	// One worker and a FIFO local queue make the order deterministic.
	s, err := scheduler.New(scheduler.Config{Workers: 1, Stages: []string{"Prepare"}, Local: scheduler.LocalFIFO})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	var mu sync.Mutex
	var log []string
	for _, name := range []string{"stack-1", "stack-2", "stack-3"} {
		if err := s.Add(&logged{name: name, mu: &mu, log: &log}); err != nil {
			panic(err)
		}
	}
	if err := s.Add(&logged{name: "code-cache (heavy)", mu: &mu, log: &log}, scheduler.Priority); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(log)
	// Output:
	// [code-cache (heavy) stack-1 stack-2 stack-3]
}

// A batch job lends its packets instead of copying them: AddAll with Lend
// queues a million packets in O(1), and the workers read the slice in
// place. The slice must stay unchanged until Run returns; then it can be
// refilled and lent again for the next batch.
func ExampleLend() {
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
		if err := s.AddAll(ps, scheduler.Lend); err != nil {
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

var errNotFound = errors.New("record not found")

// Config's policies are text ("wake-all", "take-fixed"), so flags and
// configuration files can set them (flag.TextVar). Each family is its own
// type: a policy in another family's field does not compile, and a name of
// another family is refused as it is read.
func ExampleWakePolicy() {
	var cfg scheduler.Config
	if err := cfg.Wake.UnmarshalText([]byte("wake-all")); err != nil {
		panic(err)
	}
	fmt.Println(cfg.Wake, cfg.Steal)
	err := cfg.Take.UnmarshalText([]byte("take-everything"))
	fmt.Println(errors.Is(err, scheduler.ErrInvalid))
	err = cfg.Local.UnmarshalText([]byte("wake-all"))
	fmt.Println(err)
	// Output:
	// wake-all default
	// true
	// scheduler: invalid argument: "wake-all" is not a local policy (want one of: local-private, local-lifo, local-fifo, or default)
}
