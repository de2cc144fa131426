package system

import (
	"fmt"
	"sort"
)

// A Spawner lets a running task submit other tasks: one, or a list (a
// task's children, in order), which each executor queues its own way
// (the peers one at a time; wsched may lend a long list whole).
type Spawner interface {
	Spawn(i int32)
	SpawnAll(ids []int32)
}

// A Body is a workload's task function: run task i, spawning through sp.
type Body func(sp Spawner, i int32)

// An Exec runs tasks on one executor instance.
type Exec interface {
	// Run submits roots from the calling goroutine and returns when they
	// and every task they spawned have finished. Not reentrant.
	Run(roots []int32) error
	// Close stops the executor's goroutines and waits for them.
	Close() error
}

// A Kind describes an executor and constructs instances of it.
type Kind struct {
	Name string
	// Nested reports whether tasks may spawn tasks on this executor.
	Nested bool
	// Doc is a one-line description for reports.
	Doc string
	// New builds an executor with the given number of workers running body
	// on task ids in [0, n). nested says whether the workload spawns, so
	// executors that need a different mode for it can choose one.
	New func(workers, n int, nested bool, body Body) (Exec, error)
}

var kinds = map[string]*Kind{}

// register adds a kind; called from init functions.
func register(k *Kind) {
	if _, dup := kinds[k.Name]; dup {
		panic("system: duplicate kind " + k.Name)
	}
	kinds[k.Name] = k
}

// Lookup returns the named kind.
func Lookup(name string) (*Kind, error) {
	k, ok := kinds[name]
	if !ok {
		return nil, fmt.Errorf("unknown system %q (known: %v)", name, Names())
	}
	return k, nil
}

// Names lists the registered kinds, wsched first, then the peers by name.
func Names() []string {
	var out []string
	for n := range kinds {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i] == WSched) != (out[j] == WSched) {
			return out[i] == WSched
		}
		return out[i] < out[j]
	})
	return out
}

// Peers lists the registered kinds other than wsched.
func Peers() []string {
	var out []string
	for _, n := range Names() {
		if n != WSched {
			out = append(out, n)
		}
	}
	return out
}

// WSched is the name of the wsched kind.
const WSched = "wsched"
