package scheduler

import (
	"bytes"
	"runtime/pprof"
	rtrace "runtime/trace"
	"strings"
	"sync"
	"testing"
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

func (p labelProbe) Run(w *Worker) {
	// One probe at a time in WriteTo, so that the record whose stack holds
	// both this method and WriteTo is this goroutine's (another probe may be
	// in Run, waiting for the lock).
	p.mu.Lock()
	defer p.mu.Unlock()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		panic(err)
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
	p.got[w.Stage()] = labels
}

func TestPprofLabelsPerStage(t *testing.T) {
	for _, on := range []bool{false, true} {
		s := newSched(t, Config{Workers: 2, Stages: []string{"alpha", "beta"}, PprofLabels: on})
		probe := labelProbe{mu: new(sync.Mutex), got: map[StageID]string{}}
		for _, st := range []StageID{Unconstrained, 1, 2} {
			if err := s.Add(st, probe); err != nil {
				t.Fatal(err)
			}
		}
		if err := runCycle(t, s); err != nil {
			t.Fatal(err)
		}
		for _, st := range []StageID{Unconstrained, 1, 2} {
			got := probe.got[st]
			want := `{"wsched_stage":"` + s.StageName(st) + `"}`
			if !on {
				want = ""
			}
			if got != want {
				t.Errorf("PprofLabels=%v: stage %d packet ran with labels %q, want %q", on, st, got, want)
			}
		}
	}
}

// regionProbe is a packet whose name appears in a runtime trace only as a
// region name (it is no Go identifier).
type regionProbe struct{}

func (regionProbe) Run(*Worker)        {}
func (regionProbe) PacketName() string { return "region probe 4f1c" }

func TestRuntimeTraceTaskAndRegions(t *testing.T) {
	for _, on := range []bool{false, true} {
		var buf bytes.Buffer
		if err := rtrace.Start(&buf); err != nil {
			t.Skipf("runtime/trace: %v", err)
		}
		s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, RuntimeTrace: on})
		for range 3 {
			if err := s.Add(1, regionProbe{}); err != nil {
				rtrace.Stop()
				t.Fatal(err)
			}
		}
		err := runCycle(t, s)
		rtrace.Stop()
		if err != nil {
			t.Fatal(err)
		}
		// The trace's string table holds task and region names.
		for _, name := range []string{"wsched.cycle", "region probe 4f1c"} {
			if got := bytes.Contains(buf.Bytes(), []byte(name)); got != on {
				t.Errorf("RuntimeTrace=%v: %q in the runtime trace: %v", on, name, got)
			}
		}
	}
}
