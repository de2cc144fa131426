package harness

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// A Sweep varies one scheduler setting over a list of values to choose its
// default (defaults come from sweeps, with the data committed, as RabbitMQ chose segment_entry_count).
type Sweep struct {
	Name  string
	Doc   string
	Specs []string // policy specs, one per value
	// Base is the spec of the scheduler's current default value: every
	// other value is compared with it.
	Base string
}

// Sweeps are the settings swept to choose wsched's defaults.
var Sweeps = []Sweep{
	{Name: "batch", Doc: "bucket batch limit (packets taken from a bucket at once)",
		Specs: []string{"batch=1", "batch=2", "batch=4", "batch=8", "batch=16", "batch=32", "batch=64", "batch=128"}, Base: "batch=32"},
	{Name: "spins", Doc: "search rounds before a worker parks",
		Specs: []string{"spins=1", "spins=4", "spins=16", "spins=64", "spins=256"}, Base: "spins=64"},
	{Name: "parkspin", Doc: "how long a parked worker polls for its wake-up before it blocks",
		Specs: []string{"parkspin=off", "parkspin=10us", "parkspin=50us", "parkspin=200us", "parkspin=1ms"}, Base: "parkspin=200us"},
	{Name: "take", Doc: "bucket take: the fair share ⌈depth ÷ workers⌉ capped at the batch, MMTk's fixed batch, or guided (up to 128 while the bucket is deep)",
		Specs: []string{"take=fair", "take=fixed", "take=guided"}, Base: "take=guided"},
	{Name: "order", Doc: "local deque order",
		Specs: []string{"order=lifo", "order=fifo"}, Base: "order=lifo"},
	{Name: "wake", Doc: "wake policy for bulk adds and stage openings",
		Specs: []string{"wake=one", "wake=all", "wake=n", "wake=searcher"}, Base: "wake=n"},
	{Name: "steal", Doc: "steal policy between workers",
		Specs: []string{"steal=one", "steal=half", "steal=batch:4", "steal=batch:16", "steal=batch:32", "steal=batch:64"}, Base: "steal=half"},
}

// LookupSweep returns the named sweep.
func LookupSweep(name string) (Sweep, error) {
	var names []string
	for _, s := range Sweeps {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Sweep{}, fmt.Errorf("unknown sweep %q (known: %s)", name, strings.Join(names, ", "))
}

// WriteSweepTable writes, for a sweep's results, one row per value and one
// column per workload group: the median's ratio to the base value's
// (below 1 is faster), marked "*" where the difference is proven at 95%,
// and the geometric mean of the ratios over the groups. It returns the
// value with the lowest geometric mean.
func WriteSweepTable(w io.Writer, s *Set, sw Sweep) (best string) {
	groups := s.Groups()
	label := func(spec string) string { return "wsched/" + spec }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "value\t")
	for _, g := range groups {
		fmt.Fprintf(tw, "%s\t", g.Key())
	}
	fmt.Fprintln(tw, "geomean\t")
	bestMean := math.Inf(1)
	for _, spec := range sw.Specs {
		fmt.Fprintf(tw, "%s\t", spec)
		logSum, n := 0.0, 0
		for _, g := range groups {
			bi, vi := -1, -1
			for i, l := range g.Labels {
				if l == label(sw.Base) {
					bi = i
				}
				if l == label(spec) {
					vi = i
				}
			}
			if bi < 0 || vi < 0 {
				fmt.Fprint(tw, "-\t")
				continue
			}
			v := Judge(s.Values(g.Names[bi], UnitNsOp), s.Values(g.Names[vi], UnitNsOp))
			mark := ""
			if vi != bi && v.Significant() {
				mark = "*"
			}
			fmt.Fprintf(tw, "%.3f%s (%s)\t", v.Ratio, mark, FormatNs(v.Other.Center))
			if v.Ratio > 0 {
				logSum += math.Log(v.Ratio)
				n++
			}
		}
		gm := math.NaN()
		if n > 0 {
			gm = math.Exp(logSum / float64(n))
			if gm < bestMean {
				bestMean, best = gm, spec
			}
		}
		fmt.Fprintf(tw, "%.3f\t\n", gm)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nratio = median ns/op of the value / median of %s (below 1 = faster); * = difference proven at 95%% confidence (Mann–Whitney U)\n", sw.Base)
	fmt.Fprintf(w, "lowest geometric mean: %s\n", best)
	return best
}

// DetectSweep returns the sweep whose values are exactly the policies of
// the set's wsched targets (and which has no peers), if any.
func DetectSweep(s *Set) (Sweep, bool) {
	specs := map[string]bool{}
	for _, n := range s.Names {
		_, kv := nameParts(n)
		p, ok := kv["policy"]
		if !ok {
			return Sweep{}, false
		}
		specs[p] = true
	}
	for _, sw := range Sweeps {
		if len(sw.Specs) != len(specs) {
			continue
		}
		all := true
		for _, sp := range sw.Specs {
			all = all && specs[sp]
		}
		if all {
			return sw, true
		}
	}
	return Sweep{}, false
}
