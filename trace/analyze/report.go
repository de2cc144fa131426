package analyze

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "wsched trace: %s, %s, %s, span %s", plural(r.Workers, "worker"), plural(len(r.Cycles), "cycle"), plural(r.Packets, "packet"), dur(r.SpanNs))
	if r.Dropped > 0 {
		fmt.Fprintf(&b, ", %d EVENTS DROPPED (figures are partial)", r.Dropped)
	}
	b.WriteString("\n")
	writeVerdicts(&b, r)
	for _, c := range r.Cycles {
		fmt.Fprintf(&b, "\ncycle %d\n", c.Cycle)
		writeWindow(&b, "  ", c.Window)
		for _, s := range c.Stages {
			fmt.Fprintf(&b, "  stage %d %s\n", s.Stage, s.Name)
			if s.FromWorkNs > 0 {
				fmt.Fprintf(&b, "    from when its work could start: makespan %s, ratio %.2f (the window below runs from its opening)\n", dur(s.FromWorkNs), s.FromWorkRatio)
			}
			writeWindow(&b, "    ", s.Window)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeWindow(b *strings.Builder, in string, w Window) {
	fmt.Fprintf(b, "%smakespan %s, %s, work %s", in, dur(w.MakespanNs), plural(w.Packets, "packet"), dur(w.WorkNs))
	if w.LowerBoundNs > 0 {
		fmt.Fprintf(b, ", lower bound %s (%s), ratio %.2f", dur(w.LowerBoundNs), w.BoundBy, w.Ratio)
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "%sbusy:", in)
	for _, ws := range w.Workers {
		fmt.Fprintf(b, " w%d %.1f%%", ws.Worker, ws.BusyPct)
	}
	if o := w.Others; o != nil {
		if len(w.Workers) > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(b, " %s (no slice of theirs begins or ends in the window): %d in a packet throughout, %d idle (%d parked)",
			plural(o.Workers, "other worker"), o.Busy, o.Workers-o.Busy, o.Parked)
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "%ssteals %d (%s moved); wakes %d", in, w.Steals, plural(int(w.Stolen), "packet"), w.Wakes)
	if w.Wakes > 0 {
		b.WriteString(":")
		if n := w.Wakes - w.FutileWakes - w.UnknownWakes; n > 0 {
			fmt.Fprintf(b, " latency to the woken worker's first packet p50 %s p99 %s max %s (%d);", dur(w.WakeP50Ns), dur(w.WakeP99Ns), dur(w.WakeMaxNs), n)
		}
		if w.BlockedWakes > 0 {
			fmt.Fprintf(b, " %d to a blocked worker (p50 %s);", w.BlockedWakes, dur(w.BlockedWakeP50Ns))
		}
		if w.PolledWakes > 0 {
			fmt.Fprintf(b, " %d to a polling one (p50 %s);", w.PolledWakes, dur(w.PolledWakeP50Ns))
		}
		fmt.Fprintf(b, " %d futile (the worker parked again without a packet)", w.FutileWakes)
		if w.UnknownWakes > 0 {
			fmt.Fprintf(b, ", %d untargeted", w.UnknownWakes)
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "%sidle while work was queued elsewhere:", in)
	for _, ws := range w.Workers {
		fmt.Fprintf(b, " w%d %s", ws.Worker, dur(ws.IdleQueuedNs))
		if p := ws.IdleQueuedParkedNs; p > 0 {
			fmt.Fprintf(b, " (%s parked)", dur(p))
		}
	}
	if o := w.Others; o != nil && o.Workers > o.Busy {
		if len(w.Workers) > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(b, " the %d idle others %s each", o.Workers-o.Busy, dur(o.IdleQueuedNs))
	}
	fmt.Fprintf(b, "; %d gaps >= %s", w.Gaps, dur(GapThresholdNs))
	if w.Gaps > 0 {
		if w.LongestGapWork >= 0 {
			fmt.Fprintf(b, ", longest %s on w%d", dur(w.LongestGapNs), w.LongestGapWork)
		} else {
			fmt.Fprintf(b, ", longest %s on each idle other", dur(w.LongestGapNs))
		}
	}
	b.WriteString("\n")
	if len(w.Heaviest) > 0 {
		fmt.Fprintf(b, "%sheaviest types:", in)
		for i, t := range w.Heaviest {
			if i > 0 {
				b.WriteString(";")
			}
			fmt.Fprintf(b, " %s %dx total %s max %s", t.Name, t.Count, dur(t.TotalNs), dur(t.MaxNs))
		}
		b.WriteString("\n")
	}
	if c := w.Critical; c.Length > 0 {
		fmt.Fprintf(b, "%scritical path (approximate): %s", in, plural(c.Length, "packet"))
		if c.Worker >= 0 {
			fmt.Fprintf(b, " ending on w%d", c.Worker)
		}
		fmt.Fprintf(b, ", busy %s of its %s span", dur(c.BusyNs), dur(c.SpanNs))
		if c.DelayNs > 0 {
			fmt.Fprintf(b, ", started %s into the window", dur(c.DelayNs))
		}
		if c.Steals > 0 {
			fmt.Fprintf(b, ", through %s", plural(c.Steals, "steal"))
		}
		b.WriteString("; longest:")
		for i, p := range c.Packets {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(b, " %s %s", p.Name, dur(p.DurNs))
			if p.Stolen {
				b.WriteString(" (stolen)")
			}
		}
		b.WriteString("\n")
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func dur(ns int64) string { return time.Duration(ns).String() }

// writeVerdicts writes the verdicts, then the summary over the cycles.
func writeVerdicts(b *strings.Builder, r *Report) {
	if len(r.Summary) == 0 {
		return
	}
	b.WriteString("\n")
	if len(r.Verdicts) == 0 {
		fmt.Fprintf(b, "verdict: every stage within %.2f× its bound\n", VerdictThreshold)
	}
	for _, v := range r.Verdicts {
		from := "from its opening"
		if v.FromWork {
			from = "from when its work could start"
		}
		fmt.Fprintf(b, "verdict: cycle %d %s %.2f× its bound (%s): %s: %s", v.Cycle, v.Name, v.Ratio, from, causeName(v.Cause), v.Because)
		switch {
		case v.Fix != "":
			fmt.Fprintf(b, "; fix: %s (-policy %s): replayed %.2f, with it %.2f\n", v.FixText, v.Fix, v.Simulated, v.Predicted)
		case v.Simulated > 0:
			fmt.Fprintf(b, "; %s (replayed %.2f)\n", v.FixText, v.Simulated)
		default:
			fmt.Fprintf(b, "; %s\n", v.FixText)
		}
	}
	if r.PredictionNote != "" && len(r.Verdicts) > 0 {
		fmt.Fprintf(b, "(%s)\n", r.PredictionNote)
	}
	b.WriteString("summary over the cycles:")
	for i, s := range r.Summary {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(b, " %s ratio %.2f (%.2f-%.2f)", s.Name, s.Median, s.Min, s.Max)
		if s.Over > 0 {
			fmt.Fprintf(b, ", over %.1f in %d of %d", VerdictThreshold, s.Over, s.Cycles)
			var cs []string
			for c, n := range s.Causes {
				cs = append(cs, fmt.Sprintf("%s ×%d", causeName(c), n))
			}
			slices.Sort(cs)
			fmt.Fprintf(b, " (%s)", strings.Join(cs, ", "))
			if s.Fix != "" {
				fmt.Fprintf(b, ", fix %s: median %.2f predicted", s.Fix, s.Predicted)
			}
		}
	}
	from := "from when its work could start"
	for _, s := range r.Summary {
		if !s.FromWork {
			from = "from its opening (the trace does not say when its packets were queued)"
		}
	}
	fmt.Fprintf(b, "; ratios %s\n", from)
}

func causeName(c string) string {
	switch c {
	case CauseHeavyLate:
		return "one packet longer than the rest can balance"
	case CauseLateWakeups:
		return "late wake-ups"
	case CauseIdleQueued:
		return "workers idle while work sat queued on another"
	case CauseParallelism:
		return "too little work at a time"
	}
	return c
}
