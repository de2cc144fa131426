package harness

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wsched/wsched/benchmarks/system"
	"github.com/wsched/wsched/benchmarks/workload"
)

// A Target is what runs a workload: wsched with a policy, or a peer.
type Target struct {
	System string        // system.WSched or a peer's name
	Policy system.Policy // wsched only
}

// Label is the target's short name in reports: "wsched/default", "chanpool".
func (t Target) Label() string {
	if t.System == system.WSched {
		return t.System + "/" + t.Policy.Spec
	}
	return t.System
}

// namePart is the target's part of a benchmark name.
func (t Target) namePart() string {
	if t.System == system.WSched {
		return "sys=" + t.System + "/policy=" + t.Policy.Spec
	}
	return "sys=" + t.System
}

// A Runner is one instance of a workload on one target, reused for every
// iteration of an invocation.
type Runner interface {
	// Reset prepares the next operation; it is not timed.
	Reset()
	// Op runs one operation of the workload; it is timed.
	Op() error
	// Close releases the target's goroutines.
	Close() error
}

// A Workload is something the harness can time on targets.
type Workload struct {
	Name  string // lower case, as on the command line: "fanout"
	Bench string // benchmark name base: "Fanout"
	Doc   string
	// Tasks is the number of tasks (packets) per operation, for ns/task;
	// 0 when the workload has no fixed count.
	Tasks func() int
	// Peers lists the peers that can express the workload.
	Peers func() []string
	// SupportsPolicy reports whether the workload can apply a wsched
	// policy (nil: every policy). The matrix skips the others.
	SupportsPolicy func(system.Policy) bool
	// New builds a runner. extra is the planted slowdown (self-tests only;
	// 0 otherwise): the fraction of extra work per packet.
	New func(t Target, workers int, extra float64) (Runner, error)
}

var (
	workloadsMu sync.Mutex
	workloads   = map[string]*Workload{}
	wlOrder     []string
)

// RegisterWorkload adds a workload to the harness. It panics on a
// duplicate name (a programming error).
func RegisterWorkload(w *Workload) {
	workloadsMu.Lock()
	defer workloadsMu.Unlock()
	if _, dup := workloads[w.Name]; dup {
		panic("harness: duplicate workload " + w.Name)
	}
	workloads[w.Name] = w
	wlOrder = append(wlOrder, w.Name)
}

// LookupWorkload returns the named workload.
func LookupWorkload(name string) (*Workload, error) {
	workloadsMu.Lock()
	defer workloadsMu.Unlock()
	w, ok := workloads[name]
	if !ok {
		names := append([]string(nil), wlOrder...)
		return nil, fmt.Errorf("unknown workload %q (known: %s)", name, strings.Join(names, ", "))
	}
	return w, nil
}

// WorkloadNames lists the registered workloads in registration order.
func WorkloadNames() []string {
	workloadsMu.Lock()
	defer workloadsMu.Unlock()
	return append([]string(nil), wlOrder...)
}

// Canonical sizes of the task-tree workloads. The same in -quick and full
// runs, so that their ns/op are comparable.
const (
	FanoutTasks   = 1 << 14 // 16,384 trivial tasks: ~0.3 ms on wsched, ~11 ms as goroutines
	ForkJoinDepth = 14      // 32,767 nodes
	UniformTasks  = 4096    // × UniformCost = 8 ms of work, 4 ms on two workers
	UniformCost   = 2 * time.Microsecond
)

// lazyTree builds a tree once, on first use.
func lazyTree(build func() *workload.Tree) func() *workload.Tree {
	var once sync.Once
	var t *workload.Tree
	return func() *workload.Tree {
		once.Do(func() { t = build() })
		return t
	}
}

var (
	fanoutTree    = lazyTree(func() *workload.Tree { return workload.Fanout(FanoutTasks) })
	spawnTree     = lazyTree(func() *workload.Tree { return workload.Spawn(FanoutTasks) })
	uniformTree   = lazyTree(func() *workload.Tree { return workload.Uniform(UniformTasks, UniformCost) })
	forkJoinTree  = lazyTree(func() *workload.Tree { return workload.ForkJoin(ForkJoinDepth) })
	irregularTree = lazyTree(func() *workload.Tree { return workload.Irregular(workload.DefaultIrregular) })
)

func init() {
	RegisterWorkload(treeWorkload("fanout", "Fanout", fanoutTree,
		"16,384 independent trivial tasks submitted by the caller: per-task overhead"))
	RegisterWorkload(treeWorkload("spawn", "Spawn", spawnTree,
		"one root task spawns 16,383 trivial tasks from inside itself: per-task overhead of spawning"))
	RegisterWorkload(treeWorkload("uniform", "Uniform", uniformTree,
		"4,096 tasks of 2 µs each submitted by the caller: balanced CPU-bound throughput"))
	RegisterWorkload(treeWorkload("forkjoin", "ForkJoin", forkJoinTree,
		"binary spawn tree of 32,767 trivial nodes, continuation joins: spawn overhead and balance"))
	RegisterWorkload(treeWorkload("irregular", "Irregular", irregularTree,
		"32,768-node random spawn tree, heavy-tailed branching (≤64) and costs (Pareto α=1.3 from 100 ns, cap 1 ms)"))
	registerExamples()
	registerUTS()
}

// treeWorkload adapts a task tree to the harness: every system that can
// express it runs the same tasks.
func treeWorkload(name, bench string, tree func() *workload.Tree, doc string) *Workload {
	return &Workload{
		Name: name, Bench: bench, Doc: doc,
		Tasks: func() int { return tree().N() },
		// count=join, spawn=split and spawn=worklist are the tree searches' (uts.go):
		// the task trees count through their own joins and have no
		// subtree to search in one packet.
		SupportsPolicy: func(p system.Policy) bool { return !p.JoinCount && !p.Split && !p.Worklist },
		Peers: func() []string {
			var out []string
			nested := tree().Nested()
			for _, p := range system.Peers() {
				if k, err := system.Lookup(p); err == nil && (k.Nested || !nested) {
					out = append(out, p)
				}
			}
			return out
		},
		New: func(t Target, workers int, extra float64) (Runner, error) {
			tr := tree()
			in := workload.NewInstance(tr, extra)
			ex, err := NewExec(t, workers, tr.N(), tr.Nested(), in.Run)
			if err != nil {
				return nil, err
			}
			return &treeRunner{in: in, ex: ex}, nil
		},
	}
}

// NewExec builds the executor of a target.
func NewExec(t Target, workers, n int, nested bool, body system.Body) (system.Exec, error) {
	if t.System == system.WSched {
		return system.NewWSched(t.Policy, workers, n, nested, body)
	}
	k, err := system.Lookup(t.System)
	if err != nil {
		return nil, err
	}
	if nested && !k.Nested {
		return nil, fmt.Errorf("%s cannot run spawning workloads", t.System)
	}
	return k.New(workers, n, nested, body)
}

type treeRunner struct {
	in *workload.Instance
	ex system.Exec
}

func (r *treeRunner) Reset() { r.in.Reset() }

func (r *treeRunner) Op() error {
	if err := r.ex.Run(r.in.Tree().Roots); err != nil {
		return err
	}
	return r.in.Verify()
}

func (r *treeRunner) Close() error { return r.ex.Close() }
