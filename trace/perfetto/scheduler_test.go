package perfetto_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/watchdog"
	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/analyze"
	"github.com/wsched/wsched/trace/chromejson"
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
	wakes := []scheduler.Policy{scheduler.WakeOne, scheduler.WakeAll, scheduler.WakeN, scheduler.WakeSearcher}
	type steal struct {
		p     scheduler.Policy
		limit int
	}
	steals := []steal{{scheduler.StealOne, 0}, {scheduler.StealHalf, 0}, {scheduler.StealHalf, 8}}
	for _, wake := range wakes {
		for _, steal := range steals {
			for _, local := range []scheduler.Policy{scheduler.LocalPrivate, scheduler.LocalFIFO} {
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
						if len(c.Stages) < 2 || c.Ratio < 0.999 || c.LowerBoundNs <= 0 {
							t.Errorf("cycle %d: %d stages, lower bound %d, ratio %.3f", c.Cycle, len(c.Stages), c.LowerBoundNs, c.Ratio)
						}
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
	err := perfetto.Decode(data, func(p *perfetto.Packet) error {
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
			if a[0].seen {
				t.Fatalf("flow %#x starts twice", id)
			}
			a[0] = end
			arrows[id] = a
		}
		for _, id := range e.TerminatingFlowIDs {
			a := arrows[id]
			if a[1].seen {
				t.Fatalf("flow %#x ends twice", id)
			}
			a[1] = end
			arrows[id] = a
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, a := range arrows {
		src, dst := a[0], a[1]
		thief, victim := int(src.args[perfetto.ArgThief]), src.args[perfetto.ArgVictim]
		switch {
		case !src.seen || !dst.seen:
			t.Fatalf("flow %#x has one end: %+v", id, a)
		case src.name != perfetto.NameQueued || src.typ != 3 || src.worker < -1:
			t.Fatalf("flow %#x starts at %+v, want a %q instant on a worker or the control track", id, src, perfetto.NameQueued)
		case dst.typ != 1 || dst.worker != thief || thief < 0:
			t.Fatalf("flow %#x from track of worker %d (thief %d) ends at %+v, want a packet BEGIN on the thief", id, src.worker, thief, dst)
		case dst.ts < src.ts:
			t.Fatalf("flow %#x ends at %d before it starts at %d", id, dst.ts, src.ts)
		}
		found := false
		for _, st := range steals[thief] {
			if st.victim == victim && st.ts >= int64(src.ts) && st.ts <= int64(dst.ts) {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("flow %#x queued at %d on worker %d: no steal instant on thief %d from victim %d at or after it and before %d",
				id, src.ts, src.worker, thief, victim, dst.ts)
		}
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
	type run struct{ steal, local scheduler.Policy }
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

// TestBytesPerSliceRealRun measures the Perfetto size of a packet slice on
// a real scheduler run of ~1 µs packets (20,000 per cycle, 3 cycles, with
// steals, wakes and counters): the budget is 30 bytes per slice, BEGIN and
// END packets with their interning included. With Options.Origins (how
// each packet was queued, for `wsched simulate`) the budget is 40.
func TestBytesPerSliceRealRun(t *testing.T) {
	snap := realRun(t)
	for _, c := range []struct {
		origins bool
		budget  float64
	}{{false, 30}, {true, 40}} {
		if raceEnabled {
			// Packets of about 1 µs run several times longer: more of them
			// last over 16 µs, whose end delta takes a third byte.
			c.budget += 2
		}
		var buf bytes.Buffer
		st, err := perfetto.Write(&buf, snap, perfetto.Options{Origins: c.origins})
		require.NoError(t, err)
		_, err = perfetto.Check(buf.Bytes())
		require.NoError(t, err)
		t.Logf("origins %v: %d packet slices over %v: %.1f bytes/slice (BEGIN+END), %.1f file bytes/slice, %d bytes",
			c.origins, st.Slices, time.Duration(snap.End), st.BytesPerSlice(), float64(st.Bytes)/float64(st.Slices), st.Bytes)
		require.Equal(t, 3*(10_000+9_841), st.Slices, "packet slices")
		require.LessOrEqual(t, st.BytesPerSlice(), c.budget, "bytes per packet slice, origins %v", c.origins)
	}
}

// realRun records 3 cycles of 10,000 flat packets and a 9,841-packet
// spawn tree on 2 workers.
func realRun(t *testing.T) *trace.Snapshot {
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
