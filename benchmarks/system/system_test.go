package system_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/wsched/wsched/benchmarks/system"
	"github.com/wsched/wsched/benchmarks/workload"
	"github.com/wsched/wsched/internal/watchdog"
	"github.com/wsched/wsched/scheduler"
)

// Every system runs every tree it can express, each task exactly once,
// several runs in a row on the same executor.
func TestSystemsRunEveryTask(t *testing.T) {
	trees := []*workload.Tree{
		workload.Fanout(3000),
		workload.Spawn(3000),
		workload.ForkJoin(10),
		workload.Irregular(workload.IrregularParams{N: 3000, Seed: 7, MinCost: 0, Alpha: 1.3, MaxCost: time.Microsecond, MaxFanout: 64}),
	}
	for _, name := range system.Names() {
		k, err := system.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trees {
			for _, workers := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/%s/w%d", name, tr.Name, workers), func(t *testing.T) {
					if tr.Nested() && !k.Nested {
						if _, err := k.New(workers, tr.N(), true, nil); err == nil {
							t.Fatalf("%s accepted a spawning workload it says it cannot run", name)
						}
						t.Skip("cannot express spawning workloads")
					}
					runThrice(t, tr, func(body system.Body) (system.Exec, error) {
						return k.New(workers, tr.N(), tr.Nested(), body)
					})
				})
			}
		}
	}
}

// The wsched executor with spawn=inline (Worker.SpawnOrRun) runs every task
// of the spawning trees exactly once too.
func TestWSchedInlineRunsEveryTask(t *testing.T) {
	p, err := system.ParsePolicy("spawn=inline")
	if err != nil || !p.Inline {
		t.Fatalf("ParsePolicy(spawn=inline) = %+v, %v", p, err)
	}
	for _, tr := range []*workload.Tree{
		workload.Spawn(3000),
		workload.ForkJoin(12),
		workload.Irregular(workload.IrregularParams{N: 3000, Seed: 9, MinCost: 0, Alpha: 1.3, MaxCost: time.Microsecond, MaxFanout: 64}),
	} {
		for _, workers := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/w%d", tr.Name, workers), func(t *testing.T) {
				runThrice(t, tr, func(body system.Body) (system.Exec, error) {
					return system.NewWSched(p, workers, tr.N(), tr.Nested(), body)
				})
			})
		}
	}
}

// The wsched executor with add=copy (roots by BulkAdd, not AddSlice) runs
// every task exactly once too.
func TestWSchedCopyAddRunsEveryTask(t *testing.T) {
	p, err := system.ParsePolicy("add=copy")
	if err != nil || !p.CopyAdd {
		t.Fatalf("ParsePolicy(add=copy) = %+v, %v", p, err)
	}
	if d, _ := system.ParsePolicy("default"); d.CopyAdd {
		t.Fatal("the default policy copies its roots")
	}
	for _, tr := range []*workload.Tree{workload.Fanout(3000), workload.Uniform(500, 0), workload.ForkJoin(10)} {
		for _, workers := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/w%d", tr.Name, workers), func(t *testing.T) {
				runThrice(t, tr, func(body system.Body) (system.Exec, error) {
					return system.NewWSched(p, workers, tr.N(), tr.Nested(), body)
				})
			})
		}
	}
}

// runThrice builds an executor for tr with newEx and runs tr on it three
// times in a row, checking after each run that every task ran exactly once.
func runThrice(t *testing.T, tr *workload.Tree, newEx func(system.Body) (system.Exec, error)) {
	t.Helper()
	stop := watchdog.Start(t, 60*time.Second)
	defer stop()
	in := workload.NewInstance(tr, 0)
	in.CountLeaves()
	ex, err := newEx(in.Run)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	for run := range 3 {
		in.Reset()
		if err := ex.Run(tr.Roots); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if err := in.Verify(); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
}

func TestBadWorkers(t *testing.T) {
	for _, name := range system.Names() {
		k, _ := system.Lookup(name)
		if ex, err := k.New(0, 10, false, func(system.Spawner, int32) {}); err == nil {
			ex.Close()
			t.Errorf("%s: New with 0 workers succeeded", name)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	good := []string{"default", "wake=all", "steal=batch:8", "batch=4+spins=16+order=fifo", "wake=searcher+steal=one", "spawn=inline", "spawn=queue+take=fixed", "parkspin=off", "parkspin=200us+spins=4", "add=copy", "add=slice+spawn=inline", "take=guided", "take=fair"}
	for _, s := range good {
		if _, err := system.ParsePolicy(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	bad := []string{"wake", "wake=some", "steal=batch:0", "steal=batch:129", "batch=0", "spins=-1", "order=random", "color=red", "a/b", "wake=all wake=one", "spawn=eager", "parkspin=0s", "parkspin=-1ms", "parkspin=2s", "parkspin=fast", "add=lend", "add=", "take=default", "take=greedy"}
	for _, s := range bad {
		if _, err := system.ParsePolicy(s); err == nil {
			t.Errorf("%q: accepted", s)
		}
	}
	if _, err := system.ParsePolicies("default,default"); err == nil {
		t.Error("duplicate policy accepted")
	}
	p, err := system.ParsePolicy("wake=n+steal=batch:8+batch=4+spins=16+order=fifo")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.Config(3, "s")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workers != 3 || cfg.Wake.String() != "n" || cfg.Steal.String() != "batch:8" || cfg.BucketBatch != 4 || cfg.Spins != 16 || !cfg.LocalFIFO {
		t.Errorf("config %+v does not match the policy", cfg)
	}
	for spec, want := range map[string]scheduler.TakePolicy{"default": scheduler.TakeDefault, "take=fixed": scheduler.TakeFixed, "take=fair": scheduler.TakeFair, "take=guided": scheduler.TakeGuided} {
		p, err := system.ParsePolicy(spec)
		if err != nil {
			t.Fatal(err)
		}
		if cfg, err := p.Config(2, "s"); err != nil || cfg.Take != want {
			t.Errorf("%s: Take %v (%v), want %v", spec, cfg.Take, err, want)
		}
	}
	for spec, want := range map[string]time.Duration{"default": 0, "parkspin=off": scheduler.NoParkSpin, "parkspin=200us": 200 * time.Microsecond} {
		p, err := system.ParsePolicy(spec)
		if err != nil {
			t.Fatal(err)
		}
		if cfg, err := p.Config(1, "s"); err != nil || cfg.ParkSpin != want {
			t.Errorf("%s: ParkSpin %v, %v; want %v", spec, cfg.ParkSpin, err, want)
		}
	}
}

// wsched's SpawnAll lends a long list of adjacent children to the stage's
// bucket (AddSlice): the spawn tree's 2,999 children come out of bucket
// takes, not the spawning worker's stack; with add=copy only the root does.
func TestWSchedSpawnAllLends(t *testing.T) {
	tr := workload.Spawn(3000)
	for _, spec := range []string{"default", "add=copy"} {
		p, err := system.ParsePolicy(spec)
		if err != nil {
			t.Fatal(err)
		}
		in := workload.NewInstance(tr, 0)
		in.CountLeaves()
		ex, err := system.NewWSched(p, 2, tr.N(), tr.Nested(), in.Run)
		if err != nil {
			t.Fatal(err)
		}
		in.Reset()
		if err := ex.Run(tr.Roots); err != nil {
			t.Fatal(err)
		}
		if err := in.Verify(); err != nil {
			t.Fatal(err)
		}
		st := ex.(interface{ Scheduler() *scheduler.Scheduler }).Scheduler().Stats()
		ex.Close()
		var fromBucket uint64
		for _, w := range st.Workers {
			fromBucket += w.BucketPackets
		}
		want := uint64(tr.N()) // the root and its children
		if spec == "add=copy" {
			want = 1
		}
		if fromBucket != want {
			t.Errorf("%s: %d packets came from bucket takes, want %d", spec, fromBucket, want)
		}
	}
}
