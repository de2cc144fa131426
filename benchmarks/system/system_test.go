package system_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsched/wsched/benchmarks/system"
	"github.com/wsched/wsched/benchmarks/workload"
	"github.com/wsched/wsched/internal/watchdog"
	"github.com/wsched/wsched/scheduler"
)

// Every scheduler, pool and watchdog a test starts is stopped before it
// returns. IgnoreCurrent: ants starts its default pool's two goroutines
// when the package is initialised, before any test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.IgnoreCurrent()) }

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
		require.NoError(t, err)
		for _, tr := range trees {
			for _, workers := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/%s/w%d", name, tr.Name, workers), func(t *testing.T) {
					if tr.Nested() && !k.Nested {
						ex, err := k.New(workers, tr.N(), true, nil)
						if err == nil {
							ex.Close()
						}
						require.Error(t, err, "%s accepted a spawning workload it says it cannot run", name)
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

// The wsched executor with spawn=inline (scheduler.SpawnOrRun) runs every task
// of the spawning trees exactly once too.
func TestWSchedInlineRunsEveryTask(t *testing.T) {
	p, err := system.ParsePolicy("spawn=inline")
	require.NoError(t, err)
	require.True(t, p.Inline, "ParsePolicy(spawn=inline) = %+v", p)
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

// The wsched executor with add=copy (roots copied by AddAll, not lent) runs
// every task exactly once too.
func TestWSchedCopyAddRunsEveryTask(t *testing.T) {
	p, err := system.ParsePolicy("add=copy")
	require.NoError(t, err)
	require.True(t, p.CopyAdd, "ParsePolicy(add=copy) = %+v", p)
	d, err := system.ParsePolicy("default")
	require.NoError(t, err)
	require.False(t, d.CopyAdd, "the default policy copies its roots")
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
	require.NoError(t, err)
	defer ex.Close()
	for run := range 3 {
		in.Reset()
		require.NoError(t, ex.Run(tr.Roots), "run %d", run)
		require.NoError(t, in.Verify(), "run %d", run)
	}
}

func TestBadWorkers(t *testing.T) {
	for _, name := range system.Names() {
		k, _ := system.Lookup(name)
		ex, err := k.New(0, 10, false, func(system.Spawner, int32) {})
		if err == nil {
			ex.Close()
		}
		assert.Error(t, err, "%s: New with 0 workers succeeded", name)
	}
}

func TestParsePolicy(t *testing.T) {
	good := []string{"default", "wake=all", "steal=batch:8", "batch=4+spins=16+order=fifo", "wake=searcher+steal=one", "spawn=inline", "spawn=queue+take=fixed", "parkspin=off", "parkspin=200us+spins=4", "add=copy", "add=slice+spawn=inline", "take=guided", "take=fair",
		"wake=wake-n", "steal=steal-half", "order=local-lifo", "order=local-private", "take=take-fixed",
		"count=join", "count=worker", "spawn=inline+count=join", "spawn=split", "spawn=worklist"}
	for _, s := range good {
		_, err := system.ParsePolicy(s)
		assert.NoError(t, err, s)
	}
	bad := []string{"wake", "wake=some", "steal=batch:0", "steal=batch:129", "batch=0", "spins=-1", "order=random", "color=red", "a/b", "wake=all wake=one", "spawn=eager", "parkspin=0s", "parkspin=-1ms", "parkspin=2s", "parkspin=fast", "add=lend", "add=", "take=default", "take=greedy",
		"wake=default", "wake=steal-one", "steal=wake-n", "order=take-fair", "take=local-fifo", "steal=batch:x",
		"count=", "count=atomic"}
	for _, s := range bad {
		_, err := system.ParsePolicy(s)
		assert.Error(t, err, "%q accepted", s)
	}
	_, err := system.ParsePolicies("default,default")
	assert.Error(t, err, "duplicate policy accepted")
	p, err := system.ParsePolicy("wake=n+steal=batch:8+batch=4+spins=16+order=fifo")
	require.NoError(t, err)
	cfg, err := p.Config(3, "s")
	require.NoError(t, err)
	assert.Equal(t, scheduler.Config{Workers: 3, Stages: []string{"s"}, Wake: scheduler.WakeN, Steal: scheduler.StealHalf, StealLimit: 8,
		BucketBatch: 4, Spins: 16, Local: scheduler.LocalFIFO}, cfg)
	// The harness's short names and the scheduler's names of each policy.
	for spec, want := range map[string]scheduler.Config{
		"default":                  {},
		"wake=one":                 {Wake: scheduler.WakeOne},
		"wake=all":                 {Wake: scheduler.WakeAll},
		"wake=n":                   {Wake: scheduler.WakeN},
		"wake=searcher":            {Wake: scheduler.WakeSearcher},
		"wake=wake-searcher":       {Wake: scheduler.WakeSearcher},
		"steal=one":                {Steal: scheduler.StealOne},
		"steal=half":               {Steal: scheduler.StealHalf},
		"steal=steal-one":          {Steal: scheduler.StealOne},
		"steal=batch:64":           {Steal: scheduler.StealHalf, StealLimit: 64},
		"steal=batch:4+steal=half": {Steal: scheduler.StealHalf},
		"take=fixed":               {Take: scheduler.TakeFixed},
		"take=fair":                {Take: scheduler.TakeFair},
		"take=guided":              {Take: scheduler.TakeGuided},
		"order=lifo":               {Local: scheduler.LocalPrivate},
		"order=fifo":               {Local: scheduler.LocalFIFO},
		"order=local-lifo":         {Local: scheduler.LocalLIFO},
		"parkspin=off":             {ParkSpin: system.ParkSpinOff},
		"parkspin=200us":           {ParkSpin: 200 * time.Microsecond},
	} {
		p, err := system.ParsePolicy(spec)
		require.NoError(t, err, spec)
		cfg, err := p.Config(2, "s")
		require.NoError(t, err, spec)
		want.Workers, want.Stages = 2, []string{"s"}
		assert.Equal(t, want, cfg, spec)
		// Every configuration the harness builds is one New accepts.
		s, err := scheduler.New(cfg)
		require.NoError(t, err, spec)
		require.NoError(t, s.Close())
	}
	assert.Negative(t, system.ParkSpinOff, "parkspin=off must be a negative Config.ParkSpin (no poll)")
}

// wsched's SpawnAll lends a long list of adjacent children to the stage's
// bucket (AddAll with Lend): the spawn tree's 2,999 children come out of bucket
// takes, not the spawning worker's stack; with add=copy only the root does.
func TestWSchedSpawnAllLends(t *testing.T) {
	tr := workload.Spawn(3000)
	for _, spec := range []string{"default", "add=copy"} {
		p, err := system.ParsePolicy(spec)
		require.NoError(t, err)
		in := workload.NewInstance(tr, 0)
		in.CountLeaves()
		ex, err := system.NewWSched(p, 2, tr.N(), tr.Nested(), in.Run)
		require.NoError(t, err)
		in.Reset()
		require.NoError(t, ex.Run(tr.Roots))
		require.NoError(t, in.Verify())
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
		assert.Equal(t, want, fromBucket, "%s: packets that came from bucket takes", spec)

	}
}

// TestCommittedSpecsParse: every policy named in the committed result
// files (benchmark names carry "policy=SPEC") still parses, to the
// configuration New accepts, so that their runs can be repeated as
// written.
func TestCommittedSpecsParse(t *testing.T) {
	var files []string
	err := filepath.WalkDir(filepath.Join("..", "results"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".txt") {
			files = append(files, path)
		}
		return err
	})
	if len(files) == 0 {
		t.Skipf("no result files (%v)", err)
	}
	require.NoError(t, err)
	re := regexp.MustCompile(`/policy=([^/\s]+)`)
	specs := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range re.FindAllSubmatch(data, -1) {
			specs[string(m[1])] = true
		}
	}
	require.NotEmpty(t, specs, "no policy=SPEC in %d result files", len(files))
	for spec := range specs {
		p, err := system.ParsePolicy(spec)
		if !assert.NoError(t, err, spec) {
			continue
		}
		cfg, err := p.Config(2, "run")
		require.NoError(t, err, spec)
		s, err := scheduler.New(cfg)
		if assert.NoError(t, err, spec) {
			require.NoError(t, s.Close())
		}
	}
	t.Logf("%d policy specs in %d result files", len(specs), len(files))
}
