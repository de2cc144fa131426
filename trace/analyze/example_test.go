package analyze_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/analyze"
	"github.com/wsched/wsched/trace/perfetto"
)

// Analysing a trace: per cycle and per stage, what ran, against the
// stage's lower bound (Report.WriteText prints it all, as `wsched analyze`
// does).
func ExampleBytes() {
	rec := trace.NewRecorder(2, trace.Options{})
	s, err := scheduler.New(scheduler.Config{Workers: 2, Stages: []string{"Load", "Compute"}, Tracer: rec})
	if err != nil {
		panic(err)
	}
	nop := func(*scheduler.Worker) error { return nil }
	for range 10 {
		if err := s.Add(scheduler.Func("Load", nop), scheduler.StageID(1)); err != nil {
			panic(err)
		}
		if err := s.Add(scheduler.Func("Compute", nop), scheduler.StageID(2)); err != nil {
			panic(err)
		}
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	s.Close()
	var buf bytes.Buffer
	if _, err := perfetto.Write(&buf, rec.Snapshot(), perfetto.Options{}); err != nil {
		panic(err)
	}

	r, err := analyze.Bytes(buf.Bytes())
	if err != nil {
		panic(err)
	}
	fmt.Println("workers:", r.Workers, "packets:", r.Packets, "cycles:", len(r.Cycles))
	for _, st := range r.Cycles[0].Stages {
		if st.Stage > 0 {
			fmt.Println("stage", st.Name)
		}
	}
	// Output:
	// workers: 2 packets: 20 cycles: 1
	// stage Load
	// stage Compute
}
