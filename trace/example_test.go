package trace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/analyze"
	"github.com/wsched/wsched/trace/perfetto"
)

// work is a packet that spins for a while.
type work struct{ n int }

func (p work) Run(w *scheduler.Worker) error {
	x := uint64(p.n)
	for range 10_000 {
		x = x*6364136223846793005 + 1442695040888963407
	}
	_ = x
	return nil
}

// PacketName names the packet in the trace.
func (work) PacketName() string { return "Work" }

// Tracing a scheduler to a Perfetto file: give the scheduler a Recorder,
// run, then write a snapshot. Open the file in https://ui.perfetto.dev, or
// read it back with trace/analyze (as `wsched analyze FILE` does).
func Example() {
	const workers = 2
	rec := trace.NewRecorder(workers, trace.Options{}) // 32 MiB of buffers at most
	s, err := scheduler.New(scheduler.Config{
		Workers: workers, // must match the recorder
		Stages:  []string{"Load", "Compute"},
		Tracer:  rec,
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	const load, compute scheduler.StageID = 1, 2 // Stages[i] is StageID i+1
	for i := range 10 {
		if err := s.Add(work{i}, load); err != nil {
			panic(err)
		}
		if err := s.Add(work{i}, compute); err != nil {
			panic(err)
		}
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}

	dir, err := os.MkdirTemp("", "wsched-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.pftrace")
	st, err := perfetto.WriteFile(path, rec.Snapshot(), perfetto.Options{ProcessName: "example"})
	if err != nil {
		panic(err)
	}
	fmt.Println("packet slices written:", st.Slices)

	rep, err := analyze.File(path)
	if err != nil {
		panic(err)
	}
	for _, c := range rep.Cycles {
		for _, stage := range c.Stages {
			fmt.Printf("cycle %d, stage %s: %d packets\n", c.Cycle, stage.Name, stage.Packets)
		}
	}
	// Output:
	// packet slices written: 20
	// cycle 1, stage Load: 10 packets
	// cycle 1, stage Compute: 10 packets
}
