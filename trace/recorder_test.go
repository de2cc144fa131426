package trace

import (
	"strings"
	"testing"

	"github.com/wsched/wsched/internal/tracebuf"
)

// TestNilRecorder: a nil *Recorder is tracing off; its methods are zero.
func TestNilRecorder(t *testing.T) {
	var r *Recorder
	if r.Snapshot() != nil || r.Workers() != 0 || r.Dropped() != 0 {
		t.Fatal("nil recorder methods not zero")
	}
	if (*tracebuf.Recorder)(r) != nil {
		t.Fatal("a nil Recorder converts to a non-nil internal recorder")
	}
}

// TestRecorderIsTheInternalRecorder: what the scheduler records through
// the conversion of a *Recorder is what Snapshot, Workers and Dropped
// report, and every Options field reaches the internal recorder.
func TestRecorderIsTheInternalRecorder(t *testing.T) {
	var now int64
	r := NewRecorder(2, Options{MaxBytes: 512, Overwrite: true, LazyPages: true, Clock: func() int64 { return now }})
	if r.Workers() != 2 {
		t.Fatalf("Workers = %d", r.Workers())
	}
	rec := (*tracebuf.Recorder)(r)
	if !rec.Claim() || rec.Claim() {
		t.Fatal("Claim: want the first to succeed and the second to fail")
	}
	name := rec.Intern("A")
	w := rec.Worker(1)
	for i := range 25 { // 10 events per worker buffer: two wraps
		now = int64(10 * (i + 1))
		w.PacketBegin(name, 1, uint64(i))
	}
	s := r.Snapshot()
	if !s.Overwrite || s.Workers() != 2 {
		t.Fatalf("snapshot: overwrite %v, %d workers", s.Overwrite, s.Workers())
	}
	b := s.Buffers[1]
	n := len(b.Events)
	if n != 10 || b.Dropped != 15 {
		t.Fatalf("kept %d events, dropped %d; want a ring of 10 with 15 overwritten", n, b.Dropped)
	}
	last := b.Events[n-1]
	if last.Kind() != KindPacketBegin || s.Name(last.Name()) != "A" || last.Flow() != 24 || last.Time != 250 {
		t.Fatalf("newest event %v; want the 25th packet begin at the fake clock's 250", last)
	}
	if d := r.Dropped(); d != 10 {
		t.Fatalf("Dropped = %d; the ring wrapped twice, want one lap of 10 counted", d)
	}
}

// TestNewRecorderPanics: misuse panics with a "trace: " message, as before
// the recorder moved.
func TestNewRecorderPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"workers":  func() { NewRecorder(0, Options{}) },
		"maxbytes": func() { NewRecorder(1, Options{MaxBytes: -1}) },
	} {
		func() {
			defer func() {
				if v, ok := recover().(string); !ok || !strings.HasPrefix(v, "trace: ") {
					t.Errorf("%s: panic %v, want a trace: prefix", name, v)
				}
			}()
			f()
		}()
	}
}
