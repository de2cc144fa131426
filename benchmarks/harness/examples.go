package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/wsched/wsched/benchmarks/batchbase"
	"github.com/wsched/wsched/benchmarks/system"
	"github.com/wsched/wsched/examples/batch"
	"github.com/wsched/wsched/examples/gcmark"
	"github.com/wsched/wsched/examples/gcmark/heapdump"
	"github.com/wsched/wsched/examples/prepare"
)

// The three example workloads (examples/): staged jobs that only a staged
// scheduler expresses directly. No peer has stages, designated work or
// sentinels, so gcmark and prepare run on wsched alone; batch also runs as
// the errgroup program most Go code would be (batchbase.Errgroup).

// Sizes of the example workloads in the harness, chosen so that one
// operation takes tens of milliseconds here.
const (
	// GCMarkScale: 512 Ki objects, about 1.6 million reference slots.
	GCMarkScale = 0.25
	// PrepareScale: the luindex model at full size (≈ 4.3 ms of Prepare
	// work, 2.7 ms of it one packet, and ≈ 15 ms of Closure work).
	PrepareScale = 1.0
	// BatchSubtree: the job parses $GOROOT/src/go (about 325 files), not
	// all of $GOROOT/src, to keep an operation near 100 ms.
	BatchSubtree = "go"
)

var (
	gcHeapOnce sync.Once
	gcHeap     *gcmark.Heap
	gcWant     int
)

func gcmarkHeap() (*gcmark.Heap, int) {
	gcHeapOnce.Do(func() {
		gcHeap = gcmark.NewHeap(gcmark.DefaultHeapConfig(GCMarkScale, 1))
		gcWant = gcHeap.MarkSequential().Count()
	})
	return gcHeap, gcWant
}

var (
	batchOnce sync.Once
	batchRoot string
	batchWant batch.Totals
	batchErr  error
)

func batchReference() (string, batch.Totals, error) {
	batchOnce.Do(func() {
		batchRoot = filepath.Join(batch.DefaultRoot(), BatchSubtree)
		if batchErr = batch.Warm(batchRoot); batchErr != nil {
			return
		}
		var r batch.Result
		r, batchErr = batch.Sequential(batchRoot)
		batchWant = r.Totals
	})
	return batchRoot, batchWant, batchErr
}

// wakeOnly accepts policies that set nothing but the wake policy (the
// prepare example fixes MMTk's other worker settings).
func wakeOnly(p system.Policy) bool {
	return p.Steal == 0 && p.StealLimit == 0 && p.Batch == 0 && p.Spins < 0 && p.Local == 0 && p.Take == 0
}

// GCMarkDumpEnv names the environment variable that, set to a Go heap
// dump (examples/gcmark/heapdump makes them), adds the workload
// gcmark-dump: the gcmark workload on that real heap, beside the synthetic
// one. A dump is hundreds of megabytes, made on demand: without the
// variable the workload does not exist.
const GCMarkDumpEnv = "GCMARK_DUMP"

var (
	dumpHeapOnce sync.Once
	dumpHeap     *gcmark.Heap
	dumpWant     int
	dumpErr      error
)

func gcmarkDumpHeap() (*gcmark.Heap, int, error) {
	dumpHeapOnce.Do(func() {
		dumpHeap, dumpErr = heapdump.LoadHeap(os.Getenv(GCMarkDumpEnv))
		if dumpErr == nil {
			dumpWant = dumpHeap.MarkSequential().Count()
		}
	})
	return dumpHeap, dumpWant, dumpErr
}

// newGCMarkRunner is the gcmark workload's Runner on heap h (want objects
// live): a baseline for a peer, else the Marker with t's policy.
func newGCMarkRunner(t Target, workers int, h *gcmark.Heap, want int) (Runner, error) {
	if t.System != system.WSched {
		kind, err := gcmark.ParseBaseline(t.System)
		if err != nil || kind == gcmark.SequentialDFSAtomic {
			return nil, fmt.Errorf("gcmark does not run on %s", t.System)
		}
		b, err := gcmark.NewBaseline(h, kind, gcmark.BaselineOptions{Workers: workers})
		if err != nil {
			return nil, err
		}
		return &gcmarkRunner{m: b, close: func() error { return nil }, want: int64(want)}, nil
	}
	cfg, err := t.Policy.Config(workers)
	if err != nil {
		return nil, err
	}
	m, err := gcmark.NewMarker(h, gcmark.Options{Scheduler: cfg})
	if err != nil {
		return nil, err
	}
	return &gcmarkRunner{m: m, close: m.Close, want: int64(want)}, nil
}

// registerExamples adds the example workloads (after the task trees).
func registerExamples() {
	if os.Getenv(GCMarkDumpEnv) != "" {
		RegisterWorkload(&Workload{
			Name: "gcmark-dump", Bench: "GCMarkDump",
			Doc:   "examples/gcmark on the real heap of the Go heap dump $" + GCMarkDumpEnv + " (examples/gcmark/heapdump), against the same baselines as gcmark",
			Peers: func() []string { return GCMarkPeers },
			New: func(t Target, workers int, extra float64) (Runner, error) {
				h, want, err := gcmarkDumpHeap()
				if err != nil {
					return nil, err
				}
				return newGCMarkRunner(t, workers, h, want)
			},
		})
	}
	RegisterWorkload(&Workload{
		Name: "gcmark", Bench: "GCMark",
		Doc: "examples/gcmark: parallel mark of a 512 Ki-object heap built depth-first (5% long-range references), stages Prepare → Closure → Release; " +
			"against the sequential depth-first and breadth-first markers and a goroutine marker (whole cycles, the same root work)",
		Peers: func() []string { return GCMarkPeers },
		New: func(t Target, workers int, extra float64) (Runner, error) {
			h, want := gcmarkHeap()
			return newGCMarkRunner(t, workers, h, want)
		},
	})
	RegisterWorkload(&Workload{
		Name: "prepare", Bench: "Prepare",
		Doc: "examples/prepare: the luindex Prepare stage (per-mutator packets, designated packets, one 26,845-slot packet) then Closure; " +
			"one AddAll, heavy packet in bulk, MMTk worker settings (FIFO, batch 32, steal one); only the wake policy varies",
		Peers:          func() []string { return nil },
		SupportsPolicy: wakeOnly,
		New: func(t Target, workers int, extra float64) (Runner, error) {
			if t.System != system.WSched {
				return nil, fmt.Errorf("prepare runs on wsched only")
			}
			cfg, err := t.Policy.Config(workers)
			if err != nil {
				return nil, err
			}
			c := prepare.Configuration{Name: t.Policy.Spec, Title: "harness", Wake: cfg.Wake, Heavy: prepare.HeavyInBulk}
			r, err := prepare.NewRunner(c, prepare.Options{Workers: workers, Model: prepare.DefaultModel(PrepareScale, 1)})
			if err != nil {
				return nil, err
			}
			return &prepareRunner{r: r}, nil
		},
	})
	RegisterWorkload(&Workload{
		Name: "batch", Bench: "Batch",
		Doc:   "examples/batch: list → parse → aggregate over the .go files of $GOROOT/src/go (go/parser), against errgroup",
		Peers: func() []string { return []string{"errgroup"} },
		New: func(t Target, workers int, extra float64) (Runner, error) {
			root, want, err := batchReference()
			if err != nil {
				return nil, err
			}
			switch t.System {
			case system.WSched:
				cfg, err := t.Policy.Config(workers)
				if err != nil {
					return nil, err
				}
				j, err := batch.NewJob(root, cfg)
				if err != nil {
					return nil, err
				}
				return &batchRunner{op: j.Run, close: j.Close, want: want}, nil
			case "errgroup":
				op := func(ctx context.Context) (batch.Result, error) { return batchbase.Errgroup(ctx, root, workers) }
				return &batchRunner{op: op, close: func() error { return nil }, want: want}, nil
			}
			return nil, fmt.Errorf("batch does not run on %s", t.System)
		},
	})
}

// GCMarkPeers are gcmark's peers: its baselines (examples/gcmark
// BaselineKind names), the markers a collector has without wsched. They
// run nothing but gcmark.
var GCMarkPeers = []string{gcmark.SequentialDFS.String(), gcmark.SequentialBFS.String(), gcmark.Goroutines.String()}

type gcmarkRunner struct {
	m interface {
		Mark(context.Context) (gcmark.Result, error)
	}
	close func() error
	want  int64
}

func (r *gcmarkRunner) Reset() {}

func (r *gcmarkRunner) Op() error {
	res, err := r.m.Mark(context.Background())
	if err != nil {
		return err
	}
	if res.Marked != r.want {
		return fmt.Errorf("gcmark: marked %d objects, the sequential BFS %d", res.Marked, r.want)
	}
	return nil
}

func (r *gcmarkRunner) Close() error { return r.close() }

type prepareRunner struct{ r *prepare.Runner }

func (r *prepareRunner) Reset() {}

func (r *prepareRunner) Op() error {
	_, err := r.r.Cycle(context.Background())
	return err
}

func (r *prepareRunner) Close() error { return r.r.Close() }

type batchRunner struct {
	op    func(context.Context) (batch.Result, error)
	close func() error
	want  batch.Totals
}

func (r *batchRunner) Reset() {}

func (r *batchRunner) Op() error {
	res, err := r.op(context.Background())
	if err != nil {
		return err
	}
	if res.Totals != r.want {
		return fmt.Errorf("batch: totals %+v, sequential %+v", res.Totals, r.want)
	}
	return nil
}

func (r *batchRunner) Close() error { return r.close() }
