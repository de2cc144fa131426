package simulate

import (
	"slices"

	"github.com/wsched/wsched/trace"
)

// Result is a replay's prediction.
type Result struct {
	Config  Config `json:"-"`
	Workers int    `json:"workers"`
	Policy  string `json:"policy"`
	// Cycles holds each replayed cycle's figures, Stages each stage's
	// medians over the cycles.
	Cycles []CycleResult   `json:"cycles"`
	Stages []StageSummary  `json:"stages"`
	Events int64           `json:"simulated_events"`
	snap   *trace.Snapshot `json:"-"`
	// steps counts what the replay visited besides the events it
	// simulated: heap entries (replaced ones too), workers, stages and
	// list entries, one each. Tests hold it to a multiple of the events
	// and of what the file holds: the replay's time is O(steps log w).
	steps int64
}

// CycleResult is one replayed cycle.
type CycleResult struct {
	Cycle      uint64  `json:"cycle"`
	MakespanNs int64   `json:"makespan_ns"`
	Stages     []Stage `json:"stages"` // stages 1..n, in order
}

// Stage holds one stage's figures in one cycle, recorded or predicted,
// with both of the project's definitions of its makespan:
//
//   - Makespan, from when its work could start to its last packet's end:
//     the later of its opening and the queuing of its first packet (the
//     demo's stage time, examples/stagetime, whose prepare model opens
//     Prepare when StopMutators queues the stage's work);
//   - Window, from its opening to its close (wsched analyze's stage
//     window, which includes whatever ran before its work was queued).
//
// Bound is max(longest packet, work ÷ workers); Ratio is Makespan ÷
// Bound and WindowRatio Window ÷ Bound.
type Stage struct {
	Stage     int    `json:"stage"`
	Name      string `json:"name"`
	Packets   int    `json:"packets"`
	WorkNs    int64  `json:"work_ns"`
	LongestNs int64  `json:"longest_ns"`
	Longest   string `json:"longest"`
	// LongestStartNs is when the longest packet began (from the cycle's
	// start); LongestAdded that an add call queued it (Add, AddAll), so
	// that Priority could have queued it.
	LongestStartNs int64   `json:"longest_start_ns"`
	LongestAdded   bool    `json:"longest_added"`
	OpenNs         int64   `json:"open_ns"` // from the cycle's start
	StartNs        int64   `json:"work_start_ns"`
	EndNs          int64   `json:"last_end_ns"`
	MakespanNs     int64   `json:"makespan_ns"`
	WindowNs       int64   `json:"window_ns"`
	BoundNs        int64   `json:"bound_ns"`
	Ratio          float64 `json:"ratio"`
	WindowRatio    float64 `json:"window_ratio"`
	// Utilisation is work ÷ (workers × makespan).
	Utilisation float64 `json:"utilisation"`
}

// StageSummary is a stage's medians over the cycles.
type StageSummary struct {
	Stage       int     `json:"stage"`
	Name        string  `json:"name"`
	MakespanNs  int64   `json:"makespan_ns"`
	BoundNs     int64   `json:"bound_ns"`
	Ratio       float64 `json:"ratio"`
	WindowNs    int64   `json:"window_ns"`
	WindowRatio float64 `json:"window_ratio"`
	Utilisation float64 `json:"utilisation"`
}

// Snapshot returns the replayed run's events (Options.Record), for
// perfetto.Write; nil without Record.
func (r *Result) Snapshot() *trace.Snapshot { return r.snap }

// stageFigures computes stages 1..cy.Stages of one cycle from each
// packet's start, end and queuing time and the stages' opening and close
// times (-1: never), on workers workers.
func stageFigures(workers int, cy *Cycle, open, closed, starts, ends, queued []int64) []Stage {
	out := make([]Stage, cy.Stages+1)
	for st := 1; st <= cy.Stages; st++ {
		out[st] = Stage{Stage: st, StartNs: -1}
	}
	first := make([]int64, cy.Stages+1)
	for i := range first {
		first[i] = -1
	}
	for i, p := range cy.Packets {
		st := int(p.Stage)
		if st < 1 || st > cy.Stages {
			continue
		}
		o := &out[st]
		d := ends[i] - starts[i]
		o.Packets++
		o.WorkNs += d
		if d > o.LongestNs || o.Packets == 1 {
			o.LongestNs, o.Longest, o.LongestStartNs = d, nameOf(cy, p.Name), starts[i]-cy.startOf()
			o.LongestAdded = i < len(cy.addedBy) && cy.addedBy[i] >= 0
		}
		o.EndNs = max(o.EndNs, ends[i])
		if first[st] < 0 || queued[i] < first[st] {
			first[st] = queued[i]
		}
	}
	for st := 1; st <= cy.Stages; st++ {
		o := &out[st]
		if open[st] >= 0 {
			o.OpenNs = open[st] - cy.startOf()
			o.WindowNs = max(closed[st]-open[st], 0)
		}
		if o.Packets == 0 {
			continue
		}
		start := max(open[st], first[st])
		if open[st] < 0 {
			start = first[st]
		}
		o.StartNs = start - cy.startOf()
		o.MakespanNs = max(o.EndNs-start, 0)
		o.EndNs -= cy.startOf()
		o.BoundNs = max(o.LongestNs, (o.WorkNs+int64(workers)-1)/int64(workers))
		if o.BoundNs > 0 {
			o.Ratio = float64(o.MakespanNs) / float64(o.BoundNs)
			o.WindowRatio = float64(o.WindowNs) / float64(o.BoundNs)
		}
		if o.MakespanNs > 0 {
			o.Utilisation = float64(o.WorkNs) / float64(int64(workers)*o.MakespanNs)
		}
	}
	return out[1:]
}

// names is set by Load for stageFigures' packet names.
func nameOf(cy *Cycle, i int32) string {
	if cy.names != nil && int(i) < len(cy.names) {
		return cy.names[i]
	}
	return ""
}

// startOf is the time stage figures count from: the recorded cycle's
// start, or the replay's (set while it computes them).
func (cy *Cycle) startOf() int64 { return cy.base }

// cycleResult computes the replayed cycle's figures.
func (s *sim) cycleResult() CycleResult {
	cy := s.cy
	starts := make([]int64, len(cy.Packets))
	ends := make([]int64, len(cy.Packets))
	queued := make([]int64, len(cy.Packets))
	for i := range s.pk {
		starts[i], ends[i], queued[i] = s.pk[i].begin, s.pk[i].end, s.pk[i].queuedAt
	}
	saved := cy.base
	cy.base = s.open[0]
	st := stageFigures(s.n, cy, s.open, s.closed, starts, ends, queued)
	cy.base = saved
	for i := range st {
		st[i].Name = s.wl.Stages[min(st[i].Stage, len(s.wl.Stages)-1)]
	}
	return CycleResult{Cycle: cy.Number, MakespanNs: s.cycleEnd - s.open[0], Stages: st}
}

// summarize fills r.Stages with each stage's medians over the cycles.
func (r *Result) summarize() {
	r.Policy = r.Config.String()
	r.Stages = Summarize(r.Cycles)
}

// Summarize returns each stage's medians over cycles (stages matched by
// StageID; a cycle without the stage does not count).
func Summarize(cycles []CycleResult) []StageSummary {
	var out []StageSummary
	for st := 1; ; st++ {
		var ms, bs, ws []int64
		var rs, wrs, us []float64
		name := ""
		for _, c := range cycles {
			if st-1 < len(c.Stages) {
				s := c.Stages[st-1]
				if s.Packets == 0 {
					continue
				}
				name = s.Name
				ms, bs, ws = append(ms, s.MakespanNs), append(bs, s.BoundNs), append(ws, s.WindowNs)
				rs, wrs, us = append(rs, s.Ratio), append(wrs, s.WindowRatio), append(us, s.Utilisation)
			}
		}
		found := false
		for _, c := range cycles {
			if st-1 < len(c.Stages) {
				found = true
			}
		}
		if !found {
			return out
		}
		if len(ms) == 0 {
			continue
		}
		out = append(out, StageSummary{Stage: st, Name: name, MakespanNs: median(ms), BoundNs: median(bs),
			Ratio: median(rs), WindowNs: median(ws), WindowRatio: median(wrs), Utilisation: median(us)})
	}
}

// median is the median of xs (the mean of the middle two for an even
// count); xs is sorted in place.
func median[T int64 | float64](xs []T) T {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
