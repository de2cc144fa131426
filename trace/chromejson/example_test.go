package chromejson_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/chromejson"
)

// Writing a scheduler's recording as Chrome JSON trace events, which
// chrome://tracing and the Perfetto UI both open.
func ExampleWrite() {
	rec := trace.NewRecorder(1, trace.Options{})
	s, err := scheduler.New(scheduler.Config{Workers: 1, Tracer: rec})
	if err != nil {
		panic(err)
	}
	for range 3 {
		if err := s.Add(scheduler.Func("Work", func(*scheduler.Worker) error { return nil })); err != nil {
			panic(err)
		}
	}
	if err := s.Run(context.Background()); err != nil {
		panic(err)
	}
	s.Close()

	var buf bytes.Buffer
	if _, err := chromejson.Write(&buf, rec.Snapshot(), chromejson.Options{}); err != nil {
		panic(err)
	}
	var file struct {
		TraceEvents []struct {
			Name string `json:"name"`
			Ph   string `json:"ph"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &file); err != nil {
		panic(err)
	}
	work := 0
	for _, e := range file.TraceEvents {
		if e.Name == "Work" && (e.Ph == "B" || e.Ph == "X") {
			work++
		}
	}
	fmt.Println(work, "Work slices")
	// Output:
	// 3 Work slices
}
