package analyze

import (
	"cmp"
	"fmt"
	"os"
	"slices"

	"github.com/wsched/wsched/trace/internal/timeline"
)

// Report is the analysis of one trace.
type Report struct {
	Workers int    `json:"workers"`
	Packets int    `json:"packets"`
	SpanNs  int64  `json:"span_ns"`
	Dropped uint64 `json:"dropped_events"`
	// Cycles holds one entry per cycle; a trace without cycle slices is
	// analysed as one window (Cycle 0).
	Cycles []Cycle `json:"cycles"`
}

// Cycle is one scheduler cycle (one Scheduler.Run).
type Cycle struct {
	Cycle  uint64  `json:"cycle"`
	Window         // the whole cycle, all packets
	Stages []Stage `json:"stages"`
}

// Stage is one stage of a cycle, from its opening to the next stage's
// opening or its close. Its packets are those of that stage (category);
// busy time, steals, wakes and idle gaps count everything in the window.
type Stage struct {
	Stage int    `json:"stage"`
	Name  string `json:"name"`
	Window
}

// Window holds the figures for a time window.
type Window struct {
	StartNs    int64  `json:"start_ns"`
	EndNs      int64  `json:"end_ns"`
	MakespanNs int64  `json:"makespan_ns"`
	Packets    int    `json:"packets"`
	WorkNs     int64  `json:"work_ns"`
	LongestNs  int64  `json:"longest_packet_ns"`
	Longest    string `json:"longest_packet"`
	// LowerBoundNs is max(longest packet, work / workers): no schedule on
	// this many workers can be shorter. Ratio is makespan / lower bound.
	LowerBoundNs int64   `json:"lower_bound_ns"`
	BoundBy      string  `json:"bound_by"` // "longest packet" or "work/workers"
	Ratio        float64 `json:"ratio"`
	// BusyPct is, per worker, the share of the window spent in packets.
	BusyPct []float64 `json:"busy_pct"`
	Steals  int       `json:"steals"`
	Stolen  int64     `json:"stolen_packets"`
	// Wake latency: wake sent → the woken worker's first packet. Futile
	// wakes woke a worker that parked again without running a packet.
	Wakes        int   `json:"wakes"`
	WakeP50Ns    int64 `json:"wake_latency_p50_ns"`
	WakeP99Ns    int64 `json:"wake_latency_p99_ns"`
	WakeMaxNs    int64 `json:"wake_latency_max_ns"`
	FutileWakes  int   `json:"futile_wakes"`
	UnknownWakes int   `json:"untargeted_wakes"`
	// Of the wakes with a latency, those whose worker had blocked (its
	// thread may have slept: the OS had to wake it) and those whose worker
	// was polling for its wake-up or had not parked yet (scheduler's
	// Config.ParkSpin), with each group's median latency. Both zero for
	// traces that do not record it.
	BlockedWakes     int   `json:"blocked_wakes"`
	BlockedWakeP50Ns int64 `json:"blocked_wake_latency_p50_ns"`
	PolledWakes      int   `json:"polled_wakes"`
	PolledWakeP50Ns  int64 `json:"polled_wake_latency_p50_ns"`
	// IdleQueuedNs is, per worker, the time it ran no packet while work
	// was queued elsewhere (an open stage's bucket or another worker's
	// local deque, per the counters). Gaps counts such idle stretches of at
	// least GapThresholdNs.
	IdleQueuedNs []int64 `json:"idle_while_queued_ns"`
	// IdleQueuedParkedNs is the part of IdleQueuedNs each worker spent
	// parked, asleep until a wake-up: time that wake policies (or a lost
	// wake-up) account for. The rest it was awake and ran no packet:
	// searching, taking and stealing, the scheduler's own work between
	// packets, or the OS running something else on its CPU.
	IdleQueuedParkedNs []int64 `json:"idle_while_queued_parked_ns"`
	Gaps               int     `json:"idle_gaps"`
	LongestGapNs       int64   `json:"longest_idle_gap_ns"`
	LongestGapWork     int     `json:"longest_idle_gap_worker"`
	// Critical is the critical path, approximated (see Critical).
	Critical Critical `json:"critical_path"`
	// Heaviest are the packet types with the most total time.
	Heaviest []TypeStat `json:"heaviest_types"`
}

// GapThresholdNs is the shortest idle stretch that Window.Gaps counts.
const GapThresholdNs = 10_000

// Critical is the approximate critical path of a window: the chain of
// packets that ends with the window's last packet to finish, followed
// backwards. wsched does not record which packet spawned which, so each
// step back is the best the trace shows: for a packet that was stolen, the
// packet its victim was running at the steal (the arrow's start); for any
// other, the previous packet on the same worker (it held the worker, or
// spawned the packet into its deque). The chain stops at the window's start.
// BusyNs is the chain's packet time (a victim's packet counts up to the
// steal); the rest of its span was waiting (search, wake-ups, steals), and
// DelayNs is how long after the window opened its first packet started.
// For a cycle it joins its stages' chains (stages are barriers) and Worker
// is -1.
type Critical struct {
	Worker  int   `json:"worker"`         // the worker that ran the last packet
	Length  int   `json:"length"`         // packets on the chain
	BusyNs  int64 `json:"busy_ns"`        // their summed time
	SpanNs  int64 `json:"span_ns"`        // first start to last end
	DelayNs int64 `json:"start_delay_ns"` // window start to first start
	Steals  int   `json:"steals"`         // steps back through a steal arrow
	// Packets are the chain's longest packets, longest first (at most 5).
	Packets []PacketRef `json:"packets"`
}

// PacketRef is one executed packet.
type PacketRef struct {
	Name    string `json:"name"`
	Stage   string `json:"stage"`
	StartNs int64  `json:"start_ns"`
	DurNs   int64  `json:"dur_ns"`
	Stolen  bool   `json:"stolen"`
}

// TypeStat aggregates one packet type.
type TypeStat struct {
	Name    string `json:"name"`
	Count   int    `json:"count"`
	TotalNs int64  `json:"total_ns"`
	MaxNs   int64  `json:"max_ns"`
	MeanNs  int64  `json:"mean_ns"`
}

// How many entries the lists keep.
const (
	topTypes    = 5
	topCritical = 5
)

// File analyses the Perfetto trace at path.
func File(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := Bytes(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Bytes analyses a Perfetto trace written by wsched. Malformed input, a
// truncated file or a trace from another program gives an error, never a
// panic. Memory is linear in len(data).
func Bytes(data []byte) (*Report, error) {
	m, err := load(data)
	if err != nil {
		return nil, err
	}
	r := &Report{Workers: m.workers, Dropped: m.dropped, SpanNs: m.last - m.first}
	for _, p := range m.packets {
		r.Packets += len(p)
	}
	q := newQueues(m)
	cycles := m.cycles
	if len(cycles) == 0 {
		cycles = []cycleSlice{{start: m.first, end: m.last}}
	}
	for _, c := range cycles {
		cr := Cycle{Cycle: c.cycle}
		cr.Window = m.window(q, c.start, c.end, allStages)
		for _, s := range m.stages {
			if s.start < c.start || s.start > c.end {
				continue
			}
			sr := Stage{Stage: s.stage, Name: s.name}
			idx, ok := m.strIdx[s.name]
			if !ok {
				idx = noPackets
			}
			sr.Window = m.window(q, s.start, s.end, idx)
			cr.Stages = append(cr.Stages, sr)
		}
		// Stages are barriers, so the cycle's critical path runs through
		// each stage's.
		if len(cr.Stages) > 0 {
			cr.Critical = Critical{Worker: -1}
			for _, s := range cr.Stages {
				cr.Critical.Length += s.Critical.Length
				cr.Critical.BusyNs += s.Critical.BusyNs
				cr.Critical.SpanNs += s.Critical.SpanNs
				cr.Critical.DelayNs += s.Critical.DelayNs
				cr.Critical.Steals += s.Critical.Steals
				cr.Critical.Packets = append(cr.Critical.Packets, s.Critical.Packets...)
			}
			slices.SortStableFunc(cr.Critical.Packets, func(a, b PacketRef) int { return cmp.Compare(b.DurNs, a.DurNs) })
			if len(cr.Critical.Packets) > topCritical {
				cr.Critical.Packets = cr.Critical.Packets[:topCritical]
			}
		}
		// Unconstrained packets have no stage slice: report them over the
		// whole cycle if there are any. They run beside every stage, so a
		// makespan bound over the cycle means nothing: none is given.
		if u, ok := m.strIdx[timeline.CatUnconstrained]; ok {
			w := m.window(q, c.start, c.end, u)
			w.LowerBoundNs, w.BoundBy, w.Ratio = 0, "", 0
			if w.Packets > 0 {
				cr.Stages = append(cr.Stages, Stage{Stage: 0, Name: timeline.CatUnconstrained, Window: w})
			}
		}
		r.Cycles = append(r.Cycles, cr)
	}
	return r, nil
}

// Packet filters for window: every stage, or a stage with no packets.
const (
	allStages int32 = -1
	noPackets int32 = -2
)

// window computes the figures for [start, end]. The packet figures (count,
// work, bounds, types, critical path) cover the packets that start in the
// window and, unless stage is allStages, have that category (an index into
// m.strs); busy time, steals, wakes and idle time cover everything in the
// window.
func (m *model) window(q *queues, start, end int64, stage int32) Window {
	w := Window{StartNs: start, EndNs: end, MakespanNs: end - start}
	w.BusyPct = make([]float64, m.workers)
	w.IdleQueuedNs = make([]int64, m.workers)
	w.IdleQueuedParkedNs = make([]int64, m.workers)
	types := map[int32]*TypeStat{}
	lastEnd, lastWorker, lastIdx := int64(-1), -1, -1
	for wk, ps := range m.packets {
		var busy int64
		for i := m.firstEndingAfter(wk, start); i < len(ps); i++ {
			p := ps[i]
			if p.start > end {
				break // sorted by start
			}
			// Busy time: any packet, clipped to the window.
			if s, e := max(p.start, start), min(p.end, end); e > s {
				busy += e - s
			}
			if p.start < start || p.start > end || (stage != allStages && p.stage != stage) {
				continue
			}
			d := p.end - p.start
			w.Packets++
			w.WorkNs += d
			if d > w.LongestNs {
				w.LongestNs, w.Longest = d, m.strs[p.name]
			}
			ts := types[p.name]
			if ts == nil {
				ts = &TypeStat{Name: m.strs[p.name]}
				types[p.name] = ts
			}
			ts.Count++
			ts.TotalNs += d
			ts.MaxNs = max(ts.MaxNs, d)
			if p.end > lastEnd {
				lastEnd, lastWorker, lastIdx = p.end, wk, i
			}
		}
		if w.MakespanNs > 0 {
			w.BusyPct[wk] = 100 * float64(busy) / float64(w.MakespanNs)
		}
	}
	if w.Packets > 0 {
		w.LowerBoundNs, w.BoundBy = w.LongestNs, "longest packet"
		if avg := (w.WorkNs + int64(m.workers) - 1) / int64(m.workers); avg > w.LowerBoundNs {
			w.LowerBoundNs, w.BoundBy = avg, "work/workers"
		}
		if w.LowerBoundNs > 0 {
			w.Ratio = float64(w.MakespanNs) / float64(w.LowerBoundNs)
		}
	}
	for _, ts := range types {
		ts.MeanNs = ts.TotalNs / int64(ts.Count)
		w.Heaviest = append(w.Heaviest, *ts)
	}
	slices.SortFunc(w.Heaviest, func(a, b TypeStat) int {
		if c := cmp.Compare(b.TotalNs, a.TotalNs); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	if len(w.Heaviest) > topTypes {
		w.Heaviest = w.Heaviest[:topTypes]
	}
	if lastWorker >= 0 {
		w.Critical = m.critical(lastWorker, lastIdx, start)
	}
	m.stealsAndWakes(&w, start, end)
	q.idle(m, &w, start, end)
	return w
}

// critical follows the chain back from packet idx of worker wk (see
// Critical) to the window's start.
func (m *model) critical(wk, idx int, start int64) Critical {
	c := Critical{Worker: wk}
	var refs []PacketRef
	first, last := m.packets[wk][idx].start, m.packets[wk][idx].end
	// Each step goes to a packet that starts no later; the bound stops a
	// loop of equal timestamps in a hand-made file.
	cut := last // the chain needs packet p up to cut
	for range m.total {
		p := m.packets[wk][idx]
		c.Length++
		c.BusyNs += max(min(p.end, cut)-p.start, 0)
		first = p.start
		refs = append(refs, PacketRef{Name: m.strs[p.name], Stage: m.strs[p.stage], StartNs: p.start, DurNs: p.end - p.start, Stolen: p.flow != 0})
		if src, ok := m.steals[p.flow]; ok && p.flow != 0 && src.victim >= 0 && src.victim < m.workers && src.victim != wk {
			// The packet running on the victim at the steal (or the last
			// one before it).
			vs := m.packets[src.victim]
			j, found := slices.BinarySearchFunc(vs, src.t, func(q slice, t int64) int { return cmp.Compare(q.start, t) })
			if found {
				for j+1 < len(vs) && vs[j+1].start == src.t {
					j++
				}
			} else {
				j--
			}
			if j >= 0 && vs[j].start >= start {
				wk, idx, cut = src.victim, j, src.t
				c.Steals++
				continue
			}
			break
		}
		if idx == 0 || m.packets[wk][idx-1].start < start {
			break
		}
		idx--
		cut = m.packets[wk][idx].end
	}
	c.SpanNs = last - first
	c.DelayNs = first - start
	slices.SortStableFunc(refs, func(a, b PacketRef) int { return cmp.Compare(b.DurNs, a.DurNs) })
	if len(refs) > topCritical {
		refs = refs[:topCritical]
	}
	c.Packets = refs
	return c
}

// stealsAndWakes counts steals and measures wake latencies for instants in
// the window.
func (m *model) stealsAndWakes(w *Window, start, end int64) {
	var lat, blocked, polled []int64
	lo, _ := slices.BinarySearchFunc(m.instants, start, func(i instant, t int64) int { return cmp.Compare(i.t, t) })
	for _, in := range m.instants[lo:] {
		if in.t > end {
			break
		}
		switch in.kind {
		case instSteal:
			w.Steals++
			w.Stolen += in.moved
		case instWake:
			w.Wakes++
			if in.arg < 0 || in.arg >= int64(m.workers) {
				w.UnknownWakes++
				continue
			}
			if d, ok := m.wakeLatency(int(in.arg), in.t); ok {
				lat = append(lat, d)
				if b, known := m.wokenBlocked(int(in.arg), in.t); known {
					if b {
						blocked = append(blocked, d)
					} else {
						polled = append(polled, d)
					}
				}
			} else {
				w.FutileWakes++
			}
		}
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		w.WakeP50Ns = percentile(lat, 50)
		w.WakeP99Ns = percentile(lat, 99)
		w.WakeMaxNs = lat[len(lat)-1]
	}
	if w.BlockedWakes = len(blocked); w.BlockedWakes > 0 {
		slices.Sort(blocked)
		w.BlockedWakeP50Ns = percentile(blocked, 50)
	}
	if w.PolledWakes = len(polled); w.PolledWakes > 0 {
		slices.Sort(polled)
		w.PolledWakeP50Ns = percentile(polled, 50)
	}
}

// wokenBlocked reports whether worker wk's first wake-up received at or
// after t (the one a wake sent at t caused: a waker records the wake before
// it sends the token) found wk blocked, and whether the trace says.
func (m *model) wokenBlocked(wk int, t int64) (blocked, known bool) {
	ws := m.woken[wk]
	i, _ := slices.BinarySearchFunc(ws, t, func(x wokenAt, t int64) int { return cmp.Compare(x.t, t) })
	if i == len(ws) {
		return false, false
	}
	return ws[i].blocked, true
}

// wakeLatency is the time from a wake sent at t to worker wk's first packet
// after t, if wk runs one before it parks again.
func (m *model) wakeLatency(wk int, t int64) (int64, bool) {
	ps := m.packets[wk]
	i, _ := slices.BinarySearchFunc(ps, t, func(p slice, t int64) int { return cmp.Compare(p.start, t) })
	if i == len(ps) {
		return 0, false
	}
	next := ps[i].start
	// A park that starts after the wake (and after the worker resumed)
	// but before the packet means the wake found nothing.
	parks := m.parks[wk]
	j, _ := slices.BinarySearchFunc(parks, t, func(p slice, t int64) int { return cmp.Compare(p.start, t) })
	if j < len(parks) && parks[j].start < next {
		return 0, false
	}
	return next - t, true
}

// percentile is the nearest-rank percentile of sorted xs.
func percentile(xs []int64, p int) int64 {
	rank := (p*len(xs) + 99) / 100
	return xs[max(rank, 1)-1]
}
