package perfetto_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/perfetto"
)

// Writing a scheduler's recording as a Perfetto trace, and checking it
// against the rules Perfetto's trace processor enforces.
func ExampleWrite() {
	rec := trace.NewRecorder(2, trace.Options{})
	s, err := scheduler.New(scheduler.Config{Workers: 2, Tracer: rec})
	if err != nil {
		panic(err)
	}
	for range 100 {
		if err := s.Add(scheduler.Func("Work", func(*scheduler.Worker) error { return nil })); err != nil {
			panic(err)
		}
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	s.Close() // the recording is complete once the workers are gone

	var buf bytes.Buffer
	st, err := perfetto.Write(&buf, rec.Snapshot(), perfetto.Options{})
	if err != nil {
		panic(err)
	}
	if _, err := perfetto.Check(buf.Bytes()); err != nil {
		panic(err)
	}
	fmt.Println(st.Slices, "packet slices, at most 32 bytes each:", st.BytesPerSlice() <= 32)
	// Output:
	// 100 packet slices, at most 32 bytes each: true
}
