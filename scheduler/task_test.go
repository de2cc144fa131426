package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// TestTaskPacking: a task keeps its stage, its stamp's low bits and its
// origin in one word, each field independent of the others, up to the
// limits that Config enforces.
func TestTaskPacking(t *testing.T) {
	if size := unsafe.Sizeof(task{}); size != 24 {
		t.Fatalf("a task is %d bytes, want 24 (a Packet and one word)", size)
	}
	p := Packet(counter{nil})
	for _, st := range []StageID{Unconstrained, 1, 7, maxStages} {
		for _, from := range []int32{fromNone, fromControl, fromWorker0, fromWorker0 + maxWorkers - 1} {
			for _, born := range []int64{0, 1, 1<<40 - 1, 1<<40 + 12345, -1} {
				tk := mkTask(p, st)
				if tk.stage() != st || tk.origin() != fromNone-fromWorker0 {
					t.Fatalf("mkTask(%d): stage %d origin %d", st, tk.stage(), tk.origin())
				}
				tk.stamp(born, from)
				if tk.stage() != st {
					t.Errorf("stage %d became %d after stamp(%d, %d)", st, tk.stage(), born, from)
				}
				if got, want := tk.origin(), int(from)-fromWorker0; got != want {
					t.Errorf("origin %d, want %d (stage %d, born %d)", got, want, st, born)
				}
				if got, want := tk.born(), born&(1<<(64-bornShift)-1); got != want {
					t.Errorf("born %#x, want the low bits %#x", got, want)
				}
			}
		}
	}
}

// TestConfigLimits: the packing limits are configuration errors.
func TestConfigLimits(t *testing.T) {
	stages := make([]string, maxStages+1)
	for i := range stages {
		stages[i] = fmt.Sprintf("s%d", i)
	}
	if _, err := New(Config{Workers: 1, Stages: stages}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("New with %d stages: %v, want an 'at most' error", len(stages), err)
	}
	if _, err := New(Config{Workers: maxWorkers + 1, Stages: []string{"a"}}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("New with %d workers: %v, want an 'at most' error", maxWorkers+1, err)
	}
}
