package analyze

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/rawtrace"
	"github.com/wsched/wsched/trace/internal/synth"
)

var update = flag.Bool("update", false, "rewrite docs/timeline.svg")

// svgOf draws data and checks that the picture is well-formed XML with an
// <svg> root, and that SVGInfo.Bytes is its size.
func svgOf(t testing.TB, data []byte, opt SVGOptions) (string, SVGInfo) {
	t.Helper()
	var buf bytes.Buffer
	info, err := SVG(&buf, data, opt)
	require.NoError(t, err)
	require.Equal(t, buf.Len(), info.Bytes)
	wellFormed(t, buf.Bytes())
	return buf.String(), info
}

// wellFormed parses the whole document.
func wellFormed(t testing.TB, doc []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "not well-formed XML")
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	require.Equal(t, "svg", root)
}

func count(doc, pattern string) int {
	return len(regexp.MustCompile(pattern).FindAllStringIndex(doc, -1))
}

// twoStages: 3 workers, one cycle; stage A (0-400 µs): worker 0 runs P1
// and P2, worker 1 one long Q and steals R from worker 0, worker 2 sleeps;
// stage B (400-1000 µs): worker 2 runs S, the others sleep. A's lower
// bound is its work over 3 workers, 200 µs (ratio 2); B's is S, 600 µs
// (ratio 1).
func twoStages() []byte {
	r := rawtrace.New(3)
	r.Cycle(0, 1)
	r.Stage(0, 1, "A")
	r.Sample(0, trace.CounterBucketDepth, 1, 3)
	r.Packet(0, 0, 100_000, "P1", "A")
	r.Packet(0, 100_000, 200_000, "P2", "A")
	r.Packet(1, 0, 300_000, "Q", "A")
	r.Packet(1, 300_000, 400_000, "R", "A")
	r.Park(2, 0, 400_000)
	r.Wake(150_000, 2)
	r.Sample(300_000, trace.CounterBucketDepth, 1, 0)
	r.End(400_000, rawtrace.Stages)
	r.Stage(400_000, 2, "B")
	r.Packet(2, 400_000, 1_000_000, "S", "B")
	r.Park(0, 400_000, 1_000_000)
	r.Park(1, 400_000, 1_000_000)
	r.End(1_000_000, rawtrace.Stages)
	r.End(1_000_000, rawtrace.Control)
	return r.Bytes()
}

func TestSVGRowsAndRects(t *testing.T) {
	data := twoStages()
	doc, info := svgOf(t, data, SVGOptions{})
	// The default is the stage with the worst ratio: A.
	assert.Equal(t, SVGInfo{Cycle: 1, Stage: "A", StartNs: 0, EndNs: 400_000, Ratio: 400.0 / 300, Slices: 4, Rects: 4, Workers: 3, Bytes: len(doc)}, info)
	assert.Equal(t, 3, count(doc, `<g class="worker" data-worker="\d+">`))
	assert.Equal(t, 4, count(doc, `<rect class="packet"`))
	assert.Equal(t, 0, count(doc, `class="packet merged"`))
	for _, name := range []string{"P1", "P2", "Q", "R"} {
		assert.Equal(t, 1, count(doc, `<title>`+name+` at \+`), name)
		assert.Equal(t, 1, count(doc, `<text x="\d+" y="\d+">`+name+`</text>`), "legend entry for %s", name)
	}
	assert.Equal(t, 1, count(doc, `<rect class="parked"`), "worker 2 sleeps through A")
	assert.Equal(t, 1, count(doc, `<circle class="wake"`))
	assert.Contains(t, doc, "4 packet slices overlap the window, each drawn.")

	// -svg-stage B: the stage named; -svg-cycle 1: the whole cycle, with a
	// line where each stage opens.
	doc, info = svgOf(t, data, SVGOptions{Stage: "B"})
	assert.Equal(t, "B", info.Stage)
	assert.Equal(t, 1, info.Rects)
	assert.Equal(t, 2, count(doc, `<rect class="parked"`))
	doc, info = svgOf(t, data, SVGOptions{Cycle: 1})
	assert.Equal(t, "", info.Stage)
	assert.Equal(t, 5, info.Rects)
	assert.Equal(t, 2, count(doc, `stroke-dasharray="4,3"`))
	assert.Contains(t, doc, "wsched timeline: cycle 1, all stages")
}

func TestSVGWindowErrors(t *testing.T) {
	data := twoStages()
	for _, tc := range []struct {
		opt  SVGOptions
		want string
	}{
		{SVGOptions{Stage: "C"}, `no stage "C"; the trace's stages: "A", "B"`},
		{SVGOptions{Stage: "A", Cycle: 2}, `no stage "A" in cycle 2`},
		{SVGOptions{Cycle: 7}, "no cycle 7; the trace's cycles: 1"},
	} {
		_, err := SVG(io.Discard, data, tc.opt)
		require.Error(t, err, "%+v", tc.opt)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := SVG(io.Discard, []byte("garbage"), SVGOptions{})
	require.Error(t, err)
}

// TestSVGStealArrow: a steal arrow goes from where the stolen packet was
// queued, on the victim's row, to its start on the thief's.
func TestSVGStealArrow(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 3, Cycles: 1, Seed: 1, Packets: 40})
	require.NotZero(t, res.Steals)
	doc, info := svgOf(t, encode(t, res.Snapshot), SVGOptions{Cycle: 1})
	assert.Equal(t, res.Steals, count(doc, `<line class="steal"`))
	assert.Equal(t, res.Steals, count(doc, `<path class="steal-mark"`))
	assert.Equal(t, res.Packets, info.Slices)
}

// TestSVGMergesNarrowSlices: 1,000 slices of 10 ns side by side in a 1 ms
// window (under a pixel each) are merged; the long slice beside them is
// drawn alone; every slice is accounted for.
func TestSVGMergesNarrowSlices(t *testing.T) {
	r := rawtrace.New(1)
	r.Cycle(0, 1)
	r.Stage(0, 1, "S")
	for i := range int64(1000) {
		r.Packet(0, 10*i, 10*i+10, "Tiny", "S")
	}
	r.Packet(0, 500_000, 1_000_000, "Long", "S")
	r.End(1_000_000, rawtrace.Stages)
	r.End(1_000_000, rawtrace.Control)
	doc, info := svgOf(t, r.Bytes(), SVGOptions{})
	assert.Equal(t, 1001, info.Slices)
	assert.Less(t, info.Rects, 30)
	assert.Equal(t, info.Rects-1, info.Merged)
	assert.Equal(t, 1, count(doc, `<title>Long at \+500µs for 500µs</title>`))
	merged := 0
	for _, m := range regexp.MustCompile(`<title>(\d+) packets \(Tiny\)`).FindAllStringSubmatch(doc, -1) {
		n := 0
		for _, c := range m[1] {
			n = 10*n + int(c-'0')
		}
		merged += n
	}
	assert.Equal(t, 1000, merged)
	assert.Contains(t, doc, "are merged with their neighbours")
}

// TestSVGHugeTraceBounded: 75,000 packet slices in one cycle draw as at
// most MaxRects rectangles and stay under 1 MiB; a smaller MaxRects holds
// too.
func TestSVGHugeTraceBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a large simulated trace")
	}
	res := synth.Generate(synth.Config{Workers: 8, Cycles: 1, Packets: 10_000, Seed: 1, MaxBytes: 64 << 20})
	data := encode(t, res.Snapshot)
	doc, info := svgOf(t, data, SVGOptions{Cycle: 1})
	assert.Equal(t, res.Packets, info.Slices)
	assert.LessOrEqual(t, info.Rects, svgDefaultRects)
	assert.Less(t, len(doc), 1<<20)
	t.Logf("%d slices, %d-byte file: %d rectangles (%d merged), %d-byte picture", info.Slices, len(data), info.Rects, info.Merged, len(doc))
	_, info = svgOf(t, data, SVGOptions{Cycle: 1, MaxRects: 100})
	assert.LessOrEqual(t, info.Rects, 100)
}

// TestSVGDeterministic: the same file and options give the same bytes.
func TestSVGDeterministic(t *testing.T) {
	data := encode(t, synth.Generate(synth.Config{Workers: 4, Cycles: 2, Seed: 3, Packets: 50}).Snapshot)
	a, _ := svgOf(t, data, SVGOptions{})
	for range 3 {
		b, _ := svgOf(t, data, SVGOptions{})
		require.Equal(t, a, b)
	}
}

// svgWithinBudget checks that drawing data keeps Bytes' budget (bytes
// allocated; time with WSCHED_STRESS=1) and a picture of at most 2 MiB, and that what it draws
// is well-formed.
func svgWithinBudget(t testing.TB, data []byte) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	var buf bytes.Buffer
	_, err := SVG(&buf, data, SVGOptions{})
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	assert.LessOrEqual(t, after.TotalAlloc-before.TotalAlloc, allocBudget(len(data)), "bytes allocated for a %d-byte file", len(data))
	if stress {
		assert.LessOrEqual(t, elapsed, timeBudget(len(data)), "time for a %d-byte file", len(data))
	}
	if err == nil {
		assert.LessOrEqual(t, buf.Len(), 2<<20)
		wellFormed(t, buf.Bytes())
	}
}

// TestSVGHostileInputs: files that claim 65,536 workers, nest cycles or
// carry many samples, one that describes 2,000 workers, and names that
// are long or need escaping stay within the budgets, and the picture says
// what it left out.
func TestSVGHostileInputs(t *testing.T) {
	for _, data := range budgetSeeds(t) {
		svgWithinBudget(t, data)
	}
	many := rawtrace.New(2000)
	many.Cycle(0, 1)
	many.Stage(0, 1, "S")
	many.Packet(0, 0, 1000, strings.Repeat("<&>\"'", 20_000), "S")
	for w := 1; w < 2000; w++ {
		many.Packet(w, int64(w), int64(w)+1000, "P", "S")
	}
	many.End(5000, rawtrace.Stages)
	many.End(5000, rawtrace.Control)
	data := many.Bytes()
	svgWithinBudget(t, data)
	doc, info := svgOf(t, data, SVGOptions{})
	assert.Equal(t, svgMaxRows, info.Workers)
	assert.Equal(t, svgMaxRows, count(doc, `<g class="worker"`))
	assert.Contains(t, doc, "Only the first 128 of the 2000 workers with a track are drawn.")
	assert.Contains(t, doc, "&lt;&amp;&gt;&#34;&#39;")
	assert.Less(t, len(doc), 200<<10, "long names are cut")
}

// TestSVGLargestPicture: 128 workers, each with 15 packets (1,920 in all,
// just under the bound) named with 48 4-byte characters and one that needs
// escaping, parked between them, and wake-ups past their bound: under
// 2 MB.
func TestSVGLargestPicture(t *testing.T) {
	r := rawtrace.New(svgMaxRows)
	r.Cycle(0, 1)
	r.Stage(0, 1, "S")
	name := "<" + strings.Repeat("\U0001F600", svgNameRunes)
	for w := range svgMaxRows {
		for k := range int64(15) {
			t0 := k * 50_000
			r.Packet(w, t0, t0+20_000, name+strings.Repeat("x", int(k)), "S")
			r.Park(w, t0+20_000, t0+50_000)
		}
	}
	for w := range 2 * svgMaxMarks {
		r.Wake(int64(w), w%svgMaxRows)
	}
	r.End(1_000_000, rawtrace.Stages)
	r.End(1_000_000, rawtrace.Control)
	doc, info := svgOf(t, r.Bytes(), SVGOptions{})
	assert.Equal(t, 15*svgMaxRows, info.Rects)
	assert.Equal(t, svgMaxMarks, count(doc, `<circle class="wake"`))
	assert.Less(t, len(doc), 2<<20)
	t.Logf("%d bytes", len(doc))
}

// FuzzSVG: any input gives a picture or an error, never a panic, within
// Bytes' budgets; seeds as FuzzAnalyze's.
//
//	go test -run XXX -fuzz FuzzSVG -fuzztime 30s ./trace/analyze/
func FuzzSVG(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("..", "perfetto", "testdata", "small.pftrace.golden"))
	require.NoError(f, err)
	f.Add(golden)
	f.Add(twoStages())
	for _, s := range budgetSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		svgWithinBudget(t, data)
	})
}

// exampleCommand makes docs/timeline.svg.
const exampleCommand = "go test ./trace/analyze/ -run TestTimelineExample -update"

// TestTimelineExample draws docs/timeline.svg, the example in the package
// doc, from a simulated trace (4 workers, 2 cycles, one 60 µs packet in
// each Prepare stage) and checks that the file is current; run
// exampleCommand to rewrite it.
func TestTimelineExample(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 4, Cycles: 2, Packets: 60, Seed: 1, Heavy: 60_000})
	doc, info := svgOf(t, encode(t, res.Snapshot), SVGOptions{
		Comment: "A simulated trace (trace/internal/synth: 4 workers, 2 cycles, one 60 µs packet in each Prepare stage), drawn by wsched analyze -svg's code. Made by: " + exampleCommand,
	})
	assert.NotZero(t, info.Rects)
	path := filepath.Join("..", "..", "docs", "timeline.svg")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run %s", exampleCommand)
	require.Equal(t, string(want), doc, "docs/timeline.svg is stale: run %s", exampleCommand)
}

// BenchmarkSVG: the cost of a picture per byte of file (ns/byte, B/byte
// allocated), on simulated traces, against Bytes' (BenchmarkAnalyze).
//
//	go test -run XXX -bench SVG -benchtime 10x ./trace/analyze/
func BenchmarkSVG(b *testing.B) {
	for _, s := range []struct {
		name string
		cfg  synth.Config
	}{
		{"synth/10Cycles", synth.Config{Workers: 4, Cycles: 10, Packets: 500, Seed: 11, MaxBytes: 32 << 20}},
		{"synth/500Cycles", synth.Config{Workers: 4, Cycles: 500, Packets: 10, Seed: 11, MaxBytes: 32 << 20}},
	} {
		data := encode(b, synth.Generate(s.cfg).Snapshot)
		for _, opt := range []struct {
			name string
			opt  SVGOptions
		}{{"worst-stage", SVGOptions{}}, {"cycle", SVGOptions{Cycle: 1}}} {
			b.Run(s.name+"/"+opt.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				var info SVGInfo
				for b.Loop() {
					var err error
					info, err = SVG(io.Discard, data, opt.opt)
					require.NoError(b, err)
				}
				runtime.ReadMemStats(&after)
				n := float64(b.N) * float64(len(data))
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/byte")
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/byte")
				b.ReportMetric(float64(info.Bytes), "svg_bytes")
			})
		}
	}
}

// TestSVGDefaultWindowMostTimeLost: by default the picture is of the
// stage that lost the most time against its bound, not the one with the
// worst ratio: a one-packet stage at 1.5 of a 1 µs bound loses 0.5 µs,
// a long one at 1.3 of 1 ms loses 300 µs.
func TestSVGDefaultWindowMostTimeLost(t *testing.T) {
	r := &Report{Cycles: []Cycle{{Cycle: 1, Stages: []Stage{
		{Name: "Tiny", Stage: 1, Window: Window{MakespanNs: 1500, LowerBoundNs: 1000, Ratio: 1.5}},
		{Name: "Long", Stage: 2, Window: Window{MakespanNs: 1_300_000, LowerBoundNs: 1_000_000, Ratio: 1.3}},
	}}}}
	w, err := pickWindow(r, SVGOptions{})
	require.NoError(t, err)
	assert.Equal(t, "Long", w.stage)
}
