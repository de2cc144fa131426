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
	// Workers is the number of workers the trace's process track claims.
	Workers int    `json:"workers"`
	Packets int    `json:"packets"`
	SpanNs  int64  `json:"span_ns"`
	Dropped uint64 `json:"dropped_events"`
	// Verdicts explain, cycle by cycle, each stage that ran over
	// VerdictThreshold times its bound; Summary is each stage over the
	// cycles; PredictionNote says why there are no predicted ratios, if
	// there are none.
	Verdicts       []Verdict      `json:"verdicts"`
	Summary        []StageSummary `json:"summary"`
	PredictionNote string         `json:"prediction_note,omitempty"`
	// Cycles holds one entry per cycle; a trace without cycle slices is
	// analysed as one window (Cycle 0).
	Cycles []Cycle `json:"cycles"`
	// replayed is the events the verdicts' replays simulated, all of them
	// together (simulate.Result.Events): the tests hold it to a multiple
	// of the file's size, as a replay's time is O(events log workers).
	replayed int64
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
	// FromWorkNs is the stage's makespan from when its work could start
	// (its opening, or its first packet's queuing if later) to its last
	// packet's end, as `wsched demo` and `wsched simulate` time a stage,
	// and FromWorkRatio that over the lower bound; both 0 when the trace
	// does not say when its packets were queued. The Window's makespan
	// and ratio run from the stage's opening.
	FromWorkNs    int64   `json:"makespan_from_work_ns,omitempty"`
	FromWorkRatio float64 `json:"ratio_from_work,omitempty"`
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
	// Workers holds the per-worker figures, by worker index: every
	// worker's, or only those of the workers something happened to in the
	// window when the trace claims too many workers to list them all
	// (Others then sums up the rest; see the package doc, Input).
	Workers []WorkerStat  `json:"workers"`
	Others  *OtherWorkers `json:"other_workers,omitempty"`
	Steals  int           `json:"steals"`
	Stolen  int64         `json:"stolen_packets"`
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
	// Gaps counts, over all workers, the stretches of at least
	// GapThresholdNs during which a worker was idle while work was queued
	// elsewhere (WorkerStat.IdleQueuedNs); LongestGapWork is the worker
	// with the longest, -1 for one of the workers summed up in Others.
	Gaps           int   `json:"idle_gaps"`
	LongestGapNs   int64 `json:"longest_idle_gap_ns"`
	LongestGapWork int   `json:"longest_idle_gap_worker"`
	// Critical is the critical path, approximated (see Critical).
	Critical Critical `json:"critical_path"`
	// Heaviest are the packet types with the most total time.
	Heaviest []TypeStat `json:"heaviest_types"`
}

// WorkerStat holds one worker's figures in a window.
type WorkerStat struct {
	Worker int `json:"worker"`
	// BusyPct is the share of the window the worker spent in packets
	// (any stage's).
	BusyPct float64 `json:"busy_pct"`
	// IdleQueuedNs is the time it ran no packet while work was queued
	// elsewhere (an open stage's bucket or another worker's local deque,
	// per the counters).
	IdleQueuedNs int64 `json:"idle_while_queued_ns"`
	// IdleQueuedParkedNs is the part of IdleQueuedNs the worker spent
	// parked, asleep until a wake-up: time that wake policies (or a lost
	// wake-up) account for. The rest it was awake and ran no packet:
	// searching, taking and stealing, the scheduler's own work between
	// packets, or the OS running something else on its CPU.
	IdleQueuedParkedNs int64 `json:"idle_while_queued_parked_ns"`
}

// OtherWorkers sums up the workers a window does not list: none of their
// packet or park slices begins or ends in it, so each was in a packet
// throughout the window (Busy of them), or idle throughout (the rest;
// Parked of those asleep throughout). Each idle one was idle while work
// was queued elsewhere for IdleQueuedNs, all of it parked for the parked
// ones, in Gaps stretches of at least GapThresholdNs.
type OtherWorkers struct {
	Workers      int   `json:"workers"`
	Busy         int   `json:"busy"`
	Parked       int   `json:"parked"`
	IdleQueuedNs int64 `json:"idle_while_queued_ns_each"`
	Gaps         int   `json:"idle_gaps_each"`
}

// GapThresholdNs is the shortest idle stretch that Window.Gaps counts.
const GapThresholdNs = 10_000

// Critical is the approximate critical path of a window: the chain of
// packets that ends with the window's last packet to finish, followed
// backwards. Each step back is the best the trace shows: for a packet that
// was stolen, where its steal arrow starts (the packet that queued it, when
// the trace records how packets were queued; otherwise the packet its
// victim was running at the steal); for any other, the previous packet on
// the same worker (it held the worker, or spawned the packet into its
// deque). The chain stops at the window's start.
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
// panic. Time and memory are linear in len(data) and the events it holds
// (see the package doc, Costs).
func Bytes(data []byte) (*Report, error) {
	return analyzeWith(data, listAuto)
}

// listing says which workers a window lists.
type listing uint8

const (
	listAuto    listing = iota // every worker while workers × windows fits in the file's size
	listEvery                  // every worker
	listPresent                // those something happened to; Window.Others sums up the rest
)

// analyzeWith is Bytes with the listing chosen (tests compare them).
func analyzeWith(data []byte, list listing) (*Report, error) {
	m, err := load(data)
	if err != nil {
		return nil, err
	}
	r := m.report(newQueues(m), list)
	r.verdicts(m.File)
	return r, nil
}

// report analyses the model, with q its queues.
func (m *model) report(q *queues, list listing) *Report {
	r := &Report{Workers: m.Workers, Dropped: m.Dropped, SpanNs: m.Last - m.First, Packets: m.total}
	cycles := m.Cycles
	if len(cycles) == 0 {
		cycles = []cycleSlice{{Start: m.First, End: m.Last}}
	}
	// Each stage belongs to one cycle (cycleOf), or to the one window of a
	// trace without cycles; stages outside every cycle are not reported.
	stagesOf := make([][]stageSlice, len(cycles))
	windows := 2 * len(cycles) // each cycle, and its Unconstrained packets
	for _, s := range m.Stages {
		c := 0
		if len(m.Cycles) > 0 {
			if c = m.cycleOf(s.Start); c < 0 {
				continue
			}
		}
		stagesOf[c] = append(stagesOf[c], s)
		windows++
	}
	// Listing every worker in every window costs workers × windows: it is
	// done while that stays within the file's size and the file describes
	// a track for every worker it claims, as wsched's writer does (package
	// doc, Input).
	m.listAll = list == listEvery || list == listAuto && m.Workers <= len(m.ws) && int64(m.Workers)*int64(windows) <= int64(m.Size)
	for ci, c := range cycles {
		cr := Cycle{Cycle: c.Number}
		cr.Window = m.window(q, c.Start, c.End, allStages)
		for _, s := range stagesOf[ci] {
			sr := Stage{Stage: s.Stage, Name: s.Name}
			idx, ok := m.Index(s.Name)
			if !ok {
				idx = noPackets
			}
			sr.Window = m.window(q, s.Start, s.End, idx)
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
		if u, ok := m.Index(timeline.CatUnconstrained); ok {
			w := m.window(q, c.Start, c.End, u)
			w.LowerBoundNs, w.BoundBy, w.Ratio = 0, "", 0
			if w.Packets > 0 {
				cr.Stages = append(cr.Stages, Stage{Stage: 0, Name: timeline.CatUnconstrained, Window: w})
			}
		}
		r.Cycles = append(r.Cycles, cr)
	}
	return r
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
// window. Its cost is that of the events in the window, plus one entry per
// worker when every worker is listed (model.listAll).
func (m *model) window(q *queues, start, end int64, stage int32) Window {
	w := Window{StartNs: start, EndNs: end, MakespanNs: end - start}
	present := m.present(start, end)
	types := map[int32]*TypeStat{}
	var last *worker
	lastEnd, lastIdx := int64(-1), -1
	inWindow := 0 // packets of any stage that start in the window
	for _, wd := range present {
		ps := wd.Packets
		i, _ := slices.BinarySearchFunc(ps, start, func(p slice, t int64) int { return cmp.Compare(p.Start, t) })
		for ; i < len(ps) && ps[i].Start <= end; i++ {
			p := ps[i]
			inWindow++
			if stage != allStages && p.Stage != stage {
				continue
			}
			d := p.End - p.Start
			w.Packets++
			w.WorkNs += d
			if d > w.LongestNs {
				w.LongestNs, w.Longest = d, m.Strs[p.Name]
			}
			ts := types[p.Name]
			if ts == nil {
				ts = &TypeStat{Name: m.Strs[p.Name]}
				types[p.Name] = ts
			}
			ts.Count++
			ts.TotalNs += d
			ts.MaxNs = max(ts.MaxNs, d)
			if p.End > lastEnd {
				last, lastEnd, lastIdx = wd, p.End, i
			}
		}
	}
	if w.Packets > 0 {
		w.LowerBoundNs, w.BoundBy = w.LongestNs, "longest packet"
		if avg := (w.WorkNs + int64(m.Workers) - 1) / int64(m.Workers); avg > w.LowerBoundNs {
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
	if last != nil {
		w.Critical = m.critical(last, lastIdx, start, inWindow)
	}
	m.stealsAndWakes(&w, start, end)
	m.perWorker(q, &w, present, start, end)
	return w
}

// present returns the workers with a packet or park slice that begins or
// ends in [start, end], by id.
func (m *model) present(start, end int64) []*worker {
	if m.seen == nil {
		m.seen = make([]uint32, len(m.ws))
	}
	m.stamp++
	var out []int32
	i, _ := slices.BinarySearchFunc(m.marks, start, func(k mark, t int64) int { return cmp.Compare(k.t, t) })
	for ; i < len(m.marks) && m.marks[i].t <= end; i++ {
		if k := m.marks[i].w; m.seen[k] != m.stamp {
			m.seen[k] = m.stamp
			out = append(out, k)
		}
	}
	slices.Sort(out) // m.ws is by id
	ws := make([]*worker, len(out))
	for i, k := range out {
		ws[i] = m.ws[k]
	}
	return ws
}

// perWorker fills the per-worker figures of w for [start, end]: busy share
// and idle time while work was queued. A worker is worked out on its own if
// one of its slices begins or ends in the window (present), or if all of
// the work queued during part of the window was in its deque; every other
// worker did one thing throughout, and they are worked out together.
func (m *model) perWorker(q *queues, w *Window, present []*worker, start, end int64) {
	excl := q.exclusions(start, end)
	type listed struct {
		id   int
		wd   *worker
		excl []interval
	}
	var ls []listed
	for i, k := 0, 0; i < len(present) || k < len(excl); {
		var l listed
		switch {
		case k == len(excl) || (i < len(present) && present[i].ID <= excl[k].w):
			l = listed{id: present[i].ID, wd: present[i]}
			i++
		default:
			l = listed{id: excl[k].w, wd: m.worker(excl[k].w)}
		}
		for k < len(excl) && excl[k].w == l.id {
			l.excl = append(l.excl, excl[k].iv)
			k++
		}
		ls = append(ls, l)
	}
	stats := make([]WorkerStat, len(ls))
	gaps := make([]int, len(ls))
	longest := make([]int64, len(ls))
	busyAt, parkedAt := 0, 0
	var idle []interval
	for i, l := range ls {
		st := &stats[i]
		st.Worker = l.id
		idle = idle[:0]
		at := start
		var busy int64
		if l.wd != nil {
			bs := l.wd.busy
			for j := endingAfter(bs, start); j < len(bs) && bs[j].s < end; j++ {
				busy += min(bs[j].e, end) - max(bs[j].s, start)
				if bs[j].s > at {
					idle = append(idle, interval{at, bs[j].s})
				}
				at = bs[j].e
			}
			if covers(bs, start) {
				busyAt++
			}
			if covers(l.wd.parked, start) {
				parkedAt++
			}
		}
		if end > at {
			idle = append(idle, interval{at, end})
		}
		if w.MakespanNs > 0 {
			st.BusyPct = 100 * float64(busy) / float64(w.MakespanNs)
		}
		k := 0
		for _, iv := range idle {
			for k < len(l.excl) && l.excl[k].e <= iv.s {
				k++
			}
			ns, g, lg := q.queuedIn(iv.s, iv.e, l.excl[k:])
			st.IdleQueuedNs += ns
			gaps[i] += g
			longest[i] = max(longest[i], lg)
		}
		if l.wd != nil {
			ps, k := l.wd.parked, 0
			for j := endingAfter(ps, start); j < len(ps) && ps[j].s < end; j++ {
				a, b := max(ps[j].s, start), min(ps[j].e, end)
				for k < len(l.excl) && l.excl[k].e <= a {
					k++
				}
				st.IdleQueuedParkedNs += q.measure(a, b, l.excl[k:])
			}
		}
	}
	// The others: no slice of theirs begins or ends in the window, so each
	// is in a packet, parked or idle throughout, and the queued work is
	// queued for all of them alike.
	o := OtherWorkers{Workers: m.Workers - len(ls)}
	o.Busy = m.busyAt.at(start) - busyAt
	o.Parked = m.parkedAt.at(start) - parkedAt
	var oLongest int64
	if o.Workers > o.Busy {
		o.IdleQueuedNs, o.Gaps, oLongest = q.queuedIn(start, end, nil)
	}
	note := func(g int, lg int64, id int) {
		w.Gaps += g
		if lg > w.LongestGapNs {
			w.LongestGapNs, w.LongestGapWork = lg, id
		}
	}
	if !m.listAll {
		for i := range ls {
			note(gaps[i], longest[i], ls[i].id)
		}
		w.Workers = stats
		if o.Workers > 0 {
			note(o.Gaps*(o.Workers-o.Busy), oLongest, -1)
			w.Others = &o
		}
		return
	}
	// Every worker, in order: the others one by one.
	w.Workers = make([]WorkerStat, 0, m.Workers)
	for id, i := 0, 0; id < m.Workers; id++ {
		if i < len(ls) && ls[i].id == id {
			w.Workers = append(w.Workers, stats[i])
			note(gaps[i], longest[i], id)
			i++
			continue
		}
		st := WorkerStat{Worker: id}
		if wd := m.worker(id); wd != nil && covers(wd.busy, start) {
			if w.MakespanNs > 0 {
				st.BusyPct = 100
			}
		} else {
			st.IdleQueuedNs = o.IdleQueuedNs
			if wd != nil && covers(wd.parked, start) {
				st.IdleQueuedParkedNs = o.IdleQueuedNs
			}
			note(o.Gaps, oLongest, id)
		}
		w.Workers = append(w.Workers, st)
	}
}

// critical follows the chain back from packet idx of worker wd (see
// Critical) to the window's start, over at most limit packets (the
// packets that start in the window).
func (m *model) critical(wd *worker, idx int, start int64, limit int) Critical {
	c := Critical{Worker: wd.ID}
	var refs []PacketRef
	first, last := wd.Packets[idx].Start, wd.Packets[idx].End
	// Each step goes to a packet that starts no later, in the window; the
	// bound stops a loop of equal timestamps in a hand-made file.
	cut := last // the chain needs packet p up to cut
	for range limit {
		p := wd.Packets[idx]
		c.Length++
		c.BusyNs += max(min(p.End, cut)-p.Start, 0)
		first = p.Start
		if len(refs) < topCritical || p.End-p.Start > refs[len(refs)-1].DurNs {
			refs = append(refs, PacketRef{Name: m.Strs[p.Name], Stage: m.Strs[p.Stage], StartNs: p.Start, DurNs: p.End - p.Start, Stolen: p.Flow != 0})
			slices.SortStableFunc(refs, func(a, b PacketRef) int { return cmp.Compare(b.DurNs, a.DurNs) })
			refs = refs[:min(len(refs), topCritical)]
		}
		if src, ok := m.Flows[p.Flow]; ok && p.Flow != 0 && src.Victim != wd.ID && m.worker(src.Victim) != nil {
			// The packet running on the victim at the steal (or the last
			// one before it).
			v := m.worker(src.Victim)
			vs := v.Packets
			j, found := slices.BinarySearchFunc(vs, src.T, func(q slice, t int64) int { return cmp.Compare(q.Start, t) })
			if found {
				for j+1 < len(vs) && vs[j+1].Start == src.T {
					j++
				}
			} else {
				j--
			}
			if j >= 0 && vs[j].Start >= start {
				wd, idx, cut = v, j, src.T
				c.Steals++
				continue
			}
			break
		}
		if idx == 0 || wd.Packets[idx-1].Start < start {
			break
		}
		idx--
		cut = wd.Packets[idx].End
	}
	c.SpanNs = last - first
	c.DelayNs = first - start
	c.Packets = refs
	return c
}

// stealsAndWakes counts steals and measures wake latencies for instants in
// the window.
func (m *model) stealsAndWakes(w *Window, start, end int64) {
	var lat, blocked, polled []int64
	lo, _ := slices.BinarySearchFunc(m.Instants, start, func(i instant, t int64) int { return cmp.Compare(i.T, t) })
	for _, in := range m.Instants[lo:] {
		if in.T > end {
			break
		}
		switch in.Kind {
		case instSteal:
			w.Steals++
			w.Stolen += in.Moved
		case instWake:
			w.Wakes++
			if in.Arg < 0 || in.Arg >= int64(m.Workers) {
				w.UnknownWakes++
				continue
			}
			// A wake aimed at a worker without a track is futile: it ran
			// no packet.
			if d, ok := m.wakeLatency(int(in.Arg), in.T); ok {
				lat = append(lat, d)
				if b, known := m.wokenBlocked(int(in.Arg), in.T); known {
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
	wd := m.worker(wk)
	if wd == nil {
		return false, false
	}
	ws := wd.Woken
	i, _ := slices.BinarySearchFunc(ws, t, func(x wokenAt, t int64) int { return cmp.Compare(x.T, t) })
	if i == len(ws) {
		return false, false
	}
	return ws[i].Blocked, true
}

// wakeLatency is the time from a wake sent at t to worker wk's first packet
// after t, if wk runs one before it parks again.
func (m *model) wakeLatency(wk int, t int64) (int64, bool) {
	wd := m.worker(wk)
	if wd == nil {
		return 0, false
	}
	ps := wd.Packets
	i, _ := slices.BinarySearchFunc(ps, t, func(p slice, t int64) int { return cmp.Compare(p.Start, t) })
	if i == len(ps) {
		return 0, false
	}
	next := ps[i].Start
	// A park that starts after the wake (and after the worker resumed)
	// but before the packet means the wake found nothing.
	parks := wd.Parks
	j, _ := slices.BinarySearchFunc(parks, t, func(p slice, t int64) int { return cmp.Compare(p.Start, t) })
	if j < len(parks) && parks[j].Start < next {
		return 0, false
	}
	return next - t, true
}

// percentile is the nearest-rank percentile of sorted xs.
func percentile(xs []int64, p int) int64 {
	rank := (p*len(xs) + 99) / 100
	return xs[max(rank, 1)-1]
}
