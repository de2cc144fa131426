package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/perfetto"
)

// builder makes a one-cycle workload by hand.
type builder struct {
	wl   *Workload
	cy   *Cycle
	acts [][]act
}

func newBuilder(workers, stages int) *builder {
	wl := &Workload{Workers: workers, Config: DefaultConfig(), Stages: []string{"Unconstrained"}}
	for i := 1; i <= stages; i++ {
		wl.Stages = append(wl.Stages, fmt.Sprint("S", i))
	}
	wl.Cycles = []Cycle{{Number: 1, Gap: -1, Stages: stages}}
	return &builder{wl: wl, cy: &wl.Cycles[0]}
}

func (b *builder) name(n string) int32 {
	if i := slices.Index(b.wl.Names, n); i >= 0 {
		return int32(i)
	}
	b.wl.Names = append(b.wl.Names, n)
	return int32(len(b.wl.Names) - 1)
}

func (b *builder) packet(name string, stage int, cost int64) int32 {
	b.cy.Packets = append(b.cy.Packets, Packet{Name: b.name(name), Stage: int32(stage), Cost: cost})
	b.acts = append(b.acts, nil)
	return int32(len(b.cy.Packets) - 1)
}

// shortsThenHeavy makes n packets named short of cost short in stage st,
// then one named heavy of cost heavy.
func (b *builder) shortsThenHeavy(st, n int, short, heavy int64) []int32 {
	var ps []int32
	for range n {
		ps = append(ps, b.packet("short", st, short))
	}
	return append(ps, b.packet("heavy", st, heavy))
}

// add queues ps by an add call, made by packet by at at (by < 0: before
// the cycle).
func (b *builder) add(how trace.AddHow, stage int, by int32, at float64, ps ...int32) int32 {
	a := int32(len(b.cy.Adds))
	b.cy.Adds = append(b.cy.Adds, Add{How: how, Stage: int32(stage), Packets: ps, By: by, At: at, Single: len(ps) == 1 && how != trace.AddNormal})
	if by < 0 {
		b.cy.pre = append(b.cy.pre, a)
	} else {
		b.acts[by] = append(b.acts[by], act{at: at, add: true, ref: a})
	}
	return a
}

func (b *builder) spawn(parent int32, at float64, child int32) {
	b.acts[parent] = append(b.acts[parent], act{at: at, ref: child})
}

func (b *builder) done() *Workload {
	cy := b.cy
	cy.actLo = make([]int32, len(cy.Packets)+1)
	for i, as := range b.acts {
		cy.actLo[i] = int32(len(cy.acts))
		slices.SortStableFunc(as, func(x, y act) int {
			if x.at < y.at {
				return -1
			}
			if x.at > y.at {
				return 1
			}
			return 0
		})
		cy.acts = append(cy.acts, as...)
	}
	cy.actLo[len(cy.Packets)] = int32(len(cy.acts))
	cy.sentinels = make([][]int32, cy.Stages+1)
	cy.names = b.wl.Names
	return b.wl
}

var testCosts = Costs{Local: 20, Trace: 20, Take: 50, TakePer: 5, Steal: 100, StealPer: 10, Round: 200, Park: 300, WakePolled: 2000, WakeBlocked: 100_000}

// order returns the sources of w's packets in the order the replay began
// them, runs of one source merged.
func order(t *testing.T, wl *Workload, cfg Config, src map[string]policy.Source) []policy.Source {
	t.Helper()
	r, err := Run(wl, cfg, Options{Costs: &testCosts, Record: true})
	require.NoError(t, err)
	type begin struct {
		t    int64
		name string
	}
	var bs []begin
	snap := r.Snapshot()
	for _, e := range snap.Buffers[0].Events {
		if e.Kind() == trace.KindPacketBegin {
			bs = append(bs, begin{e.Time, snap.Name(e.Name())})
		}
	}
	var runs []policy.Source
	for _, b := range bs[1:] { // after the setup packet
		s := src[b.name]
		if len(runs) == 0 || runs[len(runs)-1] != s {
			runs = append(runs, s)
		}
	}
	return runs
}

// TestFindOrder is scheduler's TestFindOrder replayed: one worker, a
// bucket take of 10 (the first runs, nine are held), whose first packet
// queues a designated packet, a priority packet and 257 spawns (the
// 257th spills the 128 oldest into the deque), and a packet left in the
// normal lane. Both tests check the order against policy.FindOrder: if the
// scheduler's order changes, its test fails until the table does, and
// then this one until the replay follows.
func TestFindOrder(t *testing.T) {
	b := newBuilder(1, 1)
	setup := b.packet("setup", 1, 1000)
	ps := []int32{setup}
	for range 9 {
		ps = append(ps, b.packet("held", 1, 1000))
	}
	ps = append(ps, b.packet("normal", 1, 1000))
	b.add(trace.AddNormal, 1, -1, 0, ps...)
	b.add(trace.AddDesignated, 0, setup, 0.1, b.packet("designated", 0, 1000))
	b.add(trace.AddPriority, 1, setup, 0.2, b.packet("priority", 1, 1000))
	for i := range privCap + 1 {
		name := "private"
		if i < privCap/2 {
			name = "deque"
		}
		b.spawn(setup, 0.5, b.packet(name, 1, 1000))
	}
	wl := b.done()
	cfg := DefaultConfig()
	cfg.Workers, cfg.Take, cfg.BucketBatch = 1, policy.TakeFixed, 10
	src := map[string]policy.Source{"designated": policy.SourceDesignated, "private": policy.SourcePrivate,
		"held": policy.SourceHeld, "deque": policy.SourceDeque, "priority": policy.SourcePriorityLane, "normal": policy.SourceNormalLane}
	got := order(t, wl, cfg, src)
	assert.Equal(t, policy.FindOrder[:len(policy.FindOrder)-1], got, "sources in the order they ran")
}

// luindexMini is the luindex shape in miniature over cycles cycles (the
// same packets in each): one bulk add of 64 short packets with a heavy
// one last, on 2 workers under wake-all, steal-one, batch takes and FIFO
// local order.
func luindexMini(cycles int) (*Workload, Config) {
	b := newBuilder(2, 1)
	b.add(trace.AddNormal, 1, -1, 0, b.shortsThenHeavy(1, 64, 30_000, 1_000_000)...)
	wl := b.done()
	for i := 2; i <= cycles; i++ {
		cy := wl.Cycles[0]
		cy.Number, cy.Gap = uint64(i), 1_000_000
		wl.Cycles = append(wl.Cycles, cy)
	}
	cfg := DefaultConfig()
	cfg.Workers, cfg.Wake, cfg.Steal, cfg.Take, cfg.Local = 2, policy.WakeAll, policy.StealOne, policy.TakeFixed, policy.LocalFIFO
	return wl, cfg
}

// TestHeavyPacketPriority: the luindex shape in miniature. One bulk add
// of 64 short packets with a heavy one last, wake-all, batches of 32 on
// 2 workers: the heavy one starts after a batch. With it in the priority
// lane (Config.Priority) the stage ends near its bound (the wake-up of
// the second worker, 0.1 ms here, is the rest).
func TestHeavyPacketPriority(t *testing.T) {
	wl, cfg := luindexMini(1)
	late, err := Run(wl, cfg, Options{Costs: &testCosts})
	require.NoError(t, err)
	cfg.Priority = []string{"heavy"}
	early, err := Run(wl, cfg, Options{Costs: &testCosts})
	require.NoError(t, err)
	t.Logf("ratio %.3f as queued, %.3f with the heavy packet in the priority lane", late.Stages[0].Ratio, early.Stages[0].Ratio)
	assert.Greater(t, late.Stages[0].Ratio, 1.3)
	assert.Less(t, early.Stages[0].Ratio, 1.15)
}

// TestLearnHeavyReplay: the same miniature over three cycles, recorded
// without learning, replayed with learn_heavy. The first cycle runs as
// queued (nothing learned yet); from the second the replay queues the
// heavy packet in the priority lane, as the scheduler's LearnHeavy does,
// and predicts what the Priority hint gives, while the replay without it
// stays late in every cycle.
func TestLearnHeavyReplay(t *testing.T) {
	wl, cfg := luindexMini(3)
	ratios := func(cfg Config) []float64 {
		r, err := Run(wl, cfg, Options{Costs: &testCosts})
		require.NoError(t, err)
		var out []float64
		for _, c := range r.Cycles {
			out = append(out, c.Stages[0].Ratio)
		}
		return out
	}
	plain := ratios(cfg)
	hinted := cfg
	hinted.Priority = []string{"heavy"}
	hint := ratios(hinted)
	cfg.LearnHeavy = true
	learned := ratios(cfg)
	t.Logf("ratios by cycle: as queued %.3f, with Priority %.3f, learning %.3f", plain, hint, learned)
	for i := range plain {
		assert.Greater(t, plain[i], 1.3, "cycle %d as queued", i+1)
	}
	assert.InDelta(t, plain[0], learned[0], 1e-9, "cycle 1: nothing learned yet")
	for i := 1; i < len(learned); i++ {
		assert.InDelta(t, hint[i], learned[i], 1e-9, "cycle %d: the learned set is the hint", i+1)
		assert.Less(t, learned[i], 1.15, "cycle %d", i+1)
	}

	// Recorded with learning, the replay's trace says so, and its heavy
	// packet's adds are priority adds of their own from cycle 2 on.
	r, err := Run(wl, cfg, Options{Costs: &testCosts, Record: true})
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = perfetto.Write(&buf, r.Snapshot(), perfetto.Options{Origins: true})
	require.NoError(t, err)
	back, err := Load(buf.Bytes())
	require.NoError(t, err)
	require.True(t, back.HasConfig)
	assert.True(t, back.Config.LearnHeavy)
	for ci, cy := range back.Cycles {
		prio := 0
		for _, a := range cy.Adds {
			if a.How == trace.AddPriority {
				prio += len(a.Packets)
				assert.Equal(t, "heavy", back.Names[cy.Packets[a.Packets[0]].Name])
			}
		}
		assert.Equal(t, min(ci, 1), prio, "cycle %d's priority adds", ci+1)
	}
}

// TestLearnHeavyOnlyItsStage: a type learned heavy in one stage is routed
// there only, and only from Add and AddAll calls (not Lend).
func TestLearnHeavyOnlyItsStage(t *testing.T) {
	b := newBuilder(2, 2)
	ps := b.shortsThenHeavy(1, 16, 30_000, 1_000_000)
	b.add(trace.AddNormal, 1, -1, 0, ps...)
	lend := b.add(trace.AddLend, 1, -1, 0, b.packet("heavy", 1, 1_000_000), b.packet("short", 1, 30_000))
	light := b.shortsThenHeavy(2, 8, 10_000, 10_000)
	other := b.add(trace.AddNormal, 2, -1, 0, light...)
	wl := b.done()
	s := newSim(wl, Config{}.with(DefaultConfig(), 2), testCosts, false)
	s.cy = &wl.Cycles[0]
	s.learnHeavy(s.cy)
	require.Equal(t, []policy.Heavy[int32]{{Key: b.name("heavy"), Stage: 1}}, s.heavy)
	cy := &wl.Cycles[0]
	assert.True(t, s.toPrio(&cy.Adds[0], ps[len(ps)-1]))
	assert.False(t, s.toPrio(&cy.Adds[0], ps[0]))
	assert.False(t, s.toPrio(&cy.Adds[lend], cy.Adds[lend].Packets[0]), "lent slices are not looked at")
	assert.False(t, s.toPrio(&cy.Adds[other], light[len(light)-1]), "heavy in stage 1, not in 2")
}

// TestDeterministic: the same workload and configuration give the same
// result, steals and all.
func TestDeterministic(t *testing.T) {
	wl := tree(t)
	cfg := wl.Config
	cfg.Workers = 3
	var out [2][]byte
	for i := range out {
		r, err := Run(wl, cfg, Options{Record: true})
		require.NoError(t, err)
		js, err := json.Marshal(r)
		require.NoError(t, err)
		var buf bytes.Buffer
		_, err = perfetto.Write(&buf, r.Snapshot(), perfetto.Options{Pid: 1, Origins: true})
		require.NoError(t, err)
		out[i] = append(js, buf.Bytes()...)
	}
	assert.True(t, bytes.Equal(out[0], out[1]), "two replays differ")
}

// spin is a packet of about n µs that spawns kids children, depth levels
// down, and adds one packet to stage 2 (closed until stage 1 drains).
type spin struct {
	n, kids, depth int
	s              *scheduler.Scheduler
}

// sink keeps the spin loops from being dropped; packets on two workers
// add to it.
var sink atomic.Uint64

func (p spin) Run(w *scheduler.Worker) error {
	var x uint64
	for t0 := time.Now(); time.Since(t0) < time.Duration(p.n)*time.Microsecond; {
		x++
	}
	sink.Add(x)
	for range p.kids {
		if p.depth > 0 {
			scheduler.Spawn(w, spin{p.n, p.kids, p.depth - 1, p.s})
		}
	}
	if p.depth == 1 {
		return p.s.Add(later{}, scheduler.StageID(2))
	}
	return nil
}

func (p spin) PacketName() string { return fmt.Sprint("Spin", p.depth) }

type later struct{}

func (later) Run(*scheduler.Worker) error {
	var x uint64
	for t0 := time.Now(); time.Since(t0) < 20*time.Microsecond; {
		x++
	}
	sink.Add(x)
	return nil
}

// recordRun runs cycles of job on a real scheduler under cfg (its Tracer
// set here) and returns the recorder's snapshot and its Perfetto file with
// origins.
func recordRun(t testing.TB, cfg scheduler.Config, cycles int, job func(*scheduler.Scheduler) error) (*trace.Snapshot, []byte) {
	t.Helper()
	rec := trace.NewRecorder(cfg.Workers, trace.Options{MaxBytes: 8 << 20})
	cfg.Tracer = rec
	s, err := scheduler.New(cfg)
	require.NoError(t, err)
	for range cycles {
		require.NoError(t, job(s))
		require.NoError(t, s.Run(context.Background()))
	}
	require.NoError(t, s.Close())
	snap := rec.Snapshot()
	var buf bytes.Buffer
	_, err = perfetto.Write(&buf, snap, perfetto.Options{Origins: true})
	require.NoError(t, err)
	return snap, buf.Bytes()
}

// treeJob queues one cycle of record's job: a spawn tree (stage 1) whose
// packets add to stage 2, a priority packet and a designated one.
func treeJob(s *scheduler.Scheduler) error {
	if err := s.Add(spin{n: 30, kids: 2, depth: 5, s: s}); err != nil {
		return err
	}
	if err := s.Add(spin{n: 200, s: s}, scheduler.Priority); err != nil {
		return err
	}
	return s.AddDesignated(0, spin{n: 10, s: s})
}

// record runs three cycles of treeJob on workers workers, and returns
// the trace with origins.
func record(t testing.TB, workers int, cfg scheduler.Config) []byte {
	t.Helper()
	cfg.Workers, cfg.Stages = workers, []string{"Tree", "Later"}
	_, data := recordRun(t, cfg, 3, treeJob)
	return data
}

var treeOnce []byte

// tree is record's trace at 1 worker, loaded.
func tree(t testing.TB) *Workload {
	if treeOnce == nil {
		treeOnce = record(t, 1, scheduler.Config{})
	}
	wl, err := Load(treeOnce)
	require.NoError(t, err)
	return wl
}

// TestDefaultConfigIsTheSchedulers: a scheduler built from the zero
// Config records in its trace the configuration DefaultConfig returns
// (Workers apart): the replay's defaults and bounds are the scheduler's
// (both read internal/policy), so a replay at the defaults is a run at
// them.
func TestDefaultConfigIsTheSchedulers(t *testing.T) {
	wl := tree(t)
	require.True(t, wl.HasConfig)
	got := wl.Config
	got.Workers = 0
	assert.Equal(t, DefaultConfig(), got)
	_, err := scheduler.New(scheduler.Config{Workers: MaxWorkers + 1})
	require.ErrorIs(t, err, scheduler.ErrInvalid, "the scheduler's bound is MaxWorkers")
	s, err := scheduler.New(scheduler.Config{Workers: MaxWorkers})
	require.NoError(t, err, "and MaxWorkers itself is accepted")
	require.NoError(t, s.Close())
}

// TestReplayRealRun: a real run's trace links every packet to what queued
// it, and replayed on its own worker count it comes back within 25% per
// stage (the packets are 20-200 µs; the rest is the scheduler's own time,
// which the replay charges from measured costs; not under the race
// detector, which multiplies that time); the replay's trace
// passes Perfetto's rules and replays as itself.
func TestReplayRealRun(t *testing.T) {
	wl := tree(t)
	require.Len(t, wl.Cycles, 3)
	assert.True(t, wl.HasConfig)
	assert.Zero(t, wl.Orphans, "every packet's queuing is known")
	for _, cy := range wl.Cycles {
		assert.Len(t, cy.Packets, 63+1+1+16, "tree, priority, designated, later")
		spawned := 0
		for _, a := range cy.acts {
			if !a.add {
				spawned++
			}
		}
		assert.Equal(t, 62, spawned, "every spawn found its parent")
	}
	r, err := Run(wl, Config{}.with(wl.Config, 1), Options{Record: true})
	require.NoError(t, err)
	rec := Summarize(recordedCycles(wl))
	require.Len(t, r.Stages, len(rec))
	for i, p := range r.Stages {
		m := rec[i]
		t.Logf("%s: recorded %v, replayed %v", m.Name, time.Duration(m.MakespanNs), time.Duration(p.MakespanNs))
		if !raceEnabled { // instrumented, the scheduler's own time is not the measured costs'
			assert.InEpsilon(t, float64(m.MakespanNs), float64(p.MakespanNs), 0.25, "stage %s", m.Name)
		}
	}
	var buf bytes.Buffer
	_, err = perfetto.Write(&buf, r.Snapshot(), perfetto.Options{Origins: true})
	require.NoError(t, err)
	_, err = perfetto.Check(buf.Bytes())
	require.NoError(t, err)
	// The replayed trace replays as itself.
	again, err := Load(buf.Bytes())
	require.NoError(t, err)
	assert.Zero(t, again.Orphans)
	r2, err := Run(again, Config{}.with(again.Config, 1), Options{})
	require.NoError(t, err)
	for i := range r.Stages {
		assert.InEpsilon(t, float64(r.Stages[i].MakespanNs), float64(r2.Stages[i].MakespanNs), 0.01)
	}
}

// with returns base with Workers n (a test helper).
func (Config) with(base Config, n int) Config { base.Workers = n; return base }

func recordedCycles(wl *Workload) []CycleResult {
	var cs []CycleResult
	for _, c := range wl.Cycles {
		cs = append(cs, CycleResult{Cycle: c.Number, Stages: c.Recorded})
	}
	return cs
}

// TestReplayMoreWorkers: a binary spawn tree of 127 packets of 30 µs,
// each spawning its two children half-way through, replayed on 1 to 64
// workers: every packet runs, the makespan falls below a third at 4
// workers, and beyond the tree's parallelism more workers (more wake-ups
// of workers that have blocked) cost some of the gain back, never all.
func TestReplayMoreWorkers(t *testing.T) {
	b := newBuilder(1, 1)
	var grow func(depth int) int32
	grow = func(depth int) int32 {
		p := b.packet("node", 1, 30_000)
		if depth > 0 {
			b.spawn(p, 0.5, grow(depth-1))
			b.spawn(p, 0.5, grow(depth-1))
		}
		return p
	}
	b.add(trace.AddNormal, 1, -1, 0, grow(6))
	wl := b.done()
	ms := map[int]int64{}
	for _, n := range []int{1, 2, 4, 8, 16, 64} {
		r, err := Run(wl, Config{}.with(wl.Config, n), Options{Costs: &testCosts})
		require.NoError(t, err, "%d workers", n)
		ms[n] = r.Stages[0].MakespanNs
		t.Logf("%d workers: %v", n, time.Duration(ms[n]))
	}
	assert.Less(t, float64(ms[4]), float64(ms[1])/3)
	assert.Less(t, float64(ms[64]), float64(ms[1])/3)
}

func TestNoOrigins(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Seed: 3})
	var buf bytes.Buffer
	_, err := perfetto.Write(&buf, res.Snapshot, perfetto.Options{Origins: true})
	require.NoError(t, err)
	_, err = Load(buf.Bytes())
	require.ErrorIs(t, err, ErrNoOrigins)
	_, err = Load([]byte("garbage"))
	require.Error(t, err)
	_, err = Load(nil)
	require.Error(t, err)
}

func TestConfigSet(t *testing.T) {
	c := DefaultConfig()
	for _, kv := range []string{"wake-all", "steal-one", "take-fair", "local-lifo", "steal_limit=8", "bucket_batch=16",
		"spins=4", "park_spin=10us", "wake_calls=wake-n", "priority=Heavy", "learn_heavy=true", "seed=7"} {
		require.NoError(t, c.Set(kv), kv)
	}
	assert.Equal(t, "wake-all steal-one steal_limit=8 take-fair bucket_batch=16 local-lifo spins=4 park_spin=10µs wake_calls=wake-n priority=Heavy learn_heavy=true seed=7", c.String())
	for _, bad := range []string{"fast", "steal_limit=0", "steal_limit=x", "park_spin=2s", "wake_calls=steal-one", "priority=", "nope=1", "wake=steal-one", "learn_heavy=maybe"} {
		assert.Error(t, c.Set(bad), bad)
	}
	c.Workers = MaxWorkers + 1
	assert.ErrorContains(t, c.validate(), "4094")
}

// TestStrings keeps the text report's labels stable for the docs.
func TestStrings(t *testing.T) {
	assert.True(t, strings.Contains(ErrNoOrigins.Error(), "Origins"))
}
