// Package chromejson writes a trace.Snapshot as Chrome JSON trace events
// ({"traceEvents":[...]}), for tools that read only JSON; Perfetto's UI
// opens it too. It draws exactly what trace/perfetto draws (both follow
// trace/internal/timeline): B/E slices per packet with the stage as "cat",
// "parked" slices, instants for wakes, counters ("C") for queue depths,
// metadata ("M") naming the process and threads, and a flow per steal from
// where the stolen packet was queued (a "queued" instant on the spawning
// worker's thread, or the control thread) to the stolen packet on the
// thief with "bind_id" (a "0x…" hexadecimal string) plus
// "flow_out"/"flow_in". An instant that starts a flow is written as a
// zero-length "X" slice, because flows bind to slices. Timestamps are
// microseconds with exact nanosecond fractions.
//
// [Check] validates a JSON trace the way Perfetto's importer reads it; the
// tests run it on every trace they write.
//
// # Costs
//
// About 130 bytes per packet slice (go test -run 'TestBytesPerSlice$' -v
// ./trace/chromejson/), four times the Perfetto encoding's 29-30, and
// 200-430 ns per recorded event to write (go test -run XXX -bench Write
// -benchtime 20x ./trace/chromejson/, the project's AMD EPYC 2-vCPU KVM
// guest, Go 1.26.8, shared machine). Prefer trace/perfetto unless a tool
// needs JSON.
package chromejson
