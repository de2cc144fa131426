package harness

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/wsched/wsched/benchmarks/system"
	"github.com/wsched/wsched/benchmarks/uts"
)

// The tree searches (package uts): a tree generated while it is searched,
// every node's children derived from the SHA-1 of its state, geometric
// (utsgeo, UTS's T1) and binomial (utsbin, UTS's T3), about 4.1 million
// nodes each. wsched runs a value packet per node, created while the
// search runs, as a user of the public API writes it: children spawned
// with scheduler.Spawn or, under spawn=inline, scheduler.SpawnOrRun; the
// count added up on per-worker counters or, under count=join, through
// joins. Under spawn=split a packet searches its subtree by plain
// search (uts.Tree.Search's, on an explicit stack) and spawns a child
// only when Worker.ShouldSplit says a worker wants work: not a packet per
// node, the way for a packet with work of its own; under spawn=worklist
// a scheduler.Worklist whose body feeds a node's children (the
// sequential loop, split by the library while a worker is idle). Against
// them:
// the fastest sequential search (Sequential, the baseline T_seq of the
// efficiency), the sequential recursion (SequentialRec), goroutines and
// errgroup with a depth cutoff (the fastest sequential search below it),
// and the pools with a task per node.

// Sequential is the name of the tree searches' baseline target: the
// fastest sequential search here (uts.Sequential: depth-first on an
// explicit stack, each child computed in its place), no scheduler.
// SequentialRec is plain recursion (uts.Recursive), 10-13% slower.
// The tree workloads list both among their peers; neither is a competitor
// (CheckTargets skips them).
const (
	Sequential    = "seq"
	SequentialRec = "seq-rec"
)

// isBaseline reports whether a target label names a tree search's
// sequential baseline.
func isBaseline(label string) bool { return label == Sequential || label == SequentialRec }

// UTSOptions choose the trees of the utsgeo and utsbin workloads.
type UTSOptions struct {
	// Small searches T1S and T3S (64 and 95 thousand nodes) instead of T1
	// and T3 (4.1 million each): tests and -quick.
	Small bool
	// Rounds is the SHA-1s computed per node (UTS's -g); 0 means 1, as in
	// UTS.
	Rounds int
}

var (
	utsMu   sync.Mutex
	utsOpts UTSOptions
	utsWant = map[uts.Params]int64{} // node counts, by tree
)

// SetUTS chooses the trees of the utsgeo and utsbin workloads, and their
// benchmark names: UTSGeo and UTSBin for T1 and T3 as UTS defines them,
// with "Small" for the small trees and "G" and the rounds for more than
// one SHA-1 per node (UTSGeoG2), so that results of different trees never
// share a name. Call it before building configurations.
func SetUTS(o UTSOptions) error {
	if o.Rounds < 0 || o.Rounds > 64 {
		return fmt.Errorf("harness: UTS rounds must be 1..64, got %d", o.Rounds)
	}
	utsMu.Lock()
	utsOpts = o
	utsMu.Unlock()
	workloadsMu.Lock()
	defer workloadsMu.Unlock()
	for _, name := range []string{"utsgeo", "utsbin"} {
		if w, ok := workloads[name]; ok {
			w.Bench = utsBench(name, o)
		}
	}
	return nil
}

// utsBench is the benchmark name of workload name's trees under o.
func utsBench(name string, o UTSOptions) string {
	b := map[string]string{"utsgeo": "UTSGeo", "utsbin": "UTSBin"}[name]
	if o.Small {
		b += "Small"
	}
	if o.Rounds > 1 {
		b += "G" + strconv.Itoa(o.Rounds)
	}
	return b
}

// utsTree returns the tree of workload name under the current options and
// its node count, computed by a sequential search the first time (half a
// second for the full trees).
func utsTree(name string) (*uts.Tree, int64, error) {
	utsMu.Lock()
	defer utsMu.Unlock()
	p := map[bool]map[string]uts.Params{
		false: {"utsgeo": uts.T1, "utsbin": uts.T3},
		true:  {"utsgeo": uts.T1S, "utsbin": uts.T3S},
	}[utsOpts.Small][name]
	p.Rounds = utsOpts.Rounds
	t, err := uts.New(p)
	if err != nil {
		return nil, 0, err
	}
	want, ok := utsWant[p]
	if !ok {
		want = t.Count()
		utsWant[p] = want
	}
	return t, want, nil
}

// utsPeers are the targets besides wsched that search the trees.
var utsPeers = []string{Sequential, SequentialRec, "waitgroup", "errgroup", "chanpool", "ants", "pond"}

func registerUTS() {
	for _, w := range []struct{ name, doc string }{
		{"utsgeo", "UTS T1: a geometric tree generated while searched (SHA-1 per node), 4,130,071 nodes, depth 10; a value packet per node"},
		{"utsbin", "UTS T3: a binomial tree generated while searched (SHA-1 per node), 4,112,897 nodes, depth 1,572, very unbalanced; a value packet per node"},
	} {
		name := w.name
		RegisterWorkload(&Workload{
			Name: name, Bench: utsBench(name, UTSOptions{}), Doc: w.doc,
			Tasks: func() int {
				_, n, err := utsTree(name)
				if err != nil {
					return 0
				}
				return int(n)
			},
			Peers: func() []string { return utsPeers },
			New: func(t Target, workers int, extra float64) (Runner, error) {
				if extra != 0 {
					return nil, fmt.Errorf("%s: no planted slowdown", name)
				}
				tr, want, err := utsTree(name)
				if err != nil {
					return nil, err
				}
				ex, err := newUTSExec(t, tr, workers)
				if err != nil {
					return nil, err
				}
				return &utsRunner{ex: ex, want: want}, nil
			},
		})
	}
}

// newUTSExec builds target t's search of tr with workers workers.
func newUTSExec(t Target, tr *uts.Tree, workers int) (uts.Exec, error) {
	if workers < 1 {
		return nil, fmt.Errorf("workers must be >= 1, got %d", workers)
	}
	switch t.System {
	case system.WSched:
		cfg, err := t.Policy.Config(workers)
		if err != nil {
			return nil, err
		}
		return uts.WSched(tr, uts.WSchedOptions{Config: cfg, Inline: t.Policy.Inline, Join: t.Policy.JoinCount, Split: t.Policy.Split, Worklist: t.Policy.Worklist})
	case Sequential:
		return uts.Sequential(tr), nil
	case SequentialRec:
		return uts.Recursive(tr), nil
	case "waitgroup":
		return uts.Goroutines(tr, uts.DefaultCutoff(workers)), nil
	case "errgroup":
		return uts.Errgroup(tr, uts.DefaultCutoff(workers)), nil
	case "chanpool":
		return uts.ChanPool(tr, workers)
	case "ants":
		return uts.Ants(tr, workers)
	case "pond":
		return uts.Pond(tr, workers)
	}
	return nil, fmt.Errorf("the tree searches do not run on %s", t.System)
}

type utsRunner struct {
	ex   uts.Exec
	want int64
}

func (r *utsRunner) Reset() {}

func (r *utsRunner) Op() error {
	n, err := r.ex.Search()
	if err != nil {
		return err
	}
	if n != r.want {
		return fmt.Errorf("counted %d nodes, the sequential search %d", n, r.want)
	}
	return nil
}

func (r *utsRunner) Close() error { return r.ex.Close() }
