package simulate

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
)

// decisions lists the scheduling decisions a snapshot records, buffer by
// buffer (the workers', then the control buffer's): which packet each
// worker began (its name, stage and lane), its steals (victim and packets
// moved), parks and wake-ups, the add calls (how, stage, packets) and the
// stages' openings and closes. Left out: the unparks after the last
// cycle's end (Close waking the workers to exit, which a replay has no
// call for).
func decisions(snap *trace.Snapshot) [][]string {
	var last int64
	for _, e := range snap.Control().Events {
		if e.Kind() == trace.KindCycleEnd {
			last = e.Time
		}
	}
	out := make([][]string, len(snap.Buffers))
	for i, b := range snap.Buffers {
		for _, e := range b.Events {
			if e.Kind() == trace.KindUnpark && e.Time > last {
				continue
			}
			var d string
			switch e.Kind() {
			case trace.KindCycleBegin:
				d = "cycle"
			case trace.KindCycleEnd:
				d = "cycle end"
			case trace.KindStageOpen:
				d = fmt.Sprint("open ", e.Stage())
			case trace.KindStageClose:
				d = fmt.Sprint("close ", e.Stage())
			case trace.KindPacketBegin:
				d = fmt.Sprintf("run %s stage %d priority %v", snap.Name(e.Name()), e.Stage(), e.Priority())
			case trace.KindSteal:
				d = fmt.Sprintf("steal from %d moved %d", e.Victim(), e.Moved())
			case trace.KindPark:
				d = "park"
			case trace.KindUnpark:
				d = "unpark"
			case trace.KindWakeSent:
				d = fmt.Sprint("wake ", e.Target())
			case trace.KindAdd:
				d = fmt.Sprintf("add %v stage %d packets %d", e.How(), e.Stage(), e.Packets())
			default:
				continue
			}
			out[i] = append(out[i], d)
		}
	}
	return out
}

// replayDecisions records cycles of job on a real scheduler under cfg,
// replays the trace on as many workers under its recorded configuration,
// and returns both runs' decisions.
func replayDecisions(t *testing.T, cfg scheduler.Config, cycles int, job func(*scheduler.Scheduler) error) (real, replayed [][]string) {
	t.Helper()
	snap, data := recordRun(t, cfg, cycles, job)
	wl, err := Load(data)
	require.NoError(t, err)
	require.Zero(t, wl.Orphans)
	r, err := Run(wl, Config{}.with(wl.Config, cfg.Workers), Options{Record: true})
	require.NoError(t, err)
	real, replayed = decisions(snap), decisions(r.Snapshot())
	require.Len(t, replayed, len(real), "buffers")
	for i := range real {
		require.NotEmpty(t, real[i], "buffer %d records no decision", i)
	}
	return real, replayed
}

// TestReplayDecisionsOneWorker: a real run on one worker (treeJob: a
// spawn tree whose packets add to a later stage, a priority packet, a
// designated one; three cycles) and its replay make the same decisions one for one:
// the same packets in the same order from the same lanes, the same adds,
// parks and stage openings.
func TestReplayDecisionsOneWorker(t *testing.T) {
	real, replayed := replayDecisions(t, scheduler.Config{Workers: 1, Stages: []string{"Tree", "Later"}}, 3, treeJob)
	for i := range real {
		assert.Equal(t, real[i], replayed[i], "buffer %d", i)
	}
}

// rearm is a sentinel that, the first n times it runs, queues k more
// packets into its stage and sets itself again (the stage loops).
type rearm struct {
	s    *scheduler.Scheduler
	n, k int
}

func (p rearm) PacketName() string { return "Rearm" }

func (p rearm) Run(w *scheduler.Worker) error {
	if p.n == 0 {
		return nil
	}
	for range p.k {
		if err := p.s.Add(spin{n: 5, s: p.s}, scheduler.StageID(1)); err != nil {
			return err
		}
	}
	return p.s.SetSentinel(1, rearm{p.s, p.n - 1, p.k})
}

// TestReplayDecisionsBucketsLendSentinels: on one worker, what
// TestReplayDecisionsOneWorker does not cover: an AddAll of 40 packets
// (bucket takes and the held batch), a lent slice of 12 (Lend), and a
// sentinel that re-arms its stage twice with 3 packets each; stage 2
// holds an AddAll of 5, three cycles. The replay makes the same decisions
// one for one.
func TestReplayDecisionsBucketsLendSentinels(t *testing.T) {
	lent := make([]scheduler.Packet, 12)
	job := func(s *scheduler.Scheduler) error {
		many := make([]scheduler.Packet, 40)
		for i := range many {
			many[i] = spin{n: 3, s: s}
		}
		if err := s.AddAll(many, scheduler.StageID(1)); err != nil {
			return err
		}
		for i := range lent {
			lent[i] = spin{n: 4, s: s}
		}
		if err := s.AddAll(lent, scheduler.StageID(1), scheduler.Lend); err != nil {
			return err
		}
		if err := s.SetSentinel(1, rearm{s, 2, 3}); err != nil {
			return err
		}
		second := make([]scheduler.Packet, 5)
		for i := range second {
			second[i] = later{}
		}
		return s.AddAll(second, scheduler.StageID(2))
	}
	real, replayed := replayDecisions(t, scheduler.Config{Workers: 1, Stages: []string{"First", "Second"}}, 3, job)
	// The scenario ran: per cycle 40 + 12 + 2×3 spins, three sentinel
	// runs (two that re-arm, one that ends), 5 packets of stage 2.
	runs := map[string]int{}
	for _, d := range real[0] {
		runs[d]++
	}
	assert.Equal(t, 3*58, runs["run Spin0 stage 1 priority false"])
	assert.Equal(t, 3*3, runs["run Rearm stage 1 priority false"])
	assert.Equal(t, 3*5, runs["run simulate.later stage 2 priority false"], "%v", runs)
	for i := range real {
		assert.Equal(t, real[i], replayed[i], "buffer %d", i)
	}
}

// forked is the 2-worker scenario's root: it spawns kids children of
// child µs each, then runs for n µs.
type forked struct{ n, kids, child int }

func (p forked) Run(w *scheduler.Worker) error {
	for range p.kids {
		scheduler.Spawn(w, spin{n: p.child})
	}
	spin{n: p.n}.Run(w)
	return nil
}

// TestReplayDecisionsTwoWorkers: two workers with an interleaving fixed
// by time, two cycles. Worker 0 runs a designated root that spawns three
// children of 4 ms (the newest two held in its private stack, the oldest
// in its deque) and runs 10 ms more; worker 1, woken by the spawns,
// steals the deque's child, runs it and parks; worker 0 ends the root,
// offers its private children to the idle worker and wakes it, worker 1
// steals one, each runs one, both park and the cycle ends. Every
// decision is a millisecond or more from the next, so the replay's
// wake-up and steal costs (microseconds, Costs) cannot reorder them, and
// it must make the same ones: the same packets on the same workers in the
// same order, the same steals (victim, packets moved), wakes, parks and
// stage openings. A host that stalls a worker for milliseconds (a CPU
// hog, the race detector on 2 vCPUs) can change the real run's
// interleaving itself; the scenario is then recorded again until it ran
// as designed (every worker's decisions as written out below), at most
// five times (then
// the test is skipped, saying so: on 2 vCPUs under -race with three CPU
// hogs beside it, 1 to 4 of 10 runs), and that recording's decisions must
// match the replay's.
func TestReplayDecisionsTwoWorkers(t *testing.T) {
	job := func(s *scheduler.Scheduler) error {
		return s.AddDesignated(0, forked{n: 10_000, kids: 3, child: 4_000})
	}
	cfg := scheduler.Config{Workers: 2, Stages: []string{"Fork"}}
	for attempt := 1; ; attempt++ {
		real, replayed := replayDecisions(t, cfg, 2, job)
		// The design, worker by worker: the root on worker 0, which
		// wakes worker 1 at the spawns and again when it offers its
		// private stack at the root's end; worker 1 steals one child at
		// each wake-up and parks after it.
		var want [2][]string
		want[0], want[1] = []string{"park"}, []string{"park"}
		for range 2 {
			want[0] = append(want[0], "unpark", "run simulate.forked stage 0 priority false", "wake 1", "wake 1",
				"run Spin0 stage 0 priority false", "park")
			for range 2 {
				want[1] = append(want[1], "unpark", "steal from 0 moved 1", "run Spin0 stage 0 priority false", "park")
			}
		}
		designed := slices.Equal(real[0], want[0]) && slices.Equal(real[1], want[1])
		if !designed && attempt == 5 {
			t.Skipf("the host did not let the scenario run as designed in 5 recordings; the last: %q", real[:2])
		}
		if designed {
			for i := range real {
				assert.Equal(t, real[i], replayed[i], "buffer %d", i)
			}
			return
		}
		t.Logf("attempt %d: the run did not go as designed; recording again", attempt)
	}
}

// late spins for n µs and then spawns kids children of child µs.
type late struct{ n, kids, child int }

func (p late) Run(w *scheduler.Worker) error {
	spin{n: p.n}.Run(w)
	for range p.kids {
		scheduler.Spawn(w, spin{n: p.child})
	}
	return nil
}

// TestSpawnsPlacedByOwnEvents: a packet that computes for 2 ms and then
// spawns eight children, while a second worker steals them one at a
// time (StealOne), the oldest first. Only
// the spawning worker's own events bound a spawn: the marks a thief
// leaves on the victim's track (where the stolen packet was queued, that
// it was stolen) sit at the made-up stamps of the later siblings, near
// the parent's start, and must not pull the earlier siblings there. Every
// spawn is placed after the parent's 2 ms of work (a wall-clock spin, so
// a preemption does not shorten it).
func TestSpawnsPlacedByOwnEvents(t *testing.T) {
	for attempt := 1; ; attempt++ {
		_, data := recordRun(t, scheduler.Config{Workers: 2, Stages: []string{"Late"}, Steal: scheduler.StealOne}, 3,
			func(s *scheduler.Scheduler) error { return s.AddDesignated(0, late{n: 2_000, kids: 8, child: 1_000}) })
		wl, err := Load(data)
		require.NoError(t, err)
		stolen := 0
		for _, cy := range wl.Cycles {
			require.Len(t, cy.Packets, 9)
			var root int32 = -1
			for i, p := range cy.Packets {
				if wl.Names[p.Name] == "simulate.late" {
					root = int32(i)
				} else if p.Worker != 0 {
					stolen++
				}
			}
			require.GreaterOrEqual(t, root, int32(0))
			acts := cy.acts[cy.actLo[root]:cy.actLo[root+1]]
			require.Len(t, acts, 8)
			pk := cy.Packets[root]
			for _, a := range acts {
				at := time.Duration(a.at * float64(pk.Cost))
				assert.GreaterOrEqual(t, at, 2*time.Millisecond, "cycle %d: a spawn placed %v into its parent, before its 2 ms of work ended", cy.Number, at)
			}
		}
		// The case that matters: the thief stole later siblings too (more
		// than one child in some cycle), leaving marks at their stamps.
		if stolen > 3 {
			t.Logf("%d of 24 children ran on the thief", stolen)
			return
		}
		if attempt == 5 {
			t.Skipf("the thief took at most one child a cycle in 5 recordings (a busy host): no later sibling's marks to test")
		}
	}
}
