package tracebuf

import (
	"sync"
	"testing"
	"time"
)

// BenchmarkTraceEvent measures one hook call (one event) per op.
//
//   - On: a packet begin or end recorded into a ring (Overwrite, so the
//     buffer never fills and the steady state is measured).
//   - OnQueued: the same with the begin saying how its packet was queued
//     (PacketBeginQueued, the scheduler's hook).
//   - Off: the same hooks on a nil *Buf (tracing disabled).
//   - Full: stop policy with the buffer already full (events dropped).
//   - MutexSliceBaseline: the naive design, appending to a mutex-guarded
//     slice with a time.Since timestamp.
func BenchmarkTraceEvent(b *testing.B) {
	b.Run("On", func(b *testing.B) {
		r := NewRecorder(1, Options{MaxBytes: 4 << 20, Overwrite: true})
		w := r.Worker(0)
		name := r.Intern("Scan")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i&1 == 0 {
				w.PacketBegin(name, 1, 0)
			} else {
				w.PacketEnd()
			}
			i++
		}
	})
	b.Run("OnQueued", func(b *testing.B) {
		r := NewRecorder(1, Options{MaxBytes: 4 << 20, Overwrite: true})
		w := r.Worker(0)
		name := r.Intern("Scan")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i&1 == 0 {
				w.PacketBeginQueued(name, 1, 0, 1, int64(i), false)
			} else {
				w.PacketEnd()
			}
			i++
		}
	})
	b.Run("Off", func(b *testing.B) {
		var r *Recorder
		w := r.Worker(0)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i&1 == 0 {
				w.PacketBegin(1, 1, 0)
			} else {
				w.PacketEnd()
			}
			i++
		}
	})
	b.Run("Full", func(b *testing.B) {
		r := NewRecorder(1, Options{MaxBytes: 1024})
		w := r.Worker(0)
		for range 1024 {
			w.PacketEnd()
		}
		b.ReportAllocs()
		for b.Loop() {
			w.PacketEnd()
		}
	})
	b.Run("MutexSliceBaseline", func(b *testing.B) {
		type ev struct {
			t    int64
			kind uint8
			name uint32
		}
		var mu sync.Mutex
		start := time.Now()
		buf := make([]ev, 0, 1<<16)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			mu.Lock()
			if len(buf) == cap(buf) {
				buf = buf[:0] // bound memory; the cost measured is lock+clock+append
			}
			buf = append(buf, ev{t: int64(time.Since(start)), kind: uint8(i & 1), name: 1})
			mu.Unlock()
			i++
		}
	})
}
