package synth

import (
	"math/rand/v2"

	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
)

// Config describes a simulated run.
type Config struct {
	Workers   int
	Cycles    int
	Stages    []string // default {"Prepare", "Closure", "Release"}
	Packets   int      // packets added to each stage's bucket, default 40
	Seed      uint64
	MaxBytes  int // recorder cap; default 4 MiB
	Overwrite bool
	// Heavy, if > 0, adds one packet of that many ns to stage 1 of each
	// cycle (the luindex case: one packet dominating the critical path).
	Heavy int64
	// SpawnProb is the chance (0..1) that a packet spawns two children into
	// its worker's local deque; default 0.3.
	SpawnProb float64
	// NoCounters leaves counter events out.
	NoCounters bool
}

// Result is a generated trace and facts the simulation knows.
type Result struct {
	Recorder *tracebuf.Recorder
	Snapshot *trace.Snapshot
	Packets  int // packets executed
	Steals   int
	Wakes    int
	// Busy[w] is the total packet time of worker w.
	Busy []int64
}

type packet struct {
	name  trace.NameID
	stage int
	dur   int64
	flow  uint64
	spawn bool
}

type worker struct {
	id     int
	now    int64
	local  []packet
	parked bool
	wakeAt int64 // when woken while parked; 0 = not woken
}

// Generate runs the simulation.
func Generate(cfg Config) *Result {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Cycles <= 0 {
		cfg.Cycles = 1
	}
	if cfg.Stages == nil {
		cfg.Stages = []string{"Prepare", "Closure", "Release"}
	}
	if cfg.Packets <= 0 {
		cfg.Packets = 40
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 4 << 20
	}
	if cfg.SpawnProb == 0 {
		cfg.SpawnProb = 0.3
	}
	var now int64
	rec := tracebuf.NewRecorder(cfg.Workers, tracebuf.Options{MaxBytes: cfg.MaxBytes, Overwrite: cfg.Overwrite, Clock: func() int64 { return now }})
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	res := &Result{Recorder: rec, Busy: make([]int64, cfg.Workers)}

	types := []struct {
		name trace.NameID
		dur  int64
	}{
		{rec.Intern("ScanStack"), 2000},
		{rec.Intern("ProcessEdges"), 800},
		{rec.Intern("SweepChunk"), 1500},
		{rec.Intern("Finalize"), 400},
	}
	heavy := rec.Intern("ScanCodeCacheRoots")
	stageIDs := make([]trace.NameID, len(cfg.Stages))
	for i, s := range cfg.Stages {
		stageIDs[i] = rec.Intern(s)
	}
	ctl := rec.Control()
	ws := make([]*worker, cfg.Workers)
	for i := range ws {
		ws[i] = &worker{id: i, parked: true}
	}
	var flow uint64
	parkedCount := cfg.Workers
	counter := func(w *tracebuf.Buf, k trace.CounterKind, idx int, v int64) {
		if !cfg.NoCounters {
			w.Counter(k, idx, v)
		}
	}
	newPacket := func(stage int) packet {
		t := types[rng.IntN(len(types))]
		return packet{name: t.name, stage: stage, dur: t.dur/2 + rng.Int64N(t.dur)}
	}

	now = 1000
	for i := range ws {
		rec.Worker(i).Park()
	}
	for cycle := 1; cycle <= cfg.Cycles; cycle++ {
		ctl.CycleBegin(uint64(cycle))
		for si := range cfg.Stages {
			stage := si + 1
			now += 200
			ctl.StageOpen(stage, stageIDs[si])
			bucket := make([]packet, 0, cfg.Packets+1)
			if cfg.Heavy > 0 && si == 0 {
				bucket = append(bucket, packet{name: heavy, stage: stage, dur: cfg.Heavy})
			}
			for range cfg.Packets {
				bucket = append(bucket, newPacket(stage))
			}
			counter(ctl, trace.CounterBucketDepth, stage, int64(len(bucket)))
			// Wake every worker; each resumes after an OS-like latency.
			for _, w := range ws {
				ctl.WakeSent(w.id)
				res.Wakes++
				w.wakeAt = now + 1000 + rng.Int64N(20000)
			}
			stageStart := now
			// Event loop: always advance the worker with the earliest time.
			for {
				var w *worker
				for _, c := range ws {
					t := c.now
					if c.parked {
						if c.wakeAt == 0 {
							continue
						}
						t = c.wakeAt
					}
					if w == nil || t < timeOf(w) {
						w = c
					}
				}
				if w == nil {
					break // everyone parked, nobody woken: stage drained
				}
				tb := rec.Worker(w.id)
				if w.parked {
					now = max(w.wakeAt, stageStart)
					w.now = now
					w.parked, w.wakeAt = false, 0
					parkedCount--
					tb.Unpark()
					tb.WakeReceived(true)
					counter(tb, trace.CounterParked, 0, int64(parkedCount))
					continue
				}
				now = w.now
				var p packet
				var ok bool
				if n := len(w.local); n > 0 {
					p, w.local = w.local[n-1], w.local[:n-1]
					counter(tb, trace.CounterLocalLen, w.id, int64(len(w.local)))
					ok = true
				} else if len(bucket) > 0 {
					p, bucket = bucket[0], bucket[1:]
					counter(tb, trace.CounterBucketDepth, stage, int64(len(bucket)))
					ok = true
				} else {
					// Steal one from the longest local deque.
					var victim *worker
					for _, v := range ws {
						if v != w && len(v.local) > 0 && (victim == nil || len(v.local) > len(victim.local)) {
							victim = v
						}
					}
					if victim != nil {
						p, victim.local = victim.local[0], victim.local[1:]
						flow++
						p.flow = flow
						now += 150
						tb.Steal(victim.id, 1, flow)
						res.Steals++
						ok = true
					}
				}
				if !ok {
					now += 300 // search before parking
					w.now = now
					w.parked = true
					parkedCount++
					tb.Park()
					counter(tb, trace.CounterParked, 0, int64(parkedCount))
					continue
				}
				tb.PacketBegin(p.name, p.stage, p.flow)
				res.Packets++
				if p.dur < 100 {
					p.dur = 100
				}
				if rng.Float64() < cfg.SpawnProb && len(w.local) < 8 {
					w.local = append(w.local, newPacket(stage), newPacket(stage))
					counter(tb, trace.CounterLocalLen, w.id, int64(len(w.local)))
					// Wake one parked worker for the new work.
					for _, v := range ws {
						if v.parked && v.wakeAt == 0 {
							tb.WakeSent(v.id)
							res.Wakes++
							v.wakeAt = now + 1000 + rng.Int64N(20000)
							break
						}
					}
				}
				now += p.dur
				res.Busy[w.id] += p.dur
				tb.PacketEnd()
				w.now = now + 50
			}
			now = lastTime(ws)
		}
		now += 100
		for si := range cfg.Stages {
			ctl.StageClose(si + 1)
		}
		ctl.CycleEnd(uint64(cycle))
		now += 5000
	}
	res.Snapshot = rec.Snapshot()
	return res
}

func timeOf(w *worker) int64 {
	if w.parked {
		return w.wakeAt
	}
	return w.now
}

func lastTime(ws []*worker) int64 {
	var t int64
	for _, w := range ws {
		t = max(t, w.now)
	}
	return t
}
