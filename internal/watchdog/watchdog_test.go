package watchdog

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain fails the package's run if a watchdog's goroutine outlives its
// test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeT records what Watch reports without ending the real test.
type fakeT struct {
	testing.TB
	logs, fatals []string
}

func (f *fakeT) Helper()                      {}
func (f *fakeT) Logf(format string, a ...any) { f.logs = append(f.logs, format) }
func (f *fakeT) Fatalf(format string, a ...any) {
	f.fatals = append(f.fatals, format)
}
func (f *fakeT) Fatal(a ...any) { f.fatals = append(f.fatals, "fatal") }

func TestWatchFiresWithStacks(t *testing.T) {
	ft := &fakeT{}
	release := make(chan struct{})
	defer close(release)
	Watch(ft, 20*time.Millisecond, func() { <-release })
	require.Len(t, ft.fatals, 1, "Watch on a stuck function reported %q", ft.fatals)
	assert.Contains(t, ft.fatals[0], "no progress", "Watch on a stuck function")
	require.Len(t, ft.logs, 1, "Watch logged %q, want the goroutine stacks", ft.logs)
	assert.Contains(t, ft.logs[0], "goroutines", "Watch's log, want the goroutine stacks")
}

func TestWithin(t *testing.T) {
	v := Within(t, 10*time.Second, func() (int, error) { return 7, nil })
	require.Equal(t, 7, v, "Within's value")
	ft := &fakeT{}
	Within(ft, 10*time.Second, func() (int, error) { return 0, errors.New("boom") })
	require.Len(t, ft.fatals, 1, "Within of a failing function reported %q", ft.fatals)
	assert.True(t, strings.Contains(string(Stacks()), "TestWithin"), "Stacks does not show this test's goroutine")
}

func (f *fakeT) Name() string                   { return "fake" }
func (f *fakeT) Errorf(format string, a ...any) { f.fatals = append(f.fatals, format) }

func TestStart(t *testing.T) {
	ft := &fakeT{}
	Start(ft, time.Second)() // stopped in time: silent
	require.Empty(t, ft.fatals, "a stopped watchdog reported")
	st := &signalT{errored: make(chan struct{})}
	stop := Start(st, 10*time.Millisecond)
	select { // wait for it to fire: a fixed sleep could stop it first on a loaded box
	case <-st.errored:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "a 10ms watchdog did not fire within 10s")
	}
	stop()
	require.Len(t, st.fatals, 1, "an expired watchdog reported %q", st.fatals)
	assert.Contains(t, st.fatals[0], "timed out", "an expired watchdog's report")
}

// signalT is fakeT whose Errorf also closes errored.
type signalT struct {
	fakeT
	errored chan struct{}
}

func (s *signalT) Errorf(format string, a ...any) {
	s.fakeT.Errorf(format, a...)
	close(s.errored)
}
