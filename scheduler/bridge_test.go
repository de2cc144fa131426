package scheduler

import (
	"bytes"
	"runtime/pprof"
	rtrace "runtime/trace"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of the opt-in bridges to Go's own tools: Config.PprofLabels (a
// "wsched_stage" goroutine label per stage, so CPU profiles split by stage)
// and Config.RuntimeTrace (a runtime/trace task per cycle and a region per
// packet, named by its type, so `go tool trace` shows them). Both are off
// by default.

// labelProbe records, while it runs, the pprof labels of its own goroutine
// as the goroutine profile shows them (the profile a CPU profile's labels
// come from: the running goroutine's label set).
type labelProbe struct {
	mu  *sync.Mutex
	got map[StageID]string
}

func (p labelProbe) Run(w *Worker) error {
	// One probe at a time in WriteTo, so that the record whose stack holds
	// both this method and WriteTo is this goroutine's (another probe may be
	// in Run, waiting for the lock).
	p.mu.Lock()
	defer p.mu.Unlock()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return err
	}
	// debug=1 groups goroutines by stack and labels, one record per group,
	// records separated by blank lines.
	labels := "(no record)"
	for _, rec := range strings.Split(buf.String(), "\n\n") {
		if !strings.Contains(rec, "labelProbe.Run") || !strings.Contains(rec, "runtime/pprof.(*Profile).WriteTo") {
			continue
		}
		labels = ""
		for _, line := range strings.Split(rec, "\n") {
			if l, ok := strings.CutPrefix(line, "# labels: "); ok {
				labels = l
			}
		}
	}
	p.got[stageOf(w)] = labels
	return nil
}

func TestPprofLabelsPerStage(t *testing.T) {
	names := []string{"Unconstrained", "alpha", "beta"}
	for _, on := range []bool{false, true} {
		s := newSched(t, Config{Workers: 2, Stages: names[1:], PprofLabels: on})
		probe := labelProbe{mu: new(sync.Mutex), got: map[StageID]string{}}
		for _, st := range []StageID{Unconstrained, 1, 2} {
			require.NoError(t, s.Add(probe, st))
		}
		require.NoError(t, runCycle(t, s))
		for _, st := range []StageID{Unconstrained, 1, 2} {
			want := `{"wsched_stage":"` + names[st] + `"}`
			if !on {
				want = ""
			}
			assert.Equal(t, want, probe.got[st], "PprofLabels=%v: stage %d packet's labels", on, st)
		}
	}
}

// regionProbe is a packet whose name appears in a runtime trace only as a
// region name (it is no Go identifier).
type regionProbe struct{}

func (regionProbe) Run(*Worker) error  { return nil }
func (regionProbe) PacketName() string { return "region probe 4f1c" }

func TestRuntimeTraceTaskAndRegions(t *testing.T) {
	for _, on := range []bool{false, true} {
		var buf bytes.Buffer
		if err := rtrace.Start(&buf); err != nil {
			t.Skipf("runtime/trace: %v", err)
		}
		s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, RuntimeTrace: on})
		var err error
		for range 3 {
			if err = s.Add(regionProbe{}); err != nil {
				break
			}
		}
		if err == nil {
			err = runCycle(t, s)
		}
		rtrace.Stop()
		require.NoError(t, err)
		// The trace's string table holds task and region names.
		for _, name := range []string{"wsched.cycle", "region probe 4f1c"} {
			assert.Equal(t, on, bytes.Contains(buf.Bytes(), []byte(name)), "RuntimeTrace=%v: %q in the runtime trace", on, name)
		}
	}
}
