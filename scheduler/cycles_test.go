package scheduler

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wsched/wsched/internal/watchdog"
)

// plan is one scheduler's bookkeeping for random stage plans: how many
// packets of each stage exist and have not finished, and every breach of
// the stage order seen by a running packet.
type plan struct {
	s           *Scheduler
	outstanding []atomic.Int64 // index = StageID
	rounds      []atomic.Int64 // sentinel re-arms left, per stage
	created     atomic.Int64
	ran         atomic.Int64
	violations  atomic.Int64
	firstErr    atomic.Value
}

func (pl *plan) fail(format string, args ...any) {
	pl.violations.Add(1)
	pl.firstErr.CompareAndSwap(nil, fmt.Sprintf(format, args...))
}

// packet is a random plan packet. On every run it checks that every earlier
// user stage has drained (the stage-order rule), then spawns children in
// its stage (some with SpawnOrRun, which may run them inline), adds
// packets to later stages and designated work.
type planPacket struct {
	pl    *plan
	stage StageID
	depth int
	rng   uint64
}

func (pl *plan) newPacket(stage StageID, depth int, rng uint64) *planPacket {
	pl.outstanding[stage].Add(1)
	pl.created.Add(1)
	return &planPacket{pl: pl, stage: stage, depth: depth, rng: rng}
}

func (p *planPacket) Run(w *Worker) {
	pl := p.pl
	if w.Stage() != p.stage {
		pl.fail("packet of stage %d saw Worker.Stage() = %d", p.stage, w.Stage())
	}
	for st := StageID(1); st < p.stage; st++ {
		if n := pl.outstanding[st].Load(); n != 0 {
			pl.fail("packet of stage %d ran while stage %d had %d packets outstanding", p.stage, st, n)
		}
	}
	r := rand.New(rand.NewPCG(p.rng, 7))
	if p.depth > 0 {
		for range r.IntN(4) {
			c := pl.newPacket(p.stage, p.depth-1, r.Uint64())
			switch {
			case r.IntN(8) == 0 && p.stage != Unconstrained:
				pl.mustAdd(pl.s.AddPriority(p.stage, c))
			case r.IntN(3) == 0:
				w.SpawnOrRun(c) // maybe inline, nested in this packet
			default:
				w.Spawn(c)
			}
		}
		if p.stage != Unconstrained && r.IntN(4) == 0 {
			if later := int(p.stage) + 1 + r.IntN(pl.s.Stages()); later <= pl.s.Stages() {
				pl.mustAdd(pl.s.Add(StageID(later), pl.newPacket(StageID(later), p.depth-1, r.Uint64())))
			}
		}
		if r.IntN(16) == 0 {
			err := pl.s.AddDesignated(r.IntN(pl.s.Workers()), pl.newPacket(Unconstrained, 0, r.Uint64()))
			if err == ErrDesignatedFull {
				pl.outstanding[Unconstrained].Add(-1)
				pl.created.Add(-1)
			} else {
				pl.mustAdd(err)
			}
		}
	}
	pl.ran.Add(1)
	pl.outstanding[p.stage].Add(-1)
}

func (pl *plan) mustAdd(err error) {
	if err != nil {
		pl.fail("add: %v", err)
	}
}

// sentinelPacket re-arms its stage rounds times, adding work each time.
type sentinelPacket struct {
	pl    *plan
	stage StageID
	rng   uint64
}

func (p *sentinelPacket) Run(w *Worker) {
	pl := p.pl
	for st := StageID(1); st < p.stage; st++ {
		if n := pl.outstanding[st].Load(); n != 0 {
			pl.fail("sentinel of stage %d ran while stage %d had %d packets outstanding", p.stage, st, n)
		}
	}
	// Everything else of this stage has drained: only this sentinel is left.
	if n := pl.outstanding[p.stage].Load(); n != 1 {
		pl.fail("sentinel of stage %d ran with %d packets of its stage outstanding", p.stage, n)
	}
	r := rand.New(rand.NewPCG(p.rng, 9))
	if pl.rounds[p.stage].Add(-1) >= 0 {
		pl.outstanding[p.stage].Add(1)
		pl.created.Add(1)
		pl.mustAdd(pl.s.SetSentinel(p.stage, &sentinelPacket{pl: pl, stage: p.stage, rng: r.Uint64()}))
		for range r.IntN(5) {
			w.Spawn(pl.newPacket(p.stage, 2, r.Uint64()))
		}
	}
	pl.ran.Add(1)
	pl.outstanding[p.stage].Add(-1)
}

// TestRandomCycles runs thousands of short cycles with random stage plans,
// sentinels (some re-arming their stage) and designated work, on schedulers
// of 1-5 workers and every wake policy, checking the stage order on every
// packet and exactly-once completion after every cycle, under a watchdog.
func TestRandomCycles(t *testing.T) {
	cycles := scale(3000, 3)
	if stress() {
		cycles = 30000
	}
	configs := []Config{
		{Workers: 1, Wake: WakeOne},
		{Workers: 2, Wake: WakeSearcher},
		{Workers: 3, Wake: WakeN, Steal: StealOne()},
		{Workers: 4, Wake: WakeAll, Steal: StealBatch(2)},
		{Workers: 5, Wake: WakeSearcher, LocalFIFO: true, Spins: 1},
		{Workers: 2, Wake: WakeN, Spins: 1, BucketBatch: 1, NoLIFOSlot: true},
	}
	for i, cfg := range configs {
		cfg.Stages = []string{"s1", "s2", "s3", "s4", "s5"}
		t.Run(fmt.Sprintf("%d-%dw-%v-%v", i, cfg.Workers, cfg.Wake, cfg.Steal), func(t *testing.T) {
			s := newSched(t, cfg)
			pl := &plan{s: s, outstanding: make([]atomic.Int64, 6), rounds: make([]atomic.Int64, 6)}
			r := rand.New(rand.NewPCG(uint64(i), 1))
			watch(t, 60*time.Second, func() {
				for c := range cycles {
					if !pl.cycle(t, r) {
						t.Errorf("cycle %d failed", c)
						return
					}
				}
			})
			st := s.Stats()
			if st.Cycles != uint64(cycles) || st.Aborted != 0 || st.Dropped != 0 {
				t.Fatalf("Stats: %d cycles (%d aborted, %d dropped), want %d", st.Cycles, st.Aborted, st.Dropped, cycles)
			}
			if st.PacketsRun() != uint64(pl.ran.Load()) {
				t.Fatalf("Stats: %d packets, the packets counted %d", st.PacketsRun(), pl.ran.Load())
			}
			var inlined uint64
			for _, ws := range st.Workers {
				inlined += ws.Inlined
			}
			if cfg.Workers == 1 && inlined == 0 {
				t.Fatal("SpawnOrRun never ran a child inline on one worker")
			}
			t.Logf("%d cycles, %d packets, %d of them inline", st.Cycles, pl.ran.Load(), inlined)
		})
	}
}

// cycle seeds one random plan, runs it, and checks it. It reports success;
// failures are reported with t.Error (it runs on the watchdog's goroutine).
func (pl *plan) cycle(t *testing.T, r *rand.Rand) bool {
	s := pl.s
	for st := range pl.rounds {
		pl.rounds[st].Store(0)
	}
	used := r.IntN(s.Stages() + 1) // stages that get packets: 0..5
	for range used {
		st := StageID(1 + r.IntN(s.Stages()))
		n := r.IntN(6)
		ps := make([]Packet, n)
		for i := range ps {
			ps[i] = pl.newPacket(st, r.IntN(4), r.Uint64())
		}
		var err error
		switch r.IntN(3) {
		case 0:
			err = s.BulkAdd(st, ps, WithWake(WakePolicy(1+r.IntN(4))))
		case 1:
			err = s.BulkAddPriority(st, ps)
		default:
			for _, p := range ps {
				if err = s.Add(st, p); err != nil {
					break
				}
			}
		}
		pl.mustAdd(err)
	}
	if r.IntN(4) == 0 {
		pl.mustAdd(s.Add(Unconstrained, pl.newPacket(Unconstrained, 2, r.Uint64())))
	}
	if r.IntN(4) == 0 {
		pl.mustAdd(s.AddDesignated(r.IntN(s.Workers()), pl.newPacket(Unconstrained, 1, r.Uint64())))
	}
	if r.IntN(3) == 0 { // a sentinel, possibly on an otherwise empty stage
		st := StageID(1 + r.IntN(s.Stages()))
		pl.rounds[st].Store(int64(r.IntN(4)))
		pl.outstanding[st].Add(1)
		pl.created.Add(1)
		pl.mustAdd(s.SetSentinel(st, &sentinelPacket{pl: pl, stage: st, rng: r.Uint64()}))
	}
	if err := s.Run(bg); err != nil {
		t.Errorf("Run: %v", err)
		return false
	}
	if v := pl.violations.Load(); v != 0 {
		t.Errorf("%d violations; first: %v", v, pl.firstErr.Load())
		return false
	}
	for st := range pl.outstanding {
		if n := pl.outstanding[st].Load(); n != 0 {
			t.Errorf("after Run: stage %d has %d packets outstanding", st, n)
			return false
		}
	}
	if pl.created.Load() != pl.ran.Load() {
		t.Errorf("after Run: %d packets created, %d ran", pl.created.Load(), pl.ran.Load())
		return false
	}
	if n := int(s.nParked.Load()); n != s.Workers() {
		t.Errorf("after Run: %d of %d workers parked", n, s.Workers())
		return false
	}
	return true
}

// TestCyclesNoGrowth runs thousands of cycles and checks that the number
// of goroutines and the live heap stay flat.
func TestCyclesNoGrowth(t *testing.T) {
	s := newSched(t, Config{Workers: 3, Stages: []string{"a", "b", "c"}})
	var n atomic.Int64
	cycle := func() {
		for st := StageID(1); st <= 3; st++ {
			if err := s.BulkAdd(st, []Packet{counter{&n}, counter{&n}, &chainPacket{left: 20, done: &n}}); err != nil {
				t.Error(err)
			}
		}
		if err := s.Run(bg); err != nil {
			t.Error(err)
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	cycles := scale(5000, 5)
	watch(t, 60*time.Second, func() {
		for range 500 {
			cycle()
		}
	})
	// The fewest goroutines seen over 50 ms: the first watch's goroutine
	// may still be exiting (see below), and counting it in g0 would hide
	// a one-goroutine leak.
	g0 := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(time.Millisecond)
		g0 = min(g0, runtime.NumGoroutine())
	}
	h0 := heap()
	watch(t, 60*time.Second, func() {
		for range cycles {
			cycle()
		}
	})
	// watch's goroutine closes its done channel before it exits, so it may
	// still be counted for a moment after watch returns: a goroutine that
	// leaked stays, one that is exiting goes within a few milliseconds.
	// (Sampled once, this check failed about once in 40 race runs.)
	g1 := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); g1 > g0 && time.Now().Before(deadline); g1 = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	h1 := heap()
	if g1 > g0 {
		t.Errorf("goroutines grew from %d to %d over %d cycles; stacks:\n%s", g0, g1, cycles, watchdog.Stacks())
	}
	if h1 > h0+1<<20 {
		t.Errorf("live heap grew from %d to %d bytes over %d cycles", h0, h1, cycles)
	}
	t.Logf("%d cycles: goroutines %d → %d, heap %d → %d", cycles, g0, g1, h0, h1)
}
