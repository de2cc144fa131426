package trace

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsched/wsched/internal/tracebuf"
)

// TestMain fails the package's run if a test or example leaves a
// goroutine behind (the example runs a scheduler, whose workers must end
// with its Close).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestNilRecorder: a nil *Recorder is tracing off; its methods are zero.
func TestNilRecorder(t *testing.T) {
	var r *Recorder
	assert.Nil(t, r.Snapshot(), "nil recorder's Snapshot")
	assert.Zero(t, r.Workers(), "nil recorder's Workers")
	assert.Zero(t, r.Dropped(), "nil recorder's Dropped")
	assert.Nil(t, (*tracebuf.Recorder)(r), "a nil Recorder converts to a non-nil internal recorder")
}

// TestRecorderIsTheInternalRecorder: what the scheduler records through
// the conversion of a *Recorder is what Snapshot, Workers and Dropped
// report, and every Options field reaches the internal recorder.
func TestRecorderIsTheInternalRecorder(t *testing.T) {
	var now int64
	r := NewRecorder(2, Options{MaxBytes: 512, Overwrite: true, LazyPages: true, Clock: func() int64 { return now }})
	require.Equal(t, 2, r.Workers())
	rec := (*tracebuf.Recorder)(r)
	require.True(t, rec.Claim(), "the first Claim succeeds")
	require.False(t, rec.Claim(), "the second Claim fails")
	name := rec.Intern("A")
	w := rec.Worker(1)
	for i := range 25 { // 10 events per worker buffer: two wraps
		now = int64(10 * (i + 1))
		w.PacketBegin(name, 1, uint64(i))
	}
	s := r.Snapshot()
	require.True(t, s.Overwrite, "snapshot's Overwrite")
	require.Equal(t, 2, s.Workers(), "snapshot's workers")
	b := s.Buffers[1]
	n := len(b.Events)
	require.Equal(t, 10, n, "events kept: want a ring of 10")
	require.Equal(t, uint64(15), b.Dropped, "events overwritten")
	last := b.Events[n-1]
	// The newest event is the 25th packet begin, at the fake clock's 250.
	require.Equal(t, KindPacketBegin, last.Kind(), "newest event %v", last)
	require.Equal(t, "A", s.Name(last.Name()), "newest event %v", last)
	require.Equal(t, uint64(24), last.Flow(), "newest event %v", last)
	require.Equal(t, int64(250), last.Time, "newest event %v", last)
	require.Equal(t, uint64(10), r.Dropped(), "the ring wrapped twice: want one lap of 10 counted")
}

// TestNewRecorderPanics: misuse panics with a "trace: " message.
func TestNewRecorderPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"workers":  func() { NewRecorder(0, Options{}) },
		"maxbytes": func() { NewRecorder(1, Options{MaxBytes: -1}) },
	} {
		func() {
			defer func() {
				v, ok := recover().(string)
				assert.True(t, ok, "%s: panic value %v, want a string", name, v)
				assert.True(t, strings.HasPrefix(v, "trace: "), "%s: panic %q, want a trace: prefix", name, v)
			}()
			f()
		}()
	}
}
