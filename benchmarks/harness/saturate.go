package harness

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wsched/wsched/benchmarks/system"
	"github.com/wsched/wsched/benchmarks/workload"
	"github.com/wsched/wsched/scheduler"
	"golang.org/x/perf/benchfmt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Saturation curves, as in the Qpid investigation (Qpid 0.14 → 0.22, measured per message size until latency ran away): packets
// arrive open-loop at a fixed rate, whatever the scheduler does, and the
// rate rises step by step until the latency runs away. Per packet cost and
// rate: submit-to-start latency p50/p99 and the throughput achieved; per
// cost: the saturation point.
//
// How a step runs. One scheduler, one stage. A keep-alive sentinel holds
// the cycle open while the generator runs: the stage's sentinel is queued
// only when the stage is drained and every worker idle, so it runs only
// when there is nothing else to do; it then waits for the generator's next
// submission (or its end) and re-arms itself. The generator is the calling
// goroutine: packet i is due at start + i/rate; the generator sleeps until
// the next packet is due, then submits every packet already due in one
// AddAll (Add for one), stamping each with the submit time. Latency is
// the packet's start minus that stamp. Timer wake-ups on this machine are
// tens of microseconds late, so at high rates packets arrive in small
// bursts; the schedule never slows down for the scheduler (open loop), so
// beyond capacity the queue, and the latency, grow for the whole step.

// A SatPoint is one step of a saturation curve.
type SatPoint struct {
	Cost     time.Duration
	Offered  float64 // packets/s scheduled
	Achieved float64 // packets/s completed: N / (last end − start of the schedule)
	P50, P99 time.Duration
	N        int
	Lag      time.Duration // how far the generator fell behind its schedule at most
	Workers  int
}

// SatOptions configure a saturation run.
type SatOptions struct {
	Workers int
	Policy  system.Policy
	Costs   []time.Duration
	// Fractions of the nominal capacity (Workers / cost) to offer, rising.
	Fractions []float64
	// MaxRate caps the offered rate (the generator's own limit).
	MaxRate float64
	// Step is the length of one step; MaxPackets caps its packets.
	Step       time.Duration
	MaxPackets int
	Progress   *Progress
}

// DefaultSatFractions span 1/64 of nominal capacity to 1.25×.
var DefaultSatFractions = []float64{1.0 / 64, 1.0 / 16, 1.0 / 8, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0, 1.25}

// DefaultSatCosts are the packet costs of the curves.
var DefaultSatCosts = []time.Duration{100 * time.Nanosecond, time.Microsecond, 10 * time.Microsecond, 100 * time.Microsecond}

type satPacket struct {
	units  int32
	submit int64 // ns since epoch, written by the generator before the add
	start  int64 // ns since epoch, written by the packet
	end    int64
	epoch  *time.Time
}

func (p *satPacket) Run(w *scheduler.Worker) error {
	p.start = int64(time.Since(*p.epoch))
	workload.Spin(p.units)
	p.end = int64(time.Since(*p.epoch))
	return nil
}

// keeper is the keep-alive sentinel.
type keeper struct {
	s    *scheduler.Scheduler
	st   scheduler.StageID
	kick chan struct{} // a submission happened (buffered 1)
	done chan struct{} // the generator finished
}

func (k *keeper) Run(w *scheduler.Worker) error {
	select {
	case <-k.kick:
		return k.s.SetSentinel(k.st, k) // an error ends the cycle: Run returns it
	case <-k.done:
	}
	return nil
}

// Saturate runs the curves.
func Saturate(o SatOptions) ([]SatPoint, error) {
	cfg, err := o.Policy.Config(o.Workers, "serve")
	if err != nil {
		return nil, err
	}
	s, err := scheduler.New(cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	const st scheduler.StageID = 1 // Stages[0], "serve"
	var out []SatPoint
	for _, cost := range o.Costs {
		capacity := float64(o.Workers) / cost.Seconds()
		for _, f := range o.Fractions {
			rate := math.Min(capacity*f, o.MaxRate)
			p, err := satStep(s, st, cost, rate, o)
			if err != nil {
				return out, err
			}
			out = append(out, p)
			o.Progress.Step(fmt.Sprintf("cost=%v rate=%.0f/s", cost, rate))
		}
	}
	return out, nil
}

func satStep(s *scheduler.Scheduler, st scheduler.StageID, cost time.Duration, rate float64, o SatOptions) (SatPoint, error) {
	n := int(rate * o.Step.Seconds())
	n = max(min(n, o.MaxPackets), 50)
	epoch := time.Now()
	units := workload.UnitsFor(cost)
	pk := make([]satPacket, n)
	ps := make([]scheduler.Packet, n)
	for i := range pk {
		pk[i] = satPacket{units: units, epoch: &epoch}
		ps[i] = &pk[i]
	}
	k := &keeper{s: s, st: st, kick: make(chan struct{}, 1), done: make(chan struct{})}
	if err := s.SetSentinel(st, k); err != nil {
		return SatPoint{}, err
	}
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(context.Background()) }()

	var lag time.Duration
	interval := float64(time.Second) / rate
	for sent := 0; sent < n; {
		now := time.Since(epoch)
		due := min(int(float64(now)/interval)+1, n) // packets 0..due-1 are due
		if due <= sent {
			time.Sleep(time.Duration(float64(sent)*interval) - now)
			continue
		}
		if l := now - time.Duration(float64(due-1)*interval); l > lag {
			lag = l
		}
		stamp := int64(time.Since(epoch))
		for i := sent; i < due; i++ {
			pk[i].submit = stamp
		}
		var err error
		if due-sent == 1 {
			err = s.Add(ps[sent], st)
		} else {
			err = s.AddAll(ps[sent:due], st)
		}
		if err != nil {
			close(k.done)
			<-runErr
			return SatPoint{}, err
		}
		sent = due
		select {
		case k.kick <- struct{}{}:
		default:
		}
	}
	close(k.done)
	if err := <-runErr; err != nil {
		return SatPoint{}, err
	}
	// Achieved throughput counts from the start of the schedule (packet 0
	// is due at the epoch), not from the first submission: a generator
	// that starts late and catches up would otherwise show more than was
	// offered.
	lat := make([]float64, n)
	var last int64
	for i := range pk {
		if pk[i].end == 0 {
			return SatPoint{}, fmt.Errorf("saturate: packet %d never ran", i)
		}
		lat[i] = float64(pk[i].start - pk[i].submit)
		last = max(last, pk[i].end)
	}
	sort.Float64s(lat)
	return SatPoint{
		Cost: cost, Offered: rate, N: n, Lag: lag, Workers: o.Workers,
		Achieved: float64(n) / (float64(last) / 1e9),
		P50:      time.Duration(quantile(lat, 0.50)),
		P99:      time.Duration(quantile(lat, 0.99)),
	}, nil
}

// quantile of sorted xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

// SaturationPoint returns, for the points of one cost, the highest offered
// rate the scheduler kept up with: the step completed at least 95% of the
// offered rate and its median packet waited at most max(1 ms, 100 × cost)
// to start. Beyond saturation the queue grows for the whole step, so the
// median wait jumps to many milliseconds and stays there at every higher
// rate; a single slow p99 at a low rate (a timer or an OS wake-up) does not
// count as saturation. ok is false if no step passed.
func SaturationPoint(pts []SatPoint) (rate float64, ok bool) {
	for _, p := range pts {
		if satPass(p) && p.Offered > rate {
			rate, ok = p.Offered, true
		}
	}
	return rate, ok
}

func satPass(p SatPoint) bool {
	return p.Achieved >= 0.95*p.Offered && p.P50 <= max(time.Millisecond, 100*p.Cost)
}

// byCost groups points by cost, in the order given.
func byCost(pts []SatPoint) ([]time.Duration, map[time.Duration][]SatPoint) {
	var costs []time.Duration
	m := map[time.Duration][]SatPoint{}
	for _, p := range pts {
		if _, ok := m[p.Cost]; !ok {
			costs = append(costs, p.Cost)
		}
		m[p.Cost] = append(m[p.Cost], p)
	}
	return costs, m
}

// WriteSatRaw writes the points in the Go benchmark format, after the
// fingerprint.
func WriteSatRaw(w io.Writer, fp *Fingerprint, workers int, pol system.Policy, pts []SatPoint) error {
	bw := benchfmt.NewWriter(w)
	cfg := fp.Config()
	for _, p := range pts {
		r := &benchfmt.Result{Config: cfg, Iters: p.N,
			Name: benchfmt.Name(fmt.Sprintf("Saturation/sys=wsched/policy=%s/cost=%s/rate=%.0f/workers=%d", pol.Spec, costName(p.Cost), p.Offered, workers)),
			Values: []benchfmt.Value{
				{Value: float64(p.P50), Unit: "p50-ns"},
				{Value: float64(p.P99), Unit: "p99-ns"},
				{Value: math.Round(p.Achieved), Unit: "achieved-packets/s"},
				{Value: float64(p.Lag), Unit: "generator-lag-ns"},
			}}
		if err := bw.Write(r); err != nil {
			return err
		}
	}
	return nil
}

func costName(d time.Duration) string {
	return strconv.FormatInt(d.Nanoseconds(), 10) + "ns"
}

// WriteSatSummary writes a table per cost and the saturation points.
func WriteSatSummary(w io.Writer, pts []SatPoint) {
	costs, m := byCost(pts)
	for _, c := range costs {
		fmt.Fprintf(w, "## packet cost %v\n\n", c)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "offered/s\tachieved/s\tkept up\tp50\tp99\tpackets\tgenerator lag\t")
		for _, p := range m[c] {
			fmt.Fprintf(tw, "%.0f\t%.0f\t%.0f%%\t%s\t%s\t%d\t%s\t\n", p.Offered, p.Achieved, 100*p.Achieved/p.Offered,
				FormatNs(float64(p.P50)), FormatNs(float64(p.P99)), p.N, FormatNs(float64(p.Lag)))
		}
		tw.Flush()
		if r, ok := SaturationPoint(m[c]); ok {
			fmt.Fprintf(w, "\nsaturation point: %.0f packets/s (%.0f%% of the nominal %d-worker capacity workers/cost)\n\n",
				r, 100*r*c.Seconds()/float64(m[c][0].Workers), m[c][0].Workers)
		} else {
			fmt.Fprintf(w, "\nsaturation point: below the lowest rate measured\n\n")
		}
	}
	fmt.Fprintf(w, "kept up = achieved / offered. Saturation point: the highest offered rate whose step kept up ≥ 95%% with a median wait ≤ max(1 ms, 100 × cost).\n")
}

// PlotSaturation writes the curves: p99 (solid) and p50 (dashed) latency
// against offered rate, one color per packet cost, log–log, with the
// saturation points marked.
func PlotSaturation(pts []SatPoint, path string) error {
	costs, m := byCost(pts)
	p := plot.New()
	p.Title.Text = "Open-loop saturation: p99 (solid), p50 (dashed)"
	p.X.Label.Text = "offered rate (packets/s, log)"
	p.Y.Label.Text = "latency (log)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = countTicks{}, nsTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(60), -vg.Points(10)
	p.Add(plotter.NewGrid())
	for i, c := range costs {
		var p99, p50 plotter.XYs
		for _, pt := range m[c] {
			p99 = append(p99, plotter.XY{X: pt.Offered, Y: math.Max(float64(pt.P99), 1)})
			p50 = append(p50, plotter.XY{X: pt.Offered, Y: math.Max(float64(pt.P50), 1)})
		}
		col := plotutil.Color(i)
		l99, s99, err := plotter.NewLinePoints(p99)
		if err != nil {
			return err
		}
		l99.Color, s99.Color, s99.Shape = col, col, draw.CircleGlyph{}
		l50, err := plotter.NewLine(p50)
		if err != nil {
			return err
		}
		l50.Color = col
		l50.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(l99, s99, l50)
		p.Legend.Add("cost "+c.String(), l99, s99)
		if r, ok := SaturationPoint(m[c]); ok {
			for _, pt := range m[c] {
				if pt.Offered == r {
					mk, err := plotter.NewScatter(plotter.XYs{{X: r, Y: math.Max(float64(pt.P99), 1)}})
					if err != nil {
						return err
					}
					mk.Shape = draw.RingGlyph{}
					mk.Radius = vg.Points(7)
					mk.Color = color.Black
					p.Add(mk)
				}
			}
		}
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, filepath.Clean(path))
}

// SatPointsFromSet rebuilds saturation points from a raw file's results
// (names "Saturation/…/cost=Nns/rate=R/workers=W").
func SatPointsFromSet(s *Set) []SatPoint {
	var out []SatPoint
	for _, n := range s.Names {
		base, kv := nameParts(n)
		if base != "Saturation" {
			continue
		}
		var p SatPoint
		cost, _ := strconv.ParseInt(strings.TrimSuffix(kv["cost"], "ns"), 10, 64)
		p.Cost = time.Duration(cost)
		p.Offered, _ = strconv.ParseFloat(kv["rate"], 64)
		p.Workers, _ = strconv.Atoi(kv["workers"])
		if it := s.Iters(n); len(it) > 0 {
			p.N = it[0]
		}
		first := func(unit string) float64 {
			if v := s.Values(n, unit); len(v) > 0 {
				return v[0]
			}
			return 0
		}
		p.P50 = time.Duration(first("p50-ns"))
		p.P99 = time.Duration(first("p99-ns"))
		p.Achieved = first("achieved-packets/s")
		p.Lag = time.Duration(first("generator-lag-ns"))
		out = append(out, p)
	}
	return out
}
