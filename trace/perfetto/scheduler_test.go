package perfetto_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/internal/watchdog"
	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/analyze"
	"github.com/wsched/wsched/trace/chromejson"
	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/internal/timeline"
	"github.com/wsched/wsched/trace/internal/wsfile"
	"github.com/wsched/wsched/trace/perfetto"
)

// spin is a packet of about n µs of arithmetic that spawns kids children
// of the same size (depth levels down).
type spin struct{ n, kids, depth int }

var sink uint64

func (p spin) Run(w *scheduler.Worker) error {
	x := uint64(p.n)
	for range p.n * 150 {
		x = x*6364136223846793005 + 1442695040888963407
	}
	if x == 42 {
		sink++
	}
	if p.depth > 0 {
		for range p.kids {
			scheduler.Spawn(w, spin{p.n, p.kids, p.depth - 1})
		}
	}
	return nil
}

func (p spin) PacketName() string { return fmt.Sprintf("Spin%d", p.n) }

// heavy is one long packet.
type heavy struct{}

func (heavy) Run(w *scheduler.Worker) error { return spin{n: 200}.Run(w) }

// runTraced runs two cycles of a mixed workload under cfg and returns the
// snapshot, failing with every goroutine's stack if it hangs.
func runTraced(t *testing.T, cfg scheduler.Config) (*trace.Snapshot, scheduler.Stats) {
	t.Helper()
	rec := trace.NewRecorder(cfg.Workers, trace.Options{MaxBytes: 4 << 20})
	cfg.Tracer = rec
	cfg.Stages = []string{"Prepare", "Closure"}
	const prepare, closure scheduler.StageID = 1, 2
	s, err := scheduler.New(cfg)
	require.NoError(t, err)
	watchdog.Within(t, 60*time.Second, func() (struct{}, error) {
		var err error
		for cycle := 0; cycle < 2 && err == nil; cycle++ {
			ps := make([]scheduler.Packet, 0, 24)
			for i := range 24 {
				ps = append(ps, spin{n: 1 + i%3})
			}
			if err = s.AddAll(ps, prepare); err != nil {
				break
			}
			if err = s.Add(heavy{}, prepare, scheduler.Priority); err != nil {
				break
			}
			if err = s.Add(spin{n: 2, kids: 3, depth: 3}, closure); err != nil {
				break
			}
			if err = s.Add(spin{n: 1}, scheduler.Unconstrained); err != nil {
				break
			}
			if err = s.AddDesignated(cfg.Workers-1, spin{n: 1}); err != nil {
				break
			}
			err = s.Run(context.Background())
		}
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		return struct{}{}, err
	})
	// Close has waited for the workers: no hook runs any more.
	return rec.Snapshot(), s.Stats()
}

// TestRealRunsEveryPolicy traces real scheduler runs under every wake
// policy, steal policy (and a steal limit) and local order, and checks each
// Perfetto and JSON export against the rules, then analyses it.
func TestRealRunsEveryPolicy(t *testing.T) {
	wakes := []scheduler.WakePolicy{scheduler.WakeOne, scheduler.WakeAll, scheduler.WakeN, scheduler.WakeSearcher}
	type steal struct {
		p     scheduler.StealPolicy
		limit int
	}
	steals := []steal{{scheduler.StealOne, 0}, {scheduler.StealHalf, 0}, {scheduler.StealHalf, 8}}
	for _, wake := range wakes {
		for _, steal := range steals {
			for _, local := range []scheduler.LocalPolicy{scheduler.LocalPrivate, scheduler.LocalFIFO} {
				name := fmt.Sprintf("%v/%v/limit=%d/%v", wake, steal.p, steal.limit, local)
				t.Run(name, func(t *testing.T) {
					snap, _ := runTraced(t, scheduler.Config{Workers: 3, Wake: wake, Steal: steal.p, StealLimit: steal.limit, Local: local})
					require.Zero(t, snap.Dropped(), "events dropped")
					var pb bytes.Buffer
					st, err := perfetto.Write(&pb, snap, perfetto.Options{})
					require.NoError(t, err)
					cs, err := perfetto.Check(pb.Bytes())
					require.NoError(t, err)
					// 2 cycles × (24 + heavy + tree of 1+3+9+27 + 1 + 1).
					const packets = 2 * (24 + 1 + 40 + 1 + 1)
					assert.Equal(t, packets, st.Slices, "packet slices")
					assert.Zero(t, st.Orphans, "orphans")
					var jb bytes.Buffer
					_, err = chromejson.Write(&jb, snap, chromejson.Options{})
					require.NoError(t, err)
					stealArrows(t, pb.Bytes())
					js, err := chromejson.Check(jb.Bytes())
					require.NoError(t, err)
					assert.Equal(t, cs.Flows, js.Flows, "flows: json against perfetto")
					r, err := analyze.Bytes(pb.Bytes())
					require.NoError(t, err)
					require.Len(t, r.Cycles, 2, "analysis: cycles")
					require.Equal(t, packets, r.Packets, "analysis: packets")
					for _, c := range r.Cycles {
						assert.GreaterOrEqual(t, len(c.Stages), 2, "cycle %d: stages", c.Cycle)
						assert.GreaterOrEqual(t, c.Ratio, 0.999, "cycle %d: ratio", c.Cycle)
						assert.Positive(t, c.LowerBoundNs, "cycle %d: lower bound", c.Cycle)
					}
				})
			}
		}
	}
}

// flowEnd is one end of a flow arrow, as read back from a file.
type flowEnd struct {
	worker int // worker track the event is on, -1 the control track, -2 another track
	ts     uint64
	typ    int32
	name   string
	args   map[string]int64
	seen   bool
}

// stealArrows reads every flow of a wsched Perfetto file and checks that
// each one is a steal arrow drawn as documented: it starts at a "queued"
// instant where the stolen packet was queued (on a worker's track, for a
// spawn, or on the control track, for an add from outside the workers),
// naming its thief and victim; it ends at a packet slice (BEGIN) on the
// thief's track, no earlier; and the thief's track has a "steal" instant
// naming that victim between the two, so the packet was queued at or
// before the steal. It returns the arrows as (source, destination) pairs.
func stealArrows(t *testing.T, data []byte) map[uint64][2]flowEnd {
	t.Helper()
	workerOf := map[uint64]int{}
	type seqNames struct{ names, annots map[uint64]string }
	seqs := map[uint32]*seqNames{}
	arrows := map[uint64][2]flowEnd{}
	type steal struct{ ts, victim int64 }
	steals := map[int][]steal{} // thief → its steal instants
	err := pfwire.Decode(data, func(p *pfwire.Packet) error {
		sn := seqs[p.Seq]
		if sn == nil || p.Flags&1 != 0 {
			sn = &seqNames{map[uint64]string{}, map[uint64]string{}}
			seqs[p.Seq] = sn
		}
		for _, e := range p.Interned.Names {
			sn.names[e.IID] = e.Name
		}
		for _, e := range p.Interned.AnnotationNames {
			sn.annots[e.IID] = e.Name
		}
		if p.HasTrack {
			if rest, ok := strings.CutPrefix(p.Track.Description, perfetto.DescWorker); ok {
				n, _ := strconv.Atoi(rest)
				workerOf[p.Track.UUID] = n
			} else if p.Track.Description == perfetto.DescControl {
				workerOf[p.Track.UUID] = -1
			}
		}
		if !p.HasEvent {
			return nil
		}
		e := &p.Event
		end := flowEnd{worker: -2, ts: p.Timestamp, typ: e.Type, name: sn.names[e.NameIID], args: map[string]int64{}, seen: true}
		if w, ok := workerOf[e.TrackUUID]; ok {
			end.worker = w
		}
		for _, a := range e.Annotations {
			end.args[sn.annots[a.NameIID]] = a.Int
		}
		if end.name == perfetto.NameSteal {
			steals[end.worker] = append(steals[end.worker], steal{int64(end.ts), end.args[perfetto.ArgVictim]})
		}
		for _, id := range e.FlowIDs {
			a := arrows[id]
			require.False(t, a[0].seen, "flow %#x starts twice", id)
			a[0] = end
			arrows[id] = a
		}
		for _, id := range e.TerminatingFlowIDs {
			a := arrows[id]
			require.False(t, a[1].seen, "flow %#x ends twice", id)
			a[1] = end
			arrows[id] = a
		}
		return nil
	})
	require.NoError(t, err)
	for id, a := range arrows {
		src, dst := a[0], a[1]
		thief, victim := int(src.args[perfetto.ArgThief]), src.args[perfetto.ArgVictim]
		require.True(t, src.seen && dst.seen, "flow %#x has one end: %+v", id, a)
		// It starts at a "queued" instant (type 3) on a worker or the
		// control track, and ends at a packet BEGIN (type 1) on the thief.
		require.Equal(t, perfetto.NameQueued, src.name, "flow %#x starts at %+v", id, src)
		require.Equal(t, int32(3), src.typ, "flow %#x starts at %+v, want an instant", id, src)
		require.GreaterOrEqual(t, src.worker, -1, "flow %#x starts at %+v, want a worker or the control track", id, src)
		require.GreaterOrEqual(t, thief, 0, "flow %#x: thief", id)
		require.Equal(t, int32(1), dst.typ, "flow %#x ends at %+v, want a packet BEGIN", id, dst)
		require.Equal(t, thief, dst.worker, "flow %#x from track of worker %d ends at %+v, want the thief's track", id, src.worker, dst)
		require.GreaterOrEqual(t, dst.ts, src.ts, "flow %#x ends before it starts", id)
		found := false
		for _, st := range steals[thief] {
			if st.victim == victim && st.ts >= int64(src.ts) && st.ts <= int64(dst.ts) {
				found = true
				break
			}
		}
		require.True(t, found, "flow %#x queued at %d on worker %d: no steal instant on thief %d from victim %d at or after it and before %d",
			id, src.ts, src.worker, thief, victim, dst.ts)
	}
	return arrows
}

// child is a packet that records which worker spawned it in its name.
type child struct{ from, depth int }

func (p child) Run(w *scheduler.Worker) error {
	if err := (spin{n: 20}).Run(w); err != nil {
		return err
	}
	if p.depth > 0 {
		for range 3 {
			scheduler.Spawn(w, child{from: w.ID(), depth: p.depth - 1})
		}
	}
	return nil
}

func (p child) PacketName() string { return "Child@w" + strconv.Itoa(p.from) }

// TestStealArrowsConnectSpawnToStolenPacket checks on real runs that each
// steal arrow starts where the stolen packet was queued: on the track of
// the worker that spawned it, or on the control track for the root, which
// Scheduler.Add queued from outside; and ends at that very packet on the
// thief. Each packet's name says which worker spawned it (-1: Add), so the
// destination's name must name the arrow's source track, whichever deque
// the packet was stolen from: under StealHalf a batch moves packets into
// the thief's deque, from where a third worker may steal them. The local
// orders: LocalLIFO and LocalFIFO put every spawn on the deque at once,
// LocalPrivate keeps spawns on the worker's private stack until a worker
// is idle.
func TestStealArrowsConnectSpawnToStolenPacket(t *testing.T) {
	type run struct {
		steal scheduler.StealPolicy
		local scheduler.LocalPolicy
	}
	for _, r := range []run{{scheduler.StealOne, scheduler.LocalLIFO}, {scheduler.StealOne, scheduler.LocalFIFO}, {scheduler.StealHalf, scheduler.LocalPrivate}} {
		rec := trace.NewRecorder(3, trace.Options{MaxBytes: 4 << 20})
		s, err := scheduler.New(scheduler.Config{Workers: 3, Stages: []string{"Tree"}, Steal: r.steal, Local: r.local, Tracer: rec})
		require.NoError(t, err)
		// At least 3 cycles, more (up to 50) until some steals happened: how
		// many there are depends on how fast parked workers wake.
		for cycle := 0; cycle < 50; cycle++ {
			if cycle >= 3 && steals(s.Stats()) > 0 {
				break
			}
			require.NoError(t, s.Add(child{from: -1, depth: 5}))
			require.NoError(t, s.Run(context.Background()))
		}
		require.NoError(t, s.Close())
		var buf bytes.Buffer
		_, err = perfetto.Write(&buf, rec.Snapshot(), perfetto.Options{})
		require.NoError(t, err)
		arrows := stealArrows(t, buf.Bytes())
		require.NotEmpty(t, arrows, "%v: no steal arrows, %d steals", r, steals(s.Stats()))
		for id, a := range arrows {
			require.Equal(t, "Child@w"+strconv.Itoa(a[0].worker), a[1].name, "%v: flow %#x from worker %d", r, id, a[0].worker)
		}
		t.Logf("%v %v: %d steal arrows, each from the spawner's track to the stolen packet", r.steal, r.local, len(arrows))
	}
}

func steals(st scheduler.Stats) uint64 {
	var n uint64
	for _, w := range st.Workers {
		n += w.Steals
	}
	return n
}

// TestBytesPerSliceRealRun writes a real scheduler run of ~1 µs packets
// (19,841 per cycle, 3 cycles, with steals, wakes and counters) with and
// without Options.Origins, and checks what does not depend on the run's
// timing: every packet is one slice, the files pass the checker, and
// Origins adds to each slice a value that says how its packet was queued
// (2 bytes at least: see TestBytesPerSliceRealShape), which reads back as
// written. The bytes a slice
// costs depend on the timing (a timestamp delta takes 1 byte under 128 ns,
// 2 under 16 µs, 3 under 2 ms), so the budgets are asserted on a trace of
// the same shape with controlled times (TestBytesPerSliceRealShape); this
// test logs the real figures, and BenchmarkBytesPerSliceRealRun reports
// them.
func TestBytesPerSliceRealRun(t *testing.T) {
	snap := realRun(t)
	queued := 0 // packet slices whose begin says how the packet was queued
	for _, b := range snap.Buffers {
		for _, e := range b.Events {
			if e.Kind() == trace.KindPacketBegin && e.From() != trace.FromUnknown {
				queued++
			}
		}
	}
	var sliceBytes [2]int64
	for i, origins := range []bool{false, true} {
		var buf bytes.Buffer
		st, err := perfetto.Write(&buf, snap, perfetto.Options{Origins: origins})
		require.NoError(t, err)
		_, err = perfetto.Check(buf.Bytes())
		require.NoError(t, err)
		t.Logf("origins %v: %d packet slices over %v: %.1f bytes/slice (BEGIN+END), %.1f file bytes/slice, %d bytes",
			origins, st.Slices, time.Duration(snap.End), st.BytesPerSlice(), float64(st.Bytes)/float64(st.Slices), st.Bytes)
		require.Equal(t, 3*(10_000+9_841), st.Slices, "packet slices")
		require.Zero(t, st.Orphans, "orphans")
		sliceBytes[i] = st.SliceBytes
	}
	require.Equal(t, 3*(10_000+9_841), queued, "packet begins that say how the packet was queued")
	// A tag and a value of one byte at least on each.
	require.GreaterOrEqual(t, sliceBytes[1]-sliceBytes[0], int64(2*queued), "bytes Origins adds to the packet slices")
	requireOriginsRoundTrip(t, snap)
}

// requireOriginsRoundTrip writes snap with Origins and reads every packet
// slice's origin back as trace/simulate does (wsfile.Decls.Origin): each
// worker's slices, in order, give the code and stamp of the op the writer
// wrote, and a slice with no origin gives none.
func requireOriginsRoundTrip(t *testing.T, snap *trace.Snapshot) {
	t.Helper()
	type org struct {
		begin, stamp int64
		code         uint64
	}
	want := map[int][]org{}
	timeline.Walk(snap, func(op *timeline.Op) {
		if op.Kind != timeline.Begin || op.Slice != timeline.SlicePacket {
			return
		}
		o := org{begin: op.Time}
		switch from := op.QueuedFrom; {
		case from == trace.FromUnknown:
		case from == trace.FromNone:
			o.code, o.stamp = perfetto.QueuedNone, op.Time // no stamp: the begin stands in
		case from == trace.FromAdd && op.Priority:
			o.code, o.stamp = perfetto.QueuedPriority, min(op.Queued, op.Time)
		case from == trace.FromAdd:
			o.code, o.stamp = perfetto.QueuedAdd, min(op.Queued, op.Time)
		default:
			o.code, o.stamp = perfetto.QueuedWorker0+uint64(from), min(op.Queued, op.Time)
		}
		want[op.Buffer] = append(want[op.Buffer], o)
	})
	var buf bytes.Buffer
	_, err := perfetto.Write(&buf, snap, perfetto.Options{Origins: true})
	require.NoError(t, err)
	var decls wsfile.Decls
	workerOf := map[uint64]int{}
	got := map[int][]org{}
	require.NoError(t, pfwire.Decode(buf.Bytes(), func(p *pfwire.Packet) error {
		tk, ok, err := decls.Packet(p)
		require.NoError(t, err)
		if ok && tk.Role == wsfile.RoleWorker {
			workerOf[p.Track.UUID] = tk.Worker
		}
		w, isWorker := workerOf[p.Event.TrackUUID]
		if !p.HasEvent || !isWorker || p.Event.Type != 1 || len(p.Event.CategoryIIDs) == 0 {
			return nil
		}
		o := org{begin: int64(p.Timestamp)}
		if code, stamp, ok := decls.Origin(&p.Event, o.begin); ok {
			o.code, o.stamp = code, stamp
		}
		got[w] = append(got[w], o)
		return nil
	}))
	require.True(t, decls.HasOrigins())
	require.Equal(t, len(want), len(got), "workers with packet slices")
	for w := range want {
		require.Equal(t, want[w], got[w], "worker %d's packet slices", w)
	}
}

// BenchmarkBytesPerSliceRealRun reports the bytes a packet slice costs on
// realRun's trace, without and with Options.Origins (the run is recorded
// once; the timing is the machine's, so the figures vary by a few tenths
// of a byte from run to run).
func BenchmarkBytesPerSliceRealRun(b *testing.B) {
	snap := realRun(b)
	var plain, origins perfetto.Stats
	for b.Loop() {
		var err error
		plain, err = perfetto.Write(io.Discard, snap, perfetto.Options{})
		require.NoError(b, err)
		origins, err = perfetto.Write(io.Discard, snap, perfetto.Options{Origins: true})
		require.NoError(b, err)
	}
	b.ReportMetric(plain.BytesPerSlice(), "bytes/slice")
	b.ReportMetric(origins.BytesPerSlice(), "origins_bytes/slice")
}

// realRun records 3 cycles of 10,000 flat packets and a 9,841-packet
// spawn tree on 2 workers.
func realRun(t testing.TB) *trace.Snapshot {
	rec := trace.NewRecorder(2, trace.Options{})
	s, err := scheduler.New(scheduler.Config{Workers: 2, Stages: []string{"Flat", "Tree"}, Tracer: rec})
	require.NoError(t, err)
	const flat, tree scheduler.StageID = 1, 2
	ps := make([]scheduler.Packet, 10_000)
	for i := range ps {
		ps[i] = spin{n: 1}
	}
	for range 3 {
		require.NoError(t, s.AddAll(ps, flat))
		// 1 + 3 + ... + 3^8 = 9,841 packets
		require.NoError(t, s.Add(spin{n: 1, kids: 3, depth: 8}, tree))
		require.NoError(t, s.Run(context.Background()))
	}
	require.NoError(t, s.Close())
	snap := rec.Snapshot()
	require.Zero(t, snap.Dropped(), "events dropped")
	return snap
}

// Times of realShape's packets: each runs 500 ns and begins 50 ns after
// the previous one on its worker ended.
const (
	shapeRun = 500
	shapeGap = 50
)

// realShape builds, with controlled times, a trace shaped like realRun's:
// 2 workers, 3 cycles of a flat stage (one AddAll of 10,000 packets, taken
// by both workers in turn) and a tree stage (a root that spawns 3
// children, 8 levels deep: 9,841 packets, run depth-first, newest child
// first, on worker 0; worker 1 steals the root's oldest child and runs its
// subtree), a local-length counter every 128 packets and a park and wake
// per worker and cycle, as the scheduler records them.
func realShape() *trace.Snapshot {
	const workers = 2
	b := tracebuf.NewBuilder(workers)
	name := b.Intern("Spin1")
	flatName, treeName := b.Intern("Flat"), b.Intern("Tree")
	var now [workers]int64 // each worker's clock
	ran := 0
	packet := func(w, stage int, flow uint64, from int, born int64) int64 {
		now[w] += shapeGap
		begin := now[w]
		b.PacketBegin(w, begin, name, stage, flow, from, born, false)
		now[w] += shapeRun
		b.PacketEnd(w, now[w])
		if ran++; ran%128 == 0 {
			b.Counter(w, now[w], tracebuf.CounterLocalLen, w, int64(ran%7))
		}
		return begin
	}
	// tree runs node's packet on w and then its children's subtrees, the
	// newest first; the children are spawned 10 ns apart from 100 ns into
	// the packet. skip is how many of the oldest children are left to a
	// thief; their birth stamps are returned.
	var tree func(w int, depth int, from int, born int64, skip int) []int64
	tree = func(w int, depth int, from int, born int64, skip int) []int64 {
		begin := packet(w, 2, 0, from, born)
		if depth == 0 {
			return nil
		}
		kids := []int64{begin + 100, begin + 110, begin + 120}
		for k := len(kids) - 1; k >= skip; k-- {
			tree(w, depth-1, w, kids[k], 0)
		}
		return kids[:skip]
	}
	for w := range workers {
		b.Park(w, 1) // parked until the first cycle
	}
	for cycle := range uint64(3) {
		t0 := max(now[0], now[1]) + 1000
		b.CycleBegin(t0, cycle+1)
		b.StageOpen(t0, 1, flatName)
		b.Add(t0+10, tracebuf.AddNormal, false, 1, 10_000, 2, t0+10)
		for w := range workers {
			now[w] = t0 + 20
			b.WakeReceived(w, now[w], true)
			b.Unpark(w, now[w])
		}
		for i := range 10_000 {
			packet(i%workers, 1, 0, tracebuf.FromAdd, t0+10)
		}
		t1 := max(now[0], now[1]) + 100
		b.StageClose(t1, 1)
		b.StageOpen(t1, 2, treeName)
		b.Add(t1+10, tracebuf.AddNormal, true, 2, 1, 1, t1+10)
		now[0], now[1] = t1+20, t1+20
		stolen := tree(0, 8, tracebuf.FromAdd, t1+10, 1)
		// Worker 1 steals the root's oldest child as soon as it is born.
		now[1] = stolen[0] + 10
		flow := 1<<40 | (cycle + 1)
		b.Steal(1, now[1], 0, 1, flow, stolen[0], 0)
		packetFlow := func() {
			now[1] += shapeGap
			b.PacketBegin(1, now[1], name, 2, flow, 0, 0, false)
			now[1] += shapeRun
			b.PacketEnd(1, now[1])
		}
		packetFlow()
		for k := 2; k >= 0; k-- {
			tree(1, 6, 1, now[1]-shapeRun+100+10*int64(k), 0)
		}
		t2 := max(now[0], now[1]) + 100
		for w := range workers {
			b.Park(w, max(now[w], t2-50))
		}
		b.StageClose(t2, 2)
		b.CycleEnd(t2, cycle+1)
	}
	return b.Snapshot()
}

// TestBytesPerSliceRealShape holds the budgets of a packet slice on
// realShape's trace, whose timestamp deltas are controlled: every END's is
// the packet's 500 ns (a 2-byte varint) and every BEGIN's the 50 ns gap
// after the previous event of its worker (1 byte).
//
// A packet slice then costs 29 bytes: its END 13 (the Trace.packet tag and
// length 2, timestamp 1+2, trusted_packet_sequence_id 2, the track_event
// tag and length 2 and its type 2, sequence_flags 2) and its BEGIN 16 (the
// same with a 1-byte delta, and name_iid 2 and category_iids 2 in the
// track event); interning and the 3 steal arrows (a 9-byte
// terminating_flow_ids each) add under 0.01 byte a slice. The budget is 30,
// so a field added to every slice (2 bytes at least: a tag and a 1-byte
// value) fails it.
//
// Origins adds to each BEGIN an extra_counter_values entry on the worker's
// origins track: its tag 1 and the value's varint (trace/internal/origin:
// the packets of the flat stage, taken from one add, differ from the
// previous one's stamp by 0 ns, 1 byte; a tree node was spawned at most a
// few hundred ns before the previous slice's begin or the previous stamp
// of its code, 2 bytes), so at most 3 bytes a slice (2.6 on this trace):
// a field added with Origins fails that bound. The budget with Origins is
// 33.
func TestBytesPerSliceRealShape(t *testing.T) {
	snap := realShape()
	const slices = 3 * (10_000 + 9_841)
	var st [2]perfetto.Stats
	for i, origins := range []bool{false, true} {
		var buf bytes.Buffer
		var err error
		st[i], err = perfetto.Write(&buf, snap, perfetto.Options{Origins: origins})
		require.NoError(t, err)
		cs, err := perfetto.Check(buf.Bytes())
		require.NoError(t, err)
		require.Equal(t, slices, st[i].Slices, "packet slices")
		require.Zero(t, st[i].Orphans, "orphans")
		require.Equal(t, 3, cs.Flows, "steal arrows")
		t.Logf("origins %v: %.3f bytes/slice (BEGIN+END)", origins, st[i].BytesPerSlice())
	}
	require.LessOrEqual(t, st[0].BytesPerSlice(), 30.0, "bytes per packet slice, budget 30")
	require.LessOrEqual(t, st[1].BytesPerSlice(), 33.0, "bytes per packet slice with Origins, budget 33")
	require.LessOrEqual(t, st[1].SliceBytes-st[0].SliceBytes, int64(3*slices), "bytes Origins adds to the packet slices")
	require.GreaterOrEqual(t, st[1].SliceBytes-st[0].SliceBytes, int64(2*slices), "a tag and a value on every packet slice")
	requireOriginsRoundTrip(t, snap)
}
