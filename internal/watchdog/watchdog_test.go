package watchdog

import (
	"errors"
	"strings"
	"testing"
	"time"
)

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
	if len(ft.fatals) != 1 || !strings.Contains(ft.fatals[0], "no progress") {
		t.Fatalf("Watch on a stuck function reported %q", ft.fatals)
	}
	if len(ft.logs) != 1 || !strings.Contains(ft.logs[0], "goroutines") {
		t.Fatalf("Watch logged %q, want the goroutine stacks", ft.logs)
	}
}

func TestWithin(t *testing.T) {
	if v := Within(t, 10*time.Second, func() (int, error) { return 7, nil }); v != 7 {
		t.Fatalf("Within = %d, want 7", v)
	}
	ft := &fakeT{}
	Within(ft, 10*time.Second, func() (int, error) { return 0, errors.New("boom") })
	if len(ft.fatals) != 1 {
		t.Fatalf("Within of a failing function reported %q", ft.fatals)
	}
	if !strings.Contains(string(Stacks()), "TestWithin") {
		t.Fatal("Stacks does not show this test's goroutine")
	}
}

func (f *fakeT) Name() string                   { return "fake" }
func (f *fakeT) Errorf(format string, a ...any) { f.fatals = append(f.fatals, format) }

func TestStart(t *testing.T) {
	ft := &fakeT{}
	Start(ft, time.Second)() // stopped in time: silent
	if len(ft.fatals) != 0 {
		t.Fatalf("a stopped watchdog reported %q", ft.fatals)
	}
	st := &signalT{errored: make(chan struct{})}
	stop := Start(st, 10*time.Millisecond)
	select { // wait for it to fire: a fixed sleep could stop it first on a loaded box
	case <-st.errored:
	case <-time.After(10 * time.Second):
		t.Fatal("a 10ms watchdog did not fire within 10s")
	}
	stop()
	if len(st.fatals) != 1 || !strings.Contains(st.fatals[0], "timed out") {
		t.Fatalf("an expired watchdog reported %q", st.fatals)
	}
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
