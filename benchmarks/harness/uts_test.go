package harness

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/wsched/wsched/benchmarks/system"
	"github.com/wsched/wsched/internal/watchdog"
)

// Every target of the tree searches searches the small trees, each
// operation checked against the sequential count, in an interleaved
// matrix at 1 and 2 workers; the report has the table and the targets.
func TestUTSWorkloads(t *testing.T) {
	defer watchdog.Start(t, 3*time.Minute)()
	require.NoError(t, SetUTS(UTSOptions{Small: true}))
	defer SetUTS(UTSOptions{})
	var cfgs []Config
	for _, name := range []string{"utsgeo", "utsbin"} {
		wl, err := LookupWorkload(name)
		require.NoError(t, err)
		assert.True(t, strings.HasSuffix(wl.Bench, "Small"), wl.Bench)
		for _, workers := range []int{1, 2} {
			for _, spec := range []string{"default", "spawn=inline", "count=join", "spawn=inline+count=join", "spawn=split", "spawn=worklist"} {
				p, err := system.ParsePolicy(spec)
				require.NoError(t, err)
				cfgs = append(cfgs, Config{Workload: wl, Target: Target{System: system.WSched, Policy: p}, Workers: workers})
			}
			for _, peer := range wl.Peers() {
				cfgs = append(cfgs, Config{Workload: wl, Target: Target{System: peer}, Workers: workers})
			}
		}
	}
	rs, err := RunMatrix(cfgs, quickOpts)
	require.NoError(t, err)
	set := NewSet(rs)
	var b bytes.Buffer
	require.True(t, WriteUTSTable(&b, set))
	WriteTargets(&b, CheckUTSTargets(set))
	out := b.String()
	for _, want := range []string{"### UTSGeoSmall (63914 nodes)", "### UTSBinSmall (94577 nodes)", "efficiency w2",
		"wsched/spawn=inline+count=join", "pond",
		"UTSBinSmall workers=2: wsched/default efficiency T_seq/(2·T_par) ≥ 0.95",
		"UTSGeoSmall workers=2: wsched/spawn=inline faster than goroutines with a depth cutoff (waitgroup)",
		"UTSGeoSmall workers=1: wsched/count=join ≤ 25 ns per node over seq"} {
		assert.Contains(t, out, want)
	}
	t.Log(out)
}

func TestUTSBenchNames(t *testing.T) {
	assert.Equal(t, "UTSGeo", utsBench("utsgeo", UTSOptions{}))
	assert.Equal(t, "UTSBin", utsBench("utsbin", UTSOptions{Rounds: 1}))
	assert.Equal(t, "UTSBinSmallG2", utsBench("utsbin", UTSOptions{Small: true, Rounds: 2}))
	assert.Error(t, SetUTS(UTSOptions{Rounds: -1}))
	for name, want := range map[string]float64{"UTSGeo/sys=seq/workers=1": 4130071, "UTSBinG2/sys=seq/workers=2": 4112897,
		"UTSGeoSmallG12/sys=seq/workers=1": 63914, "UTSBinSmall/sys=pond/workers=1": 94577} {
		n, ok := utsNodes(name)
		assert.True(t, ok, name)
		assert.Equal(t, want, n, name)
	}
	_, ok := utsNodes("Fanout/sys=seq/workers=1")
	assert.False(t, ok)
	// The task trees run only count=worker.
	wl, err := LookupWorkload("forkjoin")
	require.NoError(t, err)
	p, err := system.ParsePolicy("count=join")
	require.NoError(t, err)
	assert.False(t, wl.SupportsPolicy(p))
	for _, spec := range []string{"spawn=split", "spawn=worklist"} {
		p, err = system.ParsePolicy(spec)
		require.NoError(t, err)
		assert.False(t, wl.SupportsPolicy(p), spec)
	}
	assert.True(t, wl.SupportsPolicy(system.DefaultPolicy))
}

// The report's arithmetic on made-up samples of a made-up tree (UTSTest,
// not one of the known trees, so its node count comes from ns/op over
// ns/task): 4 nodes an operation, T_seq
// 400 ns (100 per node), wsched 480 at 1 worker (+20 per node) and 250 at
// 2 (efficiency 0.8), the goroutines 300 at 2.
func TestUTSReportFigures(t *testing.T) {
	var rs []*benchfmt.Result
	add := func(name string, nsop float64) {
		for i := range 6 {
			v := nsop * (1 + float64(i)/1000)
			rs = append(rs, &benchfmt.Result{Name: benchfmt.Name(name), Iters: 1, Values: []benchfmt.Value{
				{Value: v, Unit: UnitNsOp}, {Value: v / 4, Unit: UnitNsTask}, {Value: 8, Unit: UnitAllocsOp}}})
		}
	}
	add("UTSTest/sys=seq/workers=1", 400)
	add("UTSTest/sys=wsched/policy=default/workers=1", 480)
	add("UTSTest/sys=seq/workers=2", 390)
	add("UTSTest/sys=wsched/policy=default/workers=2", 250)
	add("UTSTest/sys=waitgroup/workers=2", 300)
	set := NewSet(rs)
	var b bytes.Buffer
	require.True(t, WriteUTSTable(&b, set))
	WriteTargets(&b, CheckUTSTargets(set))
	out := b.String()
	t.Log(out)
	for _, want := range []string{"### UTSTest (4 nodes)", "+20.", "0.80", "[NOT MET] UTSTest workers=2: wsched/default efficiency",
		"[MET    ] UTSTest workers=2: wsched/default faster than goroutines", "[MET    ] UTSTest workers=1: wsched/default ≤ 25 ns per node over seq — +20.",
		"2 "} {
		assert.Contains(t, out, want)
	}
	// The sequential baseline is no competitor in the targets against the peers.
	var c bytes.Buffer
	WriteTargets(&c, CheckTargets(set))
	assert.NotContains(t, c.String(), "seq (")
}
