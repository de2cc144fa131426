package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/trace/internal/wsfile"
	"github.com/wsched/wsched/trace/simulate"
)

// VerdictThreshold is the ratio to its bound above which a stage gets a
// verdict.
const VerdictThreshold = 1.1

// Causes a verdict names.
const (
	CauseHeavyLate   = "heavy-late"   // one packet longer than the rest can balance, begun late
	CauseLateWakeups = "late-wakeups" // workers asleep while work was queued
	CauseIdleQueued  = "idle-queued"  // workers awake and idle while work sat queued on another
	CauseParallelism = "parallelism"  // idle with nothing queued: too little work at a time
)

// Verdict says why one stage of one cycle ran over VerdictThreshold times
// its bound, what would fix it, and what the replay predicts with that
// fix.
type Verdict struct {
	Cycle uint64 `json:"cycle"`
	Stage int    `json:"stage"`
	Name  string `json:"name"`
	// Ratio is the stage's makespan over its bound, from when its work
	// could start (FromWork) when the trace says when its packets were
	// queued, else from its opening (the window's ratio).
	Ratio    float64 `json:"ratio"`
	FromWork bool    `json:"ratio_from_work"`
	Cause    string  `json:"cause"`
	Because  string  `json:"because"`
	// Fix is the option that the replay found best, as `wsched simulate
	// -policy` takes it ("priority=NAME", "wake-n", "steal-half", ...),
	// or "" when none helps; FixText says it in words.
	Fix     string `json:"fix"`
	FixText string `json:"fix_text"`
	// Simulated is the replay's ratio of the stage as recorded, Predicted
	// its ratio with Fix; both 0 when the trace cannot be replayed (see
	// Report.PredictionNote).
	Simulated float64 `json:"simulated_ratio"`
	Predicted float64 `json:"predicted_ratio"`
}

// StageSummary is one stage over every cycle.
type StageSummary struct {
	Stage    int     `json:"stage"`
	Name     string  `json:"name"`
	Cycles   int     `json:"cycles"`
	Median   float64 `json:"median_ratio"`
	Min      float64 `json:"min_ratio"`
	Max      float64 `json:"max_ratio"`
	FromWork bool    `json:"ratio_from_work"`
	Over     int     `json:"cycles_over_threshold"`
	// Causes counts the verdicts' causes; Fix is the most frequent fix,
	// with the median of its predicted ratios.
	Causes    map[string]int `json:"causes,omitempty"`
	Fix       string         `json:"fix,omitempty"`
	Predicted float64        `json:"predicted_ratio,omitempty"`
}

// candidate is a fix the replay tries.
type candidate struct {
	fix, text string
	apply     func(*simulate.Config)
}

// verdicts fills r.Verdicts and r.Summary: causes from the analysis, and
// for traces that say how their packets were queued, each cause's fixes
// replayed on the recorded workers. The replays cost one run of the
// trace's cycles per fix tried (at most 1 + 9). The replays read the
// file as analyze decoded it.
func (r *Report) verdicts(f *wsfile.File) {
	wl, err := simulate.FromFile(f)
	switch {
	case err != nil:
		r.PredictionNote = "no predictions: " + err.Error()
		wl = nil
	case wl.Workers > simulate.MaxWorkers:
		r.PredictionNote = fmt.Sprintf("no predictions: the trace claims %d workers, the replay takes at most %d", wl.Workers, simulate.MaxWorkers)
		wl = nil
	}
	// The recorded figures from when each stage's work could start.
	recorded := map[[2]uint64]simulate.Stage{}
	if wl != nil {
		for _, c := range wl.Cycles {
			for _, s := range c.Recorded {
				recorded[[2]uint64{c.Number, uint64(s.Stage)}] = s
			}
		}
		for ci := range r.Cycles {
			c := &r.Cycles[ci]
			for si := range c.Stages {
				s := &c.Stages[si]
				if rs, ok := recorded[[2]uint64{c.Cycle, uint64(s.Stage)}]; ok && s.Stage > 0 && rs.Packets > 0 {
					s.FromWorkNs, s.FromWorkRatio = rs.MakespanNs, rs.Ratio
				}
			}
		}
	}
	type flagged struct {
		v     Verdict
		stage *Stage
		rec   simulate.Stage
	}
	var fl []flagged
	causes := map[string]bool{}
	for _, c := range r.Cycles {
		for si := range c.Stages {
			s := &c.Stages[si]
			if s.Stage == 0 || s.Packets == 0 {
				continue
			}
			ratio, fromWork := s.Ratio, false
			if s.FromWorkRatio > 0 {
				ratio, fromWork = s.FromWorkRatio, true
			}
			if ratio <= VerdictThreshold {
				continue
			}
			rec := recorded[[2]uint64{c.Cycle, uint64(s.Stage)}]
			v := Verdict{Cycle: c.Cycle, Stage: s.Stage, Name: s.Name, Ratio: ratio, FromWork: fromWork}
			v.Cause, v.Because = cause(s, rec, r.Workers)
			causes[v.Cause] = true
			fl = append(fl, flagged{v, s, rec})
		}
	}
	// Replays: as recorded, then each fix the causes call for.
	var base *simulate.Result
	var cands []candidate
	results := map[string]*simulate.Result{}
	if wl != nil && len(fl) > 0 {
		cfg := wl.Config
		cfg.Workers = wl.Workers
		if base, err = simulate.Run(wl, cfg, simulate.Options{}); err != nil {
			r.PredictionNote = "no predictions: " + err.Error()
			base = nil
		} else {
			r.replayed += base.Events
		}
		if base != nil {
			cands = candidates(cfg, causes, fl[0].rec, func(yield func(string, bool) bool) {
				for _, f := range fl {
					if f.v.Cause == CauseHeavyLate && !yield(f.rec.Longest, f.rec.LongestAdded) {
						return
					}
				}
			})
			for _, c := range cands {
				cc := cfg
				c.apply(&cc)
				if res, err := simulate.Run(wl, cc, simulate.Options{}); err == nil {
					results[c.fix] = res
					r.replayed += res.Events
				}
			}
		}
	}
	// Each replay's stage ratios by cycle and stage (the first stage of
	// that number with packets, in the first cycle of that number that
	// has one): one
	// pass over a replay's stages, then a lookup per verdict, so that
	// verdicts × stages is never paid.
	index := map[*simulate.Result]map[[2]uint64]float64{}
	ratioIn := func(res *simulate.Result, cycle uint64, stage int) (float64, bool) {
		m, ok := index[res]
		if !ok {
			m = map[[2]uint64]float64{}
			for _, c := range res.Cycles {
				for _, s := range c.Stages {
					k := [2]uint64{c.Cycle, uint64(s.Stage)}
					if _, dup := m[k]; !dup && s.Packets > 0 {
						m[k] = s.Ratio
					}
				}
			}
			index[res] = m
		}
		x, ok := m[[2]uint64{cycle, uint64(stage)}]
		return x, ok
	}
	for i := range fl {
		v := &fl[i].v
		if base != nil {
			v.Simulated, _ = ratioIn(base, v.Cycle, v.Stage)
			best, bestRatio := candidate{}, v.Simulated
			for _, c := range cands {
				if !fits(c, v.Cause, fl[i].rec) {
					continue
				}
				if res := results[c.fix]; res != nil {
					if x, ok := ratioIn(res, v.Cycle, v.Stage); ok && x < bestRatio-0.02 {
						best, bestRatio = c, x
					}
				}
			}
			if best.fix != "" {
				v.Fix, v.FixText, v.Predicted = best.fix, best.text, bestRatio
			}
		}
		if v.Fix == "" {
			v.FixText = noFix(v.Cause, fl[i].rec, base != nil)
		}
		r.Verdicts = append(r.Verdicts, *v)
	}
	r.Summary = summarize(r)
}

// cause classifies a stage over its bound from its figures.
func cause(s *Stage, rec simulate.Stage, workers int) (string, string) {
	w := s.Window
	ms := w.MakespanNs
	if s.FromWorkNs > 0 {
		ms = s.FromWorkNs
	}
	var parked, awake int64
	for _, ws := range w.Workers {
		parked += ws.IdleQueuedParkedNs
		awake += ws.IdleQueuedNs - ws.IdleQueuedParkedNs
	}
	if o := w.Others; o != nil {
		idle := int64(o.Workers-o.Busy) * o.IdleQueuedNs
		parked += int64(o.Parked) * o.IdleQueuedNs
		awake += idle - int64(o.Parked)*o.IdleQueuedNs
	}
	bound := w.LowerBoundNs
	if rec.Packets > 0 {
		bound = rec.BoundNs
	}
	// The stage ended with its longest packet, at least half its bound,
	// which began late: one packet longer than the rest can balance.
	if rec.Packets > 0 && rec.LongestNs >= bound/2 && rec.LongestStartNs+rec.LongestNs >= rec.EndNs-bound/50 {
		late := rec.LongestStartNs - rec.StartNs
		if late > bound/10 {
			return CauseHeavyLate, fmt.Sprintf("%s (%v; the bound is %v) began %v after the stage's work could start and ended it",
				rec.Longest, dur3(rec.LongestNs), dur3(bound), dur3(late))
		}
	}
	switch {
	case parked >= awake && parked > ms/10:
		because := fmt.Sprintf("workers slept %v in all while work was queued", dur3(parked))
		if n := w.Wakes - w.FutileWakes - w.UnknownWakes; n > 0 {
			because += fmt.Sprintf(" (%d wake-ups to a first packet, p50 %v; %d to blocked workers)", n, dur3(w.WakeP50Ns), w.BlockedWakes)
		} else {
			because += fmt.Sprintf(" (%d wake-ups, none followed by a packet in the stage)", w.Wakes)
		}
		return CauseLateWakeups, because
	case awake > ms/10:
		return CauseIdleQueued, fmt.Sprintf("workers were awake and idle %v in all while work sat queued on another (%d steals)", dur3(awake), w.Steals)
	case w.LongestNs >= bound*9/10:
		return CauseHeavyLate, fmt.Sprintf("%s (%v) is the bound; the rest ran beside it", w.Longest, dur3(w.LongestNs))
	}
	return CauseParallelism, fmt.Sprintf("the %d workers were %v idle with nothing queued for them: too little work at a time", workers, dur3(max(int64(workers)*ms-w.WorkNs, 0)))
}

// candidates returns the fixes the causes call for, other than the
// recorded configuration's own policies: Priority for each heavy packet
// an add queued; wake policies and a longer ParkSpin for late wake-ups;
// steal, take and local policies for idle workers beside queued work.
func candidates(cfg simulate.Config, causes map[string]bool, _ simulate.Stage, heavy func(func(string, bool) bool)) []candidate {
	var out []candidate
	seen := map[string]bool{}
	addPolicy := func(k policy.Kind, text string) {
		var cur policy.Kind
		switch k.Family() {
		case policy.FamilyWake:
			cur = cfg.Wake
		case policy.FamilySteal:
			cur = cfg.Steal
		case policy.FamilyTake:
			cur = cfg.Take
		case policy.FamilyLocal:
			cur = cfg.Local
		}
		if k == cur || seen[k.String()] {
			return
		}
		seen[k.String()] = true
		out = append(out, candidate{fix: k.String(), text: text, apply: func(c *simulate.Config) { c.Set(k.String()) }})
	}
	if causes[CauseHeavyLate] {
		heavy(func(name string, added bool) bool {
			if added && name != "" && !seen["priority="+name] {
				seen["priority="+name] = true
				out = append(out, candidate{fix: "priority=" + name, text: "queue " + name + " with Priority",
					apply: func(c *simulate.Config) { c.Priority = append(c.Priority[:len(c.Priority):len(c.Priority)], name) }})
			}
			return len(out) < 3
		})
	}
	if causes[CauseHeavyLate] || causes[CauseLateWakeups] {
		addPolicy(policy.WakeN, "Wake = WakeN (wake as many workers as packets arrived)")
		addPolicy(policy.WakeAll, "Wake = WakeAll")
		if cfg.WakeCalls == policy.Default {
			out = append(out, candidate{fix: "wake_calls=wake-n", text: "add with the WakeN option where a call chose another",
				apply: func(c *simulate.Config) { c.WakeCalls = policy.WakeN }})
		}
	}
	if causes[CauseLateWakeups] && cfg.ParkSpin < time.Millisecond {
		out = append(out, candidate{fix: "park_spin=1ms", text: "Config.ParkSpin = 1ms (parked workers poll longer)",
			apply: func(c *simulate.Config) { c.ParkSpin = time.Millisecond }})
	}
	if causes[CauseIdleQueued] || causes[CauseHeavyLate] {
		addPolicy(policy.StealHalf, "Steal = StealHalf")
		addPolicy(policy.StealOne, "Steal = StealOne")
		addPolicy(policy.TakeFair, "Take = TakeFair (a worker takes at most its fair share of a bucket)")
		addPolicy(policy.LocalLIFO, "Local = LocalLIFO (thieves see spawned packets at once)")
	}
	return out
}

// fits reports whether candidate c addresses cause (Priority only for a
// heavy packet of that stage).
func fits(c candidate, cause string, rec simulate.Stage) bool {
	if name, ok := strings.CutPrefix(c.fix, "priority="); ok {
		return cause == CauseHeavyLate && name == rec.Longest
	}
	return true
}

// noFix says what to do when no scheduler option helps.
func noFix(cause string, rec simulate.Stage, replayed bool) string {
	var s string
	switch {
	case cause == CauseHeavyLate && rec.Longest != "":
		s = "split " + rec.Longest + " into smaller packets"
	case cause == CauseParallelism:
		s = "queue more, smaller packets at a time"
	default:
		s = "no option of the scheduler changes it"
	}
	if replayed {
		return "no scheduler option helps in the replay: " + s
	}
	return s
}

// summarize is each stage over the cycles.
func summarize(r *Report) []StageSummary {
	byStage := map[int]*StageSummary{}
	var order []int
	ratios := map[int][]float64{}
	fixes := map[int]map[string][]float64{}
	for _, c := range r.Cycles {
		for _, s := range c.Stages {
			if s.Stage == 0 || s.Packets == 0 {
				continue
			}
			ss := byStage[s.Stage]
			if ss == nil {
				ss = &StageSummary{Stage: s.Stage, Name: s.Name, FromWork: true, Causes: map[string]int{}}
				byStage[s.Stage] = ss
				order = append(order, s.Stage)
			}
			ratio := s.Ratio
			if s.FromWorkRatio > 0 {
				ratio = s.FromWorkRatio
			} else {
				ss.FromWork = false
			}
			ss.Cycles++
			ratios[s.Stage] = append(ratios[s.Stage], ratio)
		}
	}
	for _, v := range r.Verdicts {
		ss := byStage[v.Stage]
		if ss == nil {
			continue
		}
		ss.Over++
		ss.Causes[v.Cause]++
		if v.Fix != "" {
			if fixes[v.Stage] == nil {
				fixes[v.Stage] = map[string][]float64{}
			}
			fixes[v.Stage][v.Fix] = append(fixes[v.Stage][v.Fix], v.Predicted)
		}
	}
	slices.Sort(order)
	var out []StageSummary
	for _, st := range order {
		ss := byStage[st]
		rs := ratios[st]
		slices.Sort(rs)
		ss.Min, ss.Max, ss.Median = rs[0], rs[len(rs)-1], medianF(rs)
		best := ""
		for f, ps := range fixes[st] {
			if best == "" || len(ps) > len(fixes[st][best]) || len(ps) == len(fixes[st][best]) && f < best {
				best = f
			}
		}
		if best != "" {
			ss.Fix, ss.Predicted = best, medianF(slices.Clone(fixes[st][best]))
		}
		if len(ss.Causes) == 0 {
			ss.Causes = nil
		}
		out = append(out, *ss)
	}
	return out
}

func medianF(xs []float64) float64 {
	slices.SortFunc(xs, cmp.Compare[float64])
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// dur3 rounds a duration to three significant digits.
func dur3(ns int64) time.Duration {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond)
	}
	return d
}
