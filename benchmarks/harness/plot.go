package harness

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// logBars draws bars from the bottom of the plot up to each value, with a
// confidence interval whisker, on any Y scale (gonum's BarChart starts at
// zero, which a log scale cannot show; times here span 30×, so the axis is
// logarithmic).
type logBars struct {
	vals, lo, hi []float64
	colors       []color.Color
	width        vg.Length
	xs           []float64 // bar centres; nil: 0, 1, 2, …
	zero         bool      // linear axis from 0
}

func (b *logBars) x(i int) float64 {
	if b.xs != nil {
		return b.xs[i]
	}
	return float64(i)
}

func (b *logBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	whisker := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	for i, v := range b.vals {
		if !(v > 0) {
			continue
		}
		x := trX(b.x(i))
		bar := []vg.Point{
			{X: x - b.width/2, Y: c.Min.Y}, {X: x + b.width/2, Y: c.Min.Y},
			{X: x + b.width/2, Y: trY(v)}, {X: x - b.width/2, Y: trY(v)},
		}
		c.FillPolygon(b.colors[i%len(b.colors)], c.ClipPolygonY(bar))
		if b.lo[i] > 0 && b.hi[i] > 0 && !math.IsInf(b.hi[i], 0) {
			lo, hi := trY(b.lo[i]), trY(b.hi[i])
			c.StrokeLines(whisker, c.ClipLinesY([]vg.Point{{X: x, Y: lo}, {X: x, Y: hi}})...)
			for _, y := range []vg.Length{lo, hi} {
				c.StrokeLines(whisker, c.ClipLinesY([]vg.Point{{X: x - b.width/5, Y: y}, {X: x + b.width/5, Y: y}})...)
			}
		}
	}
}

func (b *logBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = math.Inf(1), math.Inf(-1)
	for i, v := range b.vals {
		if !(v > 0) {
			continue
		}
		ymin = math.Min(ymin, v)
		ymax = math.Max(ymax, v)
		if b.lo[i] > 0 {
			ymin = math.Min(ymin, b.lo[i])
		}
		if b.hi[i] > 0 && !math.IsInf(b.hi[i], 0) {
			ymax = math.Max(ymax, b.hi[i])
		}
	}
	if math.IsInf(ymin, 0) {
		ymin, ymax = 1, 10
	}
	xmin, xmax = -0.5, float64(len(b.vals))-0.5
	if b.xs != nil {
		xmin, xmax = math.Inf(1), math.Inf(-1)
		for _, x := range b.xs {
			xmin, xmax = math.Min(xmin, x-0.5), math.Max(xmax, x+0.5)
		}
	}
	if b.zero {
		return xmin, xmax, 0, ymax * 1.25
	}
	return xmin, xmax, ymin / 2, ymax * 1.5
}

// PlotBars writes one SVG per group of the set: each target's median
// ns/op as a bar with its 95% confidence interval, on a log axis. It
// returns the files written.
func PlotBars(s *Set, dir, prefix string) ([]string, error) {
	var files []string
	for _, g := range s.Groups() {
		b := &logBars{width: vg.Points(18)}
		var labels []string
		for i, n := range g.Names {
			sum := Summarize(s.Values(n, UnitNsOp))
			b.vals = append(b.vals, sum.Center)
			b.lo = append(b.lo, sum.Lo)
			b.hi = append(b.hi, sum.Hi)
			c := plotutil.Color(1) // peers
			if strings.HasPrefix(g.Labels[i], "wsched/") {
				c = plotutil.Color(0)
			}
			b.colors = append(b.colors, c)
			labels = append(labels, g.Labels[i])
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s, %d workers: median time per operation, 95%% CI", g.Bench, g.Workers)
		p.Y.Label.Text = "time per operation (log scale)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = nsTicks{}
		p.Add(plotter.NewGrid(), b)
		p.NominalX(labels...)
		p.X.Tick.Label.Rotation = math.Pi / 5
		p.X.Tick.Label.XAlign = text.XRight
		p.X.Tick.Label.YAlign = text.YCenter
		name := filepath.Join(dir, fmt.Sprintf("%s%s-w%d.svg", prefix, strings.ToLower(g.Bench), g.Workers))
		w := vg.Length(math.Max(4, 0.9*float64(len(labels))+2)) * vg.Inch
		if err := p.Save(w, 4*vg.Inch, name); err != nil {
			return files, err
		}
		files = append(files, name)
	}
	return files, nil
}

// PlotSpeedup writes one SVG per workload measured at more than one worker
// count: each target's speedup over its own one-worker median (or its
// fewest-worker median), with the ideal line.
func PlotSpeedup(s *Set, dir, prefix string) ([]string, error) {
	type series struct {
		label string
		pts   map[int]float64 // workers → median ns/op
	}
	byBench := map[string]map[string]*series{}
	var benches []string
	var order = map[string][]string{}
	for _, n := range s.Names {
		base, kv := nameParts(n)
		var w int
		fmt.Sscan(kv["workers"], &w)
		if byBench[base] == nil {
			byBench[base] = map[string]*series{}
			benches = append(benches, base)
		}
		l := targetLabel(kv)
		sr := byBench[base][l]
		if sr == nil {
			sr = &series{label: l, pts: map[int]float64{}}
			byBench[base][l] = sr
			order[base] = append(order[base], l)
		}
		sr.pts[w] = Summarize(s.Values(n, UnitNsOp)).Center
	}
	var files []string
	for _, bench := range benches {
		maxW, multi := 0, false
		for _, sr := range byBench[bench] {
			if len(sr.pts) > 1 {
				multi = true
			}
			for w := range sr.pts {
				maxW = max(maxW, w)
			}
		}
		if !multi {
			continue
		}
		p := plot.New()
		p.Title.Text = bench + ": speedup (median ns/op)"
		p.X.Label.Text = "workers"
		p.Y.Label.Text = "speedup"
		p.Legend.Top = true
		p.Legend.Left = true
		p.Add(plotter.NewGrid())
		ideal := plotter.XYs{{X: 1, Y: 1}, {X: float64(maxW), Y: float64(maxW)}}
		il, err := plotter.NewLine(ideal)
		if err != nil {
			return files, err
		}
		il.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		il.Color = color.Gray{Y: 128}
		p.Add(il)
		p.Legend.Add("ideal", il)
		for i, l := range order[bench] {
			sr := byBench[bench][l]
			if len(sr.pts) < 2 {
				continue
			}
			ws := make([]int, 0, len(sr.pts))
			for w := range sr.pts {
				ws = append(ws, w)
			}
			sort.Ints(ws)
			base := sr.pts[ws[0]] * float64(ws[0]) // scaled so a perfect curve meets the ideal line
			var xy plotter.XYs
			for _, w := range ws {
				xy = append(xy, plotter.XY{X: float64(w), Y: base / sr.pts[w]})
			}
			ln, pt, err := plotter.NewLinePoints(xy)
			if err != nil {
				return files, err
			}
			ln.Color = plotutil.Color(i)
			pt.Color = plotutil.Color(i)
			pt.Shape = plotutil.Shape(i)
			p.Add(ln, pt)
			p.Legend.Add(l, ln, pt)
		}
		name := filepath.Join(dir, prefix+"speedup-"+strings.ToLower(bench)+".svg")
		if err := p.Save(6*vg.Inch, 4*vg.Inch, name); err != nil {
			return files, err
		}
		files = append(files, name)
	}
	return files, nil
}

// nsTicks are log ticks labelled as durations ("100µs", "1ms").
type nsTicks struct{}

func (nsTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.LogTicks{Prec: -1}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strings.TrimSuffix(strings.TrimSuffix(FormatNs(ts[i].Value), ".0ns"), ".0")
			ts[i].Label = strings.Replace(strings.Replace(strings.Replace(ts[i].Label, ".00ms", "ms", 1), ".0µs", "µs", 1), ".000s", "s", 1)
		}
	}
	return ts
}

// countTicks are log ticks labelled with SI suffixes ("10k", "1M").
type countTicks struct{}

func (countTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.LogTicks{Prec: -1}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label == "" {
			continue
		}
		v := ts[i].Value
		switch {
		case v >= 1e6:
			ts[i].Label = strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
		case v >= 1e3:
			ts[i].Label = strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
		default:
			ts[i].Label = strconv.FormatFloat(v, 'g', 3, 64)
		}
	}
	return ts
}

// PlotSweep writes one SVG for a sweep: per workload group, one bar per
// value, the value's median time relative to the base value's median (1 =
// as fast as the current default), with its 95% confidence interval
// scaled the same way.
func PlotSweep(s *Set, sw Sweep, path string) error {
	groups := s.Groups()
	b := &logBars{width: vg.Points(float64(60) / float64(len(sw.Specs))), zero: true}
	legend := plot.NewLegend()
	var names []string
	for gi, g := range groups {
		names = append(names, fmt.Sprintf("%s w%d", g.Bench, g.Workers))
		base := -1
		for i, l := range g.Labels {
			if l == "wsched/"+sw.Base {
				base = i
			}
		}
		if base < 0 {
			continue
		}
		bm := Summarize(s.Values(g.Names[base], UnitNsOp)).Center
		for vi, spec := range sw.Specs {
			for i, l := range g.Labels {
				if l != "wsched/"+spec {
					continue
				}
				sum := Summarize(s.Values(g.Names[i], UnitNsOp))
				off := (float64(vi) - float64(len(sw.Specs)-1)/2) * 0.8 / float64(len(sw.Specs))
				b.xs = append(b.xs, float64(gi)+off)
				b.vals = append(b.vals, sum.Center/bm)
				b.lo = append(b.lo, sum.Lo/bm)
				b.hi = append(b.hi, sum.Hi/bm)
				b.colors = append(b.colors, plotutil.Color(vi))
			}
		}
	}
	for vi, spec := range sw.Specs {
		c := plotutil.Color(vi)
		legend.Add(spec, swatch{c})
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("sweep %s: median time relative to %s, 95%% CI", sw.Name, sw.Base)
	p.Y.Label.Text = "time / time at " + sw.Base
	p.Legend = legend
	p.Legend.Top = true
	p.Add(plotter.NewGrid(), b)
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(groups)) - 0.5, Y: 1}})
	if err != nil {
		return err
	}
	one.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(one)
	p.NominalX(names...)
	w := vg.Length(math.Max(6, 1.3*float64(len(groups))+2)) * vg.Inch
	return p.Save(w, 4*vg.Inch, path)
}

// swatch is a legend thumbnail: a filled square.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(s.c, pts)
}
