package analyze

import (
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// SVGOptions choose the window SVG draws and bound the picture.
type SVGOptions struct {
	// Stage names the stage to draw (as the report names it, e.g.
	// "Prepare"); with Cycle 0, in the cycle where it lost the most time
	// against its lower bound (makespan − bound; ties: the worse ratio).
	// "" draws, with Cycle 0, the stage of the trace that lost the most
	// time so, or with Cycle N the whole of cycle N.
	Stage string
	Cycle uint64
	// Width is the picture's width in pixels: 0 means 1200; it is kept
	// within 400-8000.
	Width int
	// MaxRects bounds the packet rectangles drawn, and the parked and idle
	// bars each: 0 means 2000. Slices too narrow to see are merged with
	// their neighbours, more of them until the bound holds (at least two
	// per drawn worker are allowed).
	MaxRects int
	// Comment, if not empty, is written as an XML comment after the XML
	// declaration (say, the command that made the file).
	Comment string
}

// SVGInfo says what SVG drew.
type SVGInfo struct {
	Cycle uint64
	// Stage is the stage drawn; "" when a whole cycle (or a trace without
	// cycles) is.
	Stage   string
	StartNs int64
	EndNs   int64
	// Ratio is the window's makespan over its lower bound (0 if none).
	Ratio float64
	// Slices counts the packet slices that overlap the window on the
	// drawn workers; Rects the rectangles that draw them, Merged of which
	// stand for more than one slice.
	Slices, Rects, Merged int
	// Workers counts the workers drawn, one row each.
	Workers int
	Bytes   int
}

// Bounds on what one picture draws, whatever the trace holds.
const (
	svgDefaultWidth = 1200
	svgMinWidth     = 400
	svgMaxWidth     = 8000
	svgDefaultRects = 2000
	svgMaxRows      = 128 // workers drawn
	svgMaxArrows    = 300 // steal arrows
	svgMaxMarks     = 500 // steal marks, and wake marks
	svgMaxStages    = 50  // stage lines in a cycle window
	svgTopTypes     = 10  // packet types with a colour of their own
	svgNameRunes    = 48  // a name longer than this is cut in labels
)

// Layout, in pixels.
const (
	svgMargin   = 8  // left of the title, legend and notes
	svgLeft     = 96 // row labels
	svgRight    = 24
	svgAxisY    = 68
	svgRowsY    = 76
	svgRowH     = 26
	svgRowPitch = 32
)

// Colours: one per packet type, by total time in the window, then one for
// the other types and one for rectangles that merge several types.
var svgPalette = [svgTopTypes]string{
	"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948",
	"#76b7b2", "#ff9da7", "#9c755f", "#86bcb6", "#d4a6c8",
}

const (
	svgOtherColor  = "#bab0ac"
	svgParkedColor = "#8c8c8c"
	svgIdleColor   = "#d62728"
	svgWakeColor   = "#1f3a93"
)

// SVG draws one window of a wsched trace as an SVG picture on w: a row per
// worker with its packets (coloured by packet type, with a legend), the
// time it was parked, the time it was idle while work was queued
// elsewhere, where it stole (a mark, and an arrow from where the stolen
// packet was queued) and where it was woken. Which window: see SVGOptions;
// an option that names no window gives an error that lists what the trace
// has. The output is the same for the same input and options, and bounded
// whatever the trace holds: at most 128 workers, MaxRects rectangles of
// each kind (narrow slices merged, which the picture says), 300 arrows,
// 500 marks of each kind and 50 stage lines, names cut to 48 characters:
// under 2 MB at the defaults, under 1 MB for names of a few words. It costs what Bytes costs, plus time linear in the
// window's events for each drawn worker.
func SVG(w io.Writer, data []byte, opt SVGOptions) (SVGInfo, error) {
	m, err := load(data)
	if err != nil {
		return SVGInfo{}, err
	}
	q := newQueues(m)
	r := m.report(q, listAuto)
	win, err := pickWindow(r, opt)
	if err != nil {
		return SVGInfo{}, err
	}
	d := newDrawing(m, q, win, opt)
	d.draw()
	info := d.info
	info.Bytes = len(d.out)
	_, err = io.WriteString(w, d.out)
	return info, err
}

// svgWindow is the window chosen to draw.
type svgWindow struct {
	cycle uint64
	stage string // "" for a whole cycle
	index int    // the stage's index
	Window
}

// pickWindow applies SVGOptions to the report.
func pickWindow(r *Report, opt SVGOptions) (svgWindow, error) {
	var best *svgWindow
	// The window where the most time was lost against its lower bound
	// (makespan − bound), ties to the worse ratio: a one-packet stage at
	// 1.02 of its bound loses less than a long stage at 1.3.
	lost := func(w *Window) int64 { return w.MakespanNs - w.LowerBoundNs }
	consider := func(c *Cycle, s *Stage) {
		if best != nil && (lost(&s.Window) < lost(&best.Window) ||
			lost(&s.Window) == lost(&best.Window) && s.Ratio <= best.Ratio) {
			return
		}
		best = &svgWindow{cycle: c.Cycle, stage: s.Name, index: s.Stage, Window: s.Window}
	}
	for ci := range r.Cycles {
		c := &r.Cycles[ci]
		if opt.Cycle != 0 && c.Cycle != opt.Cycle {
			continue
		}
		for si := range c.Stages {
			s := &c.Stages[si]
			switch {
			case opt.Stage != "" && s.Name == opt.Stage:
				consider(c, s)
			case opt.Stage == "" && opt.Cycle == 0 && s.LowerBoundNs > 0:
				consider(c, s)
			}
		}
		if opt.Stage == "" && opt.Cycle != 0 {
			return svgWindow{cycle: c.Cycle, Window: c.Window}, nil
		}
	}
	if best != nil {
		return *best, nil
	}
	switch {
	case opt.Stage != "":
		where := ""
		if opt.Cycle != 0 {
			where = fmt.Sprintf(" in cycle %d", opt.Cycle)
		}
		return svgWindow{}, fmt.Errorf("no stage %q%s; the trace's stages: %s", opt.Stage, where, stageNames(r))
	case opt.Cycle != 0:
		return svgWindow{}, fmt.Errorf("no cycle %d; the trace's cycles: %s", opt.Cycle, cycleNumbers(r))
	case len(r.Cycles) == 0:
		return svgWindow{}, errors.New("the trace has nothing to draw")
	}
	// No stage with a bound: the cycle with the worst ratio.
	bc := &r.Cycles[0]
	for ci := range r.Cycles {
		if c := &r.Cycles[ci]; c.Ratio > bc.Ratio {
			bc = c
		}
	}
	return svgWindow{cycle: bc.Cycle, Window: bc.Window}, nil
}

// stageNames lists the report's stage names, the first 20.
func stageNames(r *Report) string {
	var names []string
	seen := map[string]bool{}
	for _, c := range r.Cycles {
		for _, s := range c.Stages {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, strconv.Quote(cut(s.Name)))
			}
		}
	}
	return listed(names, "none")
}

// cycleNumbers lists the report's cycle numbers, the first 20.
func cycleNumbers(r *Report) string {
	var ns []string
	for _, c := range r.Cycles {
		if c.Cycle != 0 {
			ns = append(ns, strconv.FormatUint(c.Cycle, 10))
		}
	}
	return listed(ns, "none (the trace is one window: draw it without -svg-cycle)")
}

func listed(xs []string, none string) string {
	switch {
	case len(xs) == 0:
		return none
	case len(xs) > 20:
		return strings.Join(xs[:20], ", ") + fmt.Sprintf(" and %d more", len(xs)-20)
	}
	return strings.Join(xs, ", ")
}

// piece is a stretch drawn on a row: one packet slice, one parked or idle
// stretch, or several of them merged (n > 1). busy is the time its
// constituents cover (all of it for one). A packet piece's name is the
// packet type (an index into model.strs) of its longest slice, top that
// slice's length, and mixed says whether it holds other types too.
type piece struct {
	s, e  int64
	n     int
	busy  int64
	name  int32
	top   int64
	mixed bool
}

// merge appends to dst the pieces of ps (sorted by start) with each run of
// consecutive pieces shorter than minNs merged into one, as long as the
// run spans at most minNs; pieces at least minNs long stay as they are.
func merge(dst, ps []piece, minNs int64) []piece {
	var g piece
	open := false
	flush := func() {
		if open {
			dst = append(dst, g)
			open = false
		}
	}
	for _, p := range ps {
		if p.e-p.s >= minNs {
			flush()
			dst = append(dst, p)
			continue
		}
		if open && p.e-g.s <= minNs {
			g.e = max(g.e, p.e)
			g.n += p.n
			g.busy += p.busy
			g.mixed = g.mixed || p.mixed || p.name != g.name
			if p.top > g.top {
				g.name, g.top = p.name, p.top
			}
			continue
		}
		flush()
		g, open = p, true
	}
	flush()
	return dst
}

// capped merges every row's pieces, with a merge width that starts at one
// pixel (pxNs) and doubles until at most limit pieces remain, and returns
// them and the width used.
func capped(rows [][]piece, pxNs int64, limit int) ([][]piece, int64) {
	minNs := pxNs
	out := make([][]piece, len(rows))
	for {
		total := 0
		for i, ps := range rows {
			out[i] = merge(out[i][:0], ps, minNs)
			total += len(out[i])
		}
		if total <= limit || minNs > math.MaxInt64/4 {
			return out, minNs
		}
		minNs *= 2
	}
}

// drawing is one picture being written.
type drawing struct {
	m    *model
	q    *queues
	win  svgWindow
	opt  SVGOptions
	b    strings.Builder // the body
	out  string          // the picture
	info SVGInfo

	width, plotW int
	start, end   int64
	pxNs         int64 // ns per pixel, at least 1
	rows         []*worker
	rowOf        map[int]int // worker id → row
	labels       map[int32]string
	colors       map[int32]string
	legend       []int32 // the types with a colour of their own, by total time
	others       bool    // some types share svgOtherColor
	notes        []string
}

func newDrawing(m *model, q *queues, win svgWindow, opt SVGOptions) *drawing {
	d := &drawing{m: m, q: q, win: win, opt: opt, start: win.StartNs, end: win.EndNs}
	d.width = cmp.Or(opt.Width, svgDefaultWidth)
	d.width = min(max(d.width, svgMinWidth), svgMaxWidth)
	d.plotW = d.width - svgLeft - svgRight
	if d.end <= d.start {
		d.end = d.start + 1
	}
	d.pxNs = max(1, (d.end-d.start)/int64(d.plotW))
	d.rows = m.ws
	if len(d.rows) > svgMaxRows {
		d.notes = append(d.notes, fmt.Sprintf("Only the first %d of the %d workers with a track are drawn.", svgMaxRows, len(m.ws)))
		d.rows = d.rows[:svgMaxRows]
	}
	d.rowOf = make(map[int]int, len(d.rows))
	for i, wd := range d.rows {
		d.rowOf[wd.ID] = i
	}
	d.info = SVGInfo{Cycle: win.cycle, Stage: win.stage, StartNs: win.StartNs, EndNs: win.EndNs, Ratio: win.Ratio, Workers: len(d.rows)}
	return d
}

func (d *drawing) x(t int64) float64 {
	t = min(max(t, d.start), d.end)
	return svgLeft + float64(t-d.start)*float64(d.plotW)/float64(d.end-d.start)
}

func (d *drawing) rowY(i int) int { return svgRowsY + i*svgRowPitch }

// packets returns each drawn worker's packet slices that overlap the
// window, clipped to it.
func (d *drawing) packets() [][]piece {
	rows := make([][]piece, len(d.rows))
	for i, wd := range d.rows {
		ps := wd.Packets
		hi := sort.Search(len(ps), func(k int) bool { return ps[k].Start >= d.end })
		for _, p := range ps[:hi] {
			if p.End < d.start || p.End == d.start && p.Start < d.start {
				continue // ended before the window
			}
			s, e := max(p.Start, d.start), min(p.End, d.end)
			rows[i] = append(rows[i], piece{s: s, e: e, n: 1, busy: e - s, name: p.Name, top: e - s})
		}
	}
	return rows
}

// parked returns each drawn worker's parked time in the window.
func (d *drawing) parked() [][]piece {
	rows := make([][]piece, len(d.rows))
	for i, wd := range d.rows {
		for j := endingAfter(wd.parked, d.start); j < len(wd.parked) && wd.parked[j].s < d.end; j++ {
			iv := wd.parked[j]
			s, e := max(iv.s, d.start), min(iv.e, d.end)
			rows[i] = append(rows[i], piece{s: s, e: e, n: 1, busy: e - s})
		}
	}
	return rows
}

// idle returns, for each drawn worker, the time in the window it ran no
// packet while work was queued elsewhere: the queue sweep's segments that
// do not exclude it (all the queued work in its own deque), less its busy
// time. The pieces are merged to one pixel as they come, so a row holds
// at most about a piece per pixel.
func (d *drawing) idle() [][]piece {
	rows := make([][]piece, len(d.rows))
	segs := d.q.segs
	first := sort.Search(len(segs), func(k int) bool { return segs[k].e > d.start })
	var raw []piece
	for i, wd := range d.rows {
		raw = raw[:0]
		bs := wd.busy
		b := endingAfter(bs, d.start)
		for k := first; k < len(segs) && segs[k].s < d.end; k++ {
			sg := segs[k]
			if sg.excl == wd.ID {
				continue
			}
			s, e := max(sg.s, d.start), min(sg.e, d.end)
			for s < e {
				for b < len(bs) && bs[b].e <= s {
					b++
				}
				if b == len(bs) || bs[b].s >= e {
					raw = append(raw, piece{s: s, e: e, n: 1, busy: e - s})
					break
				}
				if bs[b].s > s {
					raw = append(raw, piece{s: s, e: bs[b].s, n: 1, busy: bs[b].s - s})
				}
				s = bs[b].e
			}
			if len(raw) >= 4096 { // keep raw short: merge what we have
				rows[i] = merge(rows[i], joinTouching(raw), d.pxNs)
				raw = raw[:0]
			}
		}
		rows[i] = merge(rows[i], joinTouching(raw), d.pxNs)
	}
	return rows
}

// joinTouching joins pieces that touch (one ends where the next starts).
func joinTouching(ps []piece) []piece {
	out := ps[:0]
	for _, p := range ps {
		if n := len(out); n > 0 && out[n-1].e == p.s {
			out[n-1].e = p.e
			out[n-1].n += p.n
			out[n-1].busy += p.busy
			continue
		}
		out = append(out, p)
	}
	return out
}

// assignColors gives the packet types colours by their total time in the
// drawn rows.
func (d *drawing) assignColors(rows [][]piece) {
	total := map[int32]int64{}
	for _, ps := range rows {
		for _, p := range ps {
			total[p.name] += p.e - p.s
		}
	}
	names := make([]int32, 0, len(total))
	for n := range total {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b int32) int {
		return cmp.Or(cmp.Compare(total[b], total[a]), cmp.Compare(a, b))
	})
	d.colors = make(map[int32]string, len(names))
	d.labels = make(map[int32]string, len(names))
	for i, n := range names {
		if i < svgTopTypes {
			d.colors[n] = svgPalette[i]
			d.legend = append(d.legend, n)
		} else {
			d.colors[n] = svgOtherColor
			d.others = true
		}
	}
}

// label is packet type name's label, cut (see cut).
func (d *drawing) label(name int32) string {
	l, ok := d.labels[name]
	if !ok {
		l = cut(d.m.Strs[name])
		d.labels[name] = l
	}
	return l
}

func (d *drawing) color(name int32) string { return d.colors[name] }

func (d *drawing) draw() {
	limit := max(cmp.Or(d.opt.MaxRects, svgDefaultRects), 2*len(d.rows))
	raw := d.packets()
	for _, ps := range raw {
		d.info.Slices += len(ps)
	}
	d.assignColors(raw)
	packets, mergeNs := capped(raw, d.pxNs, limit)
	parked, _ := capped(d.parked(), d.pxNs, limit)
	idle, _ := capped(d.idle(), d.pxNs, limit)

	rowsBottom := d.rowY(len(d.rows))
	d.header()
	d.axis(rowsBottom)
	d.stageLines(rowsBottom)
	for i, wd := range d.rows {
		d.row(i, wd, packets[i], parked[i], idle[i])
	}
	d.steals()
	d.wakes()
	height := d.legendAndNotes(rowsBottom+52, mergeNs)

	// The body is drawn first: the picture's height depends on it.
	var out strings.Builder
	out.Grow(d.b.Len() + 1024)
	out.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	if d.opt.Comment != "" {
		fmt.Fprintf(&out, "<!-- %s -->\n", strings.ReplaceAll(d.opt.Comment, "--", "- -"))
	}
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n",
		d.width, height, d.width, height)
	fmt.Fprintf(&out, "<title>%s</title>\n", esc(d.title()))
	out.WriteString(`<defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#222"/></marker></defs>` + "\n")
	fmt.Fprintf(&out, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", d.width, height)
	out.WriteString(d.b.String())
	out.WriteString("</svg>\n")
	d.out = out.String()
}

func (d *drawing) title() string {
	switch {
	case d.win.stage != "":
		return fmt.Sprintf("wsched timeline: cycle %d, stage %d %s", d.win.cycle, d.win.index, cut(d.win.stage))
	case d.win.cycle != 0:
		return fmt.Sprintf("wsched timeline: cycle %d, all stages", d.win.cycle)
	}
	return "wsched timeline: the whole trace"
}

func (d *drawing) header() {
	w := d.win.Window
	fmt.Fprintf(&d.b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", svgMargin, esc(d.title()))
	line := fmt.Sprintf("makespan %s, from %s into the trace; %s, work %s", fmtNs(w.MakespanNs), fmtNs(w.StartNs-d.m.First), plural(w.Packets, "packet"), fmtNs(w.WorkNs))
	if w.LowerBoundNs > 0 {
		line += fmt.Sprintf("; lower bound %s (%s), ratio %.2f", fmtNs(w.LowerBoundNs), w.BoundBy, w.Ratio)
	}
	line += fmt.Sprintf("; %s, %s", plural(w.Steals, "steal"), plural(w.Wakes, "wake"))
	fmt.Fprintf(&d.b, `<text x="%d" y="40" font-size="12">%s</text>`+"\n", svgMargin, esc(line))
}

// axis draws time ticks, relative to the window's start, with grid lines
// down to the rows' bottom.
func (d *drawing) axis(bottom int) {
	span := d.end - d.start
	step := niceStep(span / 8)
	fmt.Fprintf(&d.b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`+"\n", svgLeft, svgAxisY, svgLeft+d.plotW, svgAxisY)
	for t := int64(0); t <= span; t += step {
		x := d.x(d.start + t)
		fmt.Fprintf(&d.b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#e0e0e0"/>`, fx(x), svgAxisY, fx(x), bottom)
		fmt.Fprintf(&d.b, `<text x="%s" y="%d" text-anchor="middle" fill="#444">+%s</text>`+"\n", fx(x), svgAxisY-4, fmtNs(t))
		if t > span-step { // the last tick; also stops an overflow
			break
		}
	}
}

// niceStep returns the smallest of 1, 2, 5 × 10^k ns at least ns.
func niceStep(ns int64) int64 {
	for p := int64(1); p < math.MaxInt64/10; p *= 10 {
		for _, k := range []int64{1, 2, 5} {
			if k*p >= ns {
				return k * p
			}
		}
	}
	return math.MaxInt64 / 10
}

// stageLines marks, in a cycle window, where each stage opens, with its
// name below the rows: on a second line when it would run into the
// previous name, at its line's end when it would run past the picture's
// right edge.
func (d *drawing) stageLines(bottom int) {
	if d.win.stage != "" {
		return
	}
	ends := [2]float64{-1, -1} // where each line's last name ends
	n := 0
	i := sort.Search(len(d.m.Stages), func(k int) bool { return d.m.Stages[k].Start >= d.start })
	for ; i < len(d.m.Stages) && d.m.Stages[i].Start <= d.end && n < svgMaxStages; i++ {
		s := d.m.Stages[i]
		x := d.x(s.Start)
		fmt.Fprintf(&d.b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#444" stroke-dasharray="4,3"/>`, fx(x), svgAxisY, fx(x), bottom+4)
		name := cut(s.Name)
		w := 6.5 * float64(len([]rune(name)))
		anchor, x0 := "start", x
		if x+w > float64(d.width-svgRight) {
			anchor, x0 = "end", x-w
		}
		line := 0
		if x0 < ends[0]+6 {
			line = 1
		}
		ends[line] = x0 + w
		fmt.Fprintf(&d.b, `<text x="%s" y="%d" text-anchor="%s" fill="#444">%s</text>`+"\n", fx(x), bottom+16+12*line, anchor, esc(name))
		n++
	}
}

// row draws one worker: label, background, packets, parked and idle bars.
func (d *drawing) row(i int, wd *worker, packets, parked, idle []piece) {
	y := d.rowY(i)
	fmt.Fprintf(&d.b, `<g class="worker" data-worker="%d">`+"\n", wd.ID)
	fmt.Fprintf(&d.b, `<text x="%d" y="%d" text-anchor="end">worker %d</text>`, svgLeft-8, y+svgRowH/2+4, wd.ID)
	fmt.Fprintf(&d.b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f3f3f3"/>`+"\n", svgLeft, y, d.plotW, svgRowH)
	for _, p := range parked {
		d.bar("parked", p, y+8, 8, svgParkedColor, "")
	}
	for _, p := range packets {
		d.info.Rects++
		class := "packet"
		var tip string
		if p.n > 1 {
			d.info.Merged++
			class = "packet merged"
			types := d.label(p.name)
			if p.mixed {
				types = "several types, the longest " + types
			}
			tip = fmt.Sprintf("%d packets (%s) from +%s to +%s, busy %s (%.0f%%)", p.n, types,
				fmtNs(p.s-d.start), fmtNs(p.e-d.start), fmtNs(p.busy), 100*float64(p.busy)/float64(max(1, p.e-p.s)))
		} else {
			tip = fmt.Sprintf("%s at +%s for %s", d.label(p.name), fmtNs(p.s-d.start), fmtNs(p.e-p.s))
		}
		d.bar(class, p, y+2, svgRowH-6, d.color(p.name), tip)
	}
	for _, p := range idle {
		d.bar("idle", p, y+svgRowH-4, 4, svgIdleColor, "")
	}
	d.b.WriteString("</g>\n")
}

// bar draws p as a rectangle at least half a pixel wide; a merged piece
// is as opaque as its constituents cover it (at least 0.2).
func (d *drawing) bar(class string, p piece, y, h int, fill, tip string) {
	x0, x1 := d.x(p.s), d.x(p.e)
	fmt.Fprintf(&d.b, `<rect class="%s" x="%s" y="%d" width="%s" height="%d" fill="%s"`, class, fx(x0), y, fx(max(x1-x0, 0.5)), h, fill)
	if p.n > 1 && p.e > p.s && p.busy < p.e-p.s {
		fmt.Fprintf(&d.b, ` fill-opacity="%.2f"`, max(0.2, float64(p.busy)/float64(p.e-p.s)))
	}
	if tip == "" {
		d.b.WriteString("/>\n")
		return
	}
	fmt.Fprintf(&d.b, "><title>%s</title></rect>\n", esc(tip))
}

// steals draws, for each packet stolen in the window on a drawn worker, an
// arrow from where it was queued (its victim's row) to its start, and a
// mark on the thief's row at each steal.
func (d *drawing) steals() {
	type arrow struct {
		t0, t1     int64
		from, to   int
		fromWorker int
	}
	var arrows []arrow
	total := 0
	for i, wd := range d.rows {
		ps := wd.Packets
		lo := sort.Search(len(ps), func(k int) bool { return ps[k].Start >= d.start })
		for k := lo; k < len(ps) && ps[k].Start <= d.end; k++ {
			if ps[k].Flow == 0 {
				continue
			}
			src, ok := d.m.Flows[ps[k].Flow]
			if !ok {
				continue
			}
			from, ok := d.rowOf[src.Victim]
			if !ok {
				continue
			}
			total++
			arrows = append(arrows, arrow{t0: src.T, t1: ps[k].Start, from: from, to: i, fromWorker: src.Victim})
		}
	}
	slices.SortStableFunc(arrows, func(a, b arrow) int { return cmp.Or(cmp.Compare(a.t1, b.t1), cmp.Compare(a.to, b.to)) })
	if len(arrows) > svgMaxArrows {
		d.notes = append(d.notes, fmt.Sprintf("Steal arrows: the first %d of %d.", svgMaxArrows, len(arrows)))
		arrows = arrows[:svgMaxArrows]
	}
	for _, a := range arrows {
		y0 := d.rowY(a.from) + svgRowH/2
		y1 := d.rowY(a.to) + svgRowH/2
		fmt.Fprintf(&d.b, `<line class="steal" x1="%s" y1="%d" x2="%s" y2="%d" stroke="#222" stroke-width="1" marker-end="url(#arrow)"><title>stolen from worker %d: queued at +%s, started at +%s</title></line>`+"\n",
			fx(d.x(a.t0)), y0, fx(d.x(a.t1)), y1, a.fromWorker, fmtNs(a.t0-d.start), fmtNs(a.t1-d.start))
	}
	marks := 0
	all := 0
	for _, in := range d.instants(instSteal) {
		row, ok := d.rowOf[in.Worker]
		if !ok {
			continue
		}
		all++
		if marks == svgMaxMarks {
			continue
		}
		marks++
		x, y := d.x(in.T), d.rowY(row)
		fmt.Fprintf(&d.b, `<path class="steal-mark" d="M%s,%d l-4,-6 h8 z" fill="#111"><title>steal from worker %d (%d moved) at +%s</title></path>`+"\n",
			fx(x), y, in.Arg, in.Moved, fmtNs(in.T-d.start))
	}
	if all > marks {
		d.notes = append(d.notes, fmt.Sprintf("Steal marks: the first %d of %d.", marks, all))
	}
}

// wakes marks each wake-up sent to a drawn worker in the window on its
// row.
func (d *drawing) wakes() {
	marks, all := 0, 0
	for _, in := range d.instants(instWake) {
		row, ok := d.rowOf[int(in.Arg)]
		if in.Arg < 0 || in.Arg > math.MaxInt32 || !ok {
			continue
		}
		all++
		if marks == svgMaxMarks {
			continue
		}
		marks++
		from := "the control thread"
		if in.Worker >= 0 {
			from = "worker " + strconv.Itoa(in.Worker)
		}
		fmt.Fprintf(&d.b, `<circle class="wake" cx="%s" cy="%d" r="3.5" fill="#ffffff" stroke="%s" stroke-width="1.5"><title>woken by %s at +%s</title></circle>`+"\n",
			fx(d.x(in.T)), d.rowY(row)+svgRowH/2, svgWakeColor, from, fmtNs(in.T-d.start))
	}
	if all > marks {
		d.notes = append(d.notes, fmt.Sprintf("Wake marks: the first %d of %d.", marks, all))
	}
}

// instants returns the instants of a kind in the window.
func (d *drawing) instants(kind uint8) []instant {
	ins := d.m.Instants
	lo := sort.Search(len(ins), func(k int) bool { return ins[k].T >= d.start })
	var out []instant
	for k := lo; k < len(ins) && ins[k].T <= d.end; k++ {
		if ins[k].Kind == kind {
			out = append(out, ins[k])
		}
	}
	return out
}

// legendAndNotes draws the legend and the notes from y down and returns
// the picture's height.
func (d *drawing) legendAndNotes(y int, mergeNs int64) int {
	type entry struct {
		color, label, shape string
	}
	var es []entry
	for _, n := range d.legend {
		es = append(es, entry{d.colors[n], d.label(n), "box"})
	}
	if d.others {
		es = append(es, entry{svgOtherColor, "other packet types", "box"})
	}
	es = append(es,
		entry{svgParkedColor, "parked", "thin"},
		entry{svgIdleColor, "idle while work was queued elsewhere", "line"},
		entry{"#111", "steal; its arrow starts where the packet was queued", "steal"},
		entry{svgWakeColor, "wake-up received", "wake"})
	// Entries flow left to right, wrapped at the picture's width; a label
	// is taken as 6.5 px a rune wide.
	x0 := svgMargin
	x, yy := x0, y
	for _, e := range es {
		w := 20 + int(6.5*float64(len([]rune(e.label)))) + 24
		if x > x0 && x+w > d.width-svgRight {
			x, yy = x0, yy+18
		}
		switch e.shape {
		case "box":
			fmt.Fprintf(&d.b, `<rect x="%d" y="%d" width="14" height="12" fill="%s"/>`, x, yy-10, e.color)
		case "thin":
			fmt.Fprintf(&d.b, `<rect x="%d" y="%d" width="14" height="6" fill="%s"/>`, x, yy-7, e.color)
		case "line":
			fmt.Fprintf(&d.b, `<rect x="%d" y="%d" width="14" height="4" fill="%s"/>`, x, yy-4, e.color)
		case "steal":
			fmt.Fprintf(&d.b, `<path d="M%d,%d l-4,-6 h8 z" fill="%s"/>`, x+7, yy-2, e.color)
		case "wake":
			fmt.Fprintf(&d.b, `<circle cx="%d" cy="%d" r="3.5" fill="#ffffff" stroke="%s" stroke-width="1.5"/>`, x+7, yy-4, e.color)
		}
		fmt.Fprintf(&d.b, `<text x="%d" y="%d">%s</text>`+"\n", x+20, yy, esc(e.label))
		x += w
	}
	y = yy + 28
	if d.info.Merged > 0 {
		d.notes = append([]string{
			fmt.Sprintf("%d packet slices overlap the window; %d rectangles draw them: slices shorter than %s (%d px) are merged with their neighbours into %d of them,",
				d.info.Slices, d.info.Rects, fmtNs(mergeNs), max(1, mergeNs/d.pxNs), d.info.Merged),
			"each coloured as its longest slice and as opaque as the worker was busy in it (hover for what it holds); parked and idle stretches likewise."}, d.notes...)
	} else {
		d.notes = append([]string{fmt.Sprintf("%d packet slices overlap the window, each drawn.", d.info.Slices)}, d.notes...)
	}
	d.notes = append(d.notes, "Idle while work was queued: per the scheduler's counter samples, not counting work queued in the worker's own deque.")
	for _, n := range d.notes {
		fmt.Fprintf(&d.b, `<text x="%d" y="%d" fill="#444">%s</text>`+"\n", x0, y, esc(n))
		y += 16
	}
	return y + 8
}

// fmtNs writes a duration with three significant digits.
func fmtNs(ns int64) string {
	neg := ""
	if ns < 0 {
		neg, ns = "-", -ns
	}
	v := float64(ns)
	for _, u := range []struct {
		unit string
		div  float64
	}{{"ns", 1}, {"µs", 1e3}, {"ms", 1e6}} {
		if x := v / u.div; x < 999.5 {
			if u.div == 1 {
				return neg + strconv.FormatInt(ns, 10) + u.unit
			}
			return neg + strconv.FormatFloat(x, 'g', 3, 64) + u.unit
		}
	}
	return neg + strconv.FormatFloat(v/1e9, 'f', 3, 64) + "s"
}

// fx formats a coordinate with one decimal.
func fx(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// cut shortens a name for a label to svgNameRunes runes; it reads at most
// 4 bytes a rune of it, however long the name.
func cut(s string) string {
	if len(s) <= svgNameRunes {
		return s
	}
	r := []rune(s[:min(len(s), 4*svgNameRunes)])
	if len(r) <= svgNameRunes && len(s) <= 4*svgNameRunes {
		return s
	}
	return string(r[:min(len(r), svgNameRunes-1)]) + "…"
}

// esc escapes text for XML character data and attribute values.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
