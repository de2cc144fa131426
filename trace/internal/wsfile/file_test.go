package wsfile

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/origin"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/internal/timeline"
	"github.com/wsched/wsched/trace/perfetto"
)

// TestLoadHoldsTheSnapshot: a file written from a snapshot loads back
// into a File that holds the snapshot's events, worker by worker: each
// packet slice with its begin, end, name, stage and whether it was
// stolen, each park, steal, wake and cycle, and how each packet was
// queued when the file says.
func TestLoadHoldsTheSnapshot(t *testing.T) {
	for _, origins := range []bool{false, true} {
		// A simulated run has no origins to write; a real one does.
		var snap *trace.Snapshot
		if origins {
			snap = realRun(t)
		} else {
			snap = synth.Generate(synth.Config{Workers: 3, Cycles: 4, Seed: 7}).Snapshot
		}
		var buf bytes.Buffer
		_, err := perfetto.Write(&buf, snap, perfetto.Options{Origins: origins})
		require.NoError(t, err)
		f, err := Load(buf.Bytes())
		require.NoError(t, err)

		assert.Equal(t, buf.Len(), f.Size)
		assert.Equal(t, snap.Workers(), f.Workers)
		require.Len(t, f.W, snap.Workers())
		type pkt struct {
			start, end  int64
			name, stage string
			stolen      bool
		}
		var steals, wakes, cycles, packets, adds int
		codes := map[string]int{}
		stageName := map[int]string{0: timeline.CatUnconstrained}
		for _, e := range snap.Control().Events {
			if e.Kind() == trace.KindStageOpen {
				stageName[e.Stage()] = snap.Name(e.Name())
			}
		}
		for _, b := range snap.Buffers {
			var want []pkt
			var parks []int64
			var open []pkt
			for _, e := range b.Events {
				switch e.Kind() {
				case trace.KindPacketBegin:
					open = append(open, pkt{start: e.Time, name: snap.Name(e.Name()), stage: stageName[e.Stage()], stolen: e.Flow() != 0})
				case trace.KindPacketEnd:
					p := open[len(open)-1]
					open = open[:len(open)-1]
					p.end = e.Time
					want = append(want, p)
				case trace.KindPark:
					parks = append(parks, e.Time)
				case trace.KindSteal:
					steals++
				case trace.KindWakeSent:
					wakes++
				case trace.KindCycleBegin:
					cycles++
				case trace.KindAdd:
					adds++
				}
			}
			if b.Worker < 0 {
				continue
			}
			w := f.Worker(b.Worker)
			require.NotNil(t, w, "worker %d", b.Worker)
			assert.True(t, w.Used)
			var got []pkt
			for _, s := range w.Packets {
				got = append(got, pkt{s.Start, s.End, f.Strs[s.Name], f.Strs[s.Stage], s.Stolen})
				assert.Equal(t, origins, s.Code != 0, "origin of a packet of worker %d", b.Worker)
				if s.Code != 0 {
					assert.LessOrEqual(t, s.Queued, s.Start, "queued after it began")
					codes[f.Strs[s.Name]+":"+codeKind(s.Code)]++
				}
			}
			assert.ElementsMatch(t, want, got, "worker %d's packets", b.Worker)
			packets += len(got)
			var gotParks []int64
			for _, s := range w.Parks {
				gotParks = append(gotParks, s.Start)
				assert.Equal(t, int32(-1), s.Stage)
			}
			assert.ElementsMatch(t, parks, gotParks, "worker %d's parks", b.Worker)
			for i := 1; i < len(w.Marks); i++ {
				require.LessOrEqual(t, w.Marks[i-1], w.Marks[i], "marks sorted")
			}
			// Its own events: two a packet, two a park, and instants;
			// none of the marks a thief leaves on its track (where a
			// stolen packet was queued, that it was stolen), which
			// stand at times of the thief's clock or after the
			// spawner's newest event.
			assert.GreaterOrEqual(t, len(w.Marks), 2*(len(got)+len(gotParks)))
			own := map[int64]bool{snap.End: true} // the writer closes open slices at the end
			for _, e := range b.Events {
				own[e.Time] = true
			}
			for _, m := range w.Marks {
				require.True(t, own[m], "worker %d: mark at %d is no event of its own", b.Worker, m)
			}
		}
		assert.Positive(t, packets)
		assert.Equal(t, origins, f.HasOrigins)
		var gotSteals, gotWakes int
		for _, in := range f.Instants {
			switch in.Kind {
			case InstSteal:
				gotSteals++
			case InstWake:
				gotWakes++
			}
		}
		assert.Equal(t, steals, gotSteals)
		assert.Equal(t, wakes, gotWakes)
		assert.Len(t, f.Cycles, cycles)
		for i := 1; i < len(f.Cycles); i++ {
			assert.LessOrEqual(t, f.Cycles[i-1].End, f.Cycles[i].Start)
		}
		assert.NotEmpty(t, f.Stages)
		assert.Len(t, f.Adds, adds)
		if origins {
			// Per cycle: the root added, 30 nodes spawned, 16 leaves'
			// adds, one designated packet.
			assert.Equal(t, map[string]int{"node:add": 3, "node:spawn": 90, "later:add": 48, "mine:designated": 3}, codes)
		}
		assert.Equal(t, snap.Config != "", f.HasConfig, "config")
	}
}

// realRun records 3 cycles on 2 workers: a spawn tree in stage 1 whose
// leaves add to stage 2, and a designated packet.
func realRun(t *testing.T) *trace.Snapshot {
	rec := trace.NewRecorder(2, trace.Options{})
	s, err := scheduler.New(scheduler.Config{Workers: 2, Stages: []string{"Tree", "Later"}, Tracer: rec})
	require.NoError(t, err)
	var tree func(depth int) scheduler.Packet
	tree = func(depth int) scheduler.Packet {
		return scheduler.Func("node", func(w *scheduler.Worker) error {
			if depth == 0 {
				return w.Scheduler().Add(scheduler.Func("later", func(*scheduler.Worker) error { return nil }), scheduler.StageID(2))
			}
			scheduler.Spawn(w, tree(depth-1))
			scheduler.Spawn(w, tree(depth-1))
			return nil
		})
	}
	for range 3 {
		require.NoError(t, s.Add(tree(4)))
		require.NoError(t, s.AddDesignated(1, scheduler.Func("mine", func(*scheduler.Worker) error { return nil })))
		require.NoError(t, s.Run(context.Background()))
	}
	require.NoError(t, s.Close())
	return rec.Snapshot()
}

func codeKind(c uint32) string {
	switch {
	case c == origin.None:
		return "designated"
	case c == origin.Add:
		return "add"
	case c == origin.Priority:
		return "priority"
	case c >= origin.Worker0:
		return "spawn"
	}
	return "?"
}
