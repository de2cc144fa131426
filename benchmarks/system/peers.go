package system

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/alitto/pond/v2"
	"github.com/panjf2000/ants/v2"
	"github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/errgroup"
)

func init() {
	register(&Kind{Name: "waitgroup", Nested: true, New: newWaitGroup,
		Doc: "one goroutine per task (go f()), sync.WaitGroup to wait"})
	register(&Kind{Name: "errgroup", Nested: true, New: newErrgroup,
		Doc: "errgroup.Group with SetLimit(workers); spawns use TryGo, else run inline"})
	register(&Kind{Name: "chanpool", Nested: true, New: newChanPool,
		Doc: "workers goroutines ranging over one buffered channel (cap 1024); spawns send without blocking, else run inline"})
	register(&Kind{Name: "ants", Nested: true, New: newAnts,
		Doc: "ants/v2 Pool(workers); spawning workloads use WithNonblocking and run inline on ErrPoolOverload"})
	register(&Kind{Name: "pond", Nested: true, New: newPond,
		Doc: "pond/v2 NewPool(workers) with Go (unbounded queue)"})
	register(&Kind{Name: "conc", Nested: false, New: newConc,
		Doc: "conc pool.New().WithMaxGoroutines(workers), one pool per run; Go blocks, so no spawning"})
}

func checkWorkers(workers int) error {
	if workers < 1 {
		return fmt.Errorf("system: workers must be >= 1, got %d", workers)
	}
	return nil
}

// ---- go + WaitGroup ----

type waitGroup struct {
	body Body
	wg   sync.WaitGroup
	fns  []func() // fns[i] runs task i and marks it done
}

func newWaitGroup(workers, n int, nested bool, body Body) (Exec, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	e := &waitGroup{body: body, fns: make([]func(), n)}
	for i := range e.fns {
		id := int32(i)
		e.fns[i] = func() { e.body(e, id); e.wg.Done() }
	}
	return e, nil
}

func (e *waitGroup) SpawnAll(ids []int32) {
	for _, i := range ids {
		e.Spawn(i)
	}
}

func (e *waitGroup) Spawn(i int32) {
	e.wg.Add(1)
	go e.fns[i]()
}

func (e *waitGroup) Run(roots []int32) error {
	e.wg.Add(len(roots))
	for _, r := range roots {
		go e.fns[r]()
	}
	e.wg.Wait()
	return nil
}

func (e *waitGroup) Close() error { return nil }

// ---- errgroup with SetLimit ----

type errGroup struct {
	workers int
	body    Body
	g       *errgroup.Group
	fns     []func() error
}

func newErrgroup(workers, n int, nested bool, body Body) (Exec, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	e := &errGroup{workers: workers, body: body, fns: make([]func() error, n)}
	for i := range e.fns {
		id := int32(i)
		e.fns[i] = func() error { e.body(e, id); return nil }
	}
	return e, nil
}

func (e *errGroup) SpawnAll(ids []int32) {
	for _, i := range ids {
		e.Spawn(i)
	}
}

func (e *errGroup) Spawn(i int32) {
	if !e.g.TryGo(e.fns[i]) {
		e.fns[i]() // the group is at its limit: run the child here
	}
}

func (e *errGroup) Run(roots []int32) error {
	e.g = new(errgroup.Group)
	e.g.SetLimit(e.workers)
	for _, r := range roots {
		e.g.Go(e.fns[r])
	}
	return e.g.Wait()
}

func (e *errGroup) Close() error { return nil }

// ---- channel-fed worker pool ----

// chanCap bounds the pool's queue. 1024 slots is far more than two workers
// drain between two scheduling quanta, so the caller rarely blocks, and it
// keeps the queue's memory bounded (every buffer has a bound).
const chanCap = 1024

type chanPool struct {
	body Body
	ch   chan int32
	wg   sync.WaitGroup // tasks not yet finished
	done sync.WaitGroup // worker goroutines
}

func newChanPool(workers, n int, nested bool, body Body) (Exec, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	e := &chanPool{body: body, ch: make(chan int32, chanCap)}
	e.done.Add(workers)
	for range workers {
		go func() {
			defer e.done.Done()
			for i := range e.ch {
				e.body(e, i)
				e.wg.Done()
			}
		}()
	}
	return e, nil
}

func (e *chanPool) SpawnAll(ids []int32) {
	for _, i := range ids {
		e.Spawn(i)
	}
}

func (e *chanPool) Spawn(i int32) {
	e.wg.Add(1)
	select {
	case e.ch <- i:
	default:
		e.body(e, i) // queue full: run it here rather than block a worker
		e.wg.Done()
	}
}

func (e *chanPool) Run(roots []int32) error {
	e.wg.Add(len(roots))
	for _, r := range roots {
		e.ch <- r
	}
	e.wg.Wait()
	return nil
}

func (e *chanPool) Close() error {
	close(e.ch)
	e.done.Wait()
	return nil
}

// ---- ants v2 ----

type antsPool struct {
	body     Body
	p        *ants.Pool
	nonblock bool
	wg       sync.WaitGroup
	fns      []func()
}

func newAnts(workers, n int, nested bool, body Body) (Exec, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	// A blocking Submit from inside a task can deadlock when every worker
	// is itself blocked in Submit, so spawning workloads use the
	// non-blocking mode and run a child inline when the pool is full.
	p, err := ants.NewPool(workers, ants.WithNonblocking(nested), ants.WithPreAlloc(true))
	if err != nil {
		return nil, err
	}
	e := &antsPool{body: body, p: p, nonblock: nested, fns: make([]func(), n)}
	for i := range e.fns {
		id := int32(i)
		e.fns[i] = func() { e.body(e, id); e.wg.Done() }
	}
	return e, nil
}

func (e *antsPool) SpawnAll(ids []int32) {
	for _, i := range ids {
		e.Spawn(i)
	}
}

func (e *antsPool) Spawn(i int32) {
	e.wg.Add(1)
	if err := e.p.Submit(e.fns[i]); err != nil {
		e.fns[i]()
	}
}

func (e *antsPool) Run(roots []int32) error {
	e.wg.Add(len(roots))
	for _, r := range roots {
		for {
			err := e.p.Submit(e.fns[r])
			if err == nil {
				break
			}
			if !errors.Is(err, ants.ErrPoolOverload) {
				e.wg.Done()
				return err
			}
			runtime.Gosched() // non-blocking mode and the pool is full: let a worker run
		}
	}
	e.wg.Wait()
	return nil
}

func (e *antsPool) Close() error {
	e.p.Release()
	return nil
}

// ---- pond v2 ----

type pondPool struct {
	body Body
	p    pond.Pool
	wg   sync.WaitGroup
	fns  []func()
}

func newPond(workers, n int, nested bool, body Body) (Exec, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	e := &pondPool{body: body, p: pond.NewPool(workers), fns: make([]func(), n)}
	for i := range e.fns {
		id := int32(i)
		e.fns[i] = func() { e.body(e, id); e.wg.Done() }
	}
	return e, nil
}

func (e *pondPool) SpawnAll(ids []int32) {
	for _, i := range ids {
		e.Spawn(i)
	}
}

func (e *pondPool) Spawn(i int32) {
	e.wg.Add(1)
	if err := e.p.Go(e.fns[i]); err != nil {
		panic("system: pond Go: " + err.Error()) // only after Stop, which Run never races with
	}
}

func (e *pondPool) Run(roots []int32) error {
	e.wg.Add(len(roots))
	for _, r := range roots {
		if err := e.p.Go(e.fns[r]); err != nil {
			e.wg.Done()
			return err
		}
	}
	e.wg.Wait()
	return nil
}

func (e *pondPool) Close() error {
	e.p.StopAndWait()
	return nil
}

// ---- conc pool ----

type concPool struct {
	workers int
	body    Body
	fns     []func()
}

func newConc(workers, n int, nested bool, body Body) (Exec, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	if nested {
		return nil, errors.New("system: conc's pool cannot run spawning workloads (Go blocks when the pool is full)")
	}
	e := &concPool{workers: workers, body: body, fns: make([]func(), n)}
	for i := range e.fns {
		id := int32(i)
		e.fns[i] = func() { e.body(nil, id) }
	}
	return e, nil
}

func (e *concPool) Run(roots []int32) error {
	p := pool.New().WithMaxGoroutines(e.workers) // a pool may not be reused after Wait
	for _, r := range roots {
		p.Go(e.fns[r])
	}
	p.Wait()
	return nil
}

func (e *concPool) Close() error { return nil }
