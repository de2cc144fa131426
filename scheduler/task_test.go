package scheduler

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTaskPacking: a task keeps its stage, its stamp's low bits and its
// origin in one word, each field independent of the others, up to the
// limits that Config enforces; the value-packet bit survives a stamp.
func TestTaskPacking(t *testing.T) {
	require.Equal(t, uintptr(24), unsafe.Sizeof(task{}), "a task is a Packet and one word")
	p := Packet(counter{nil})
	for _, slot := range []bool{false, true} {
		for _, st := range []StageID{Unconstrained, 1, 7, maxStages} {
			for _, from := range []int32{fromNone, fromControl, fromWorker0, fromWorker0 + maxWorkers - 1} {
				for _, born := range []int64{0, 1, 1<<40 - 1, 1<<40 + 12345, -1} {
					tk := mkTask(p, st)
					if slot {
						tk.meta |= slotBit
					}
					require.Equal(t, st, tk.stage(), "mkTask(%d)", st)
					require.Equal(t, fromNone-fromWorker0, tk.origin(), "mkTask(%d) origin", st)
					tk.stamp(born, from)
					assert.Equal(t, st, tk.stage(), "stage after stamp(%d, %d)", born, from)
					assert.Equal(t, slot, tk.meta&slotBit != 0, "slot bit after stamp(%d, %d)", born, from)
					assert.Equal(t, int(from)-fromWorker0, tk.origin(), "origin (stage %d, born %d)", st, born)
					assert.Equal(t, born&(1<<(64-bornShift)-1), tk.born(), "born: the low bits")
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
	_, err := New(Config{Workers: 1, Stages: stages})
	require.ErrorIs(t, err, ErrInvalid, "%d stages", len(stages))
	assert.Contains(t, err.Error(), "at most")
	_, err = New(Config{Workers: maxWorkers + 1})
	require.ErrorIs(t, err, ErrInvalid, "%d workers", maxWorkers+1)
	assert.Contains(t, err.Error(), "at most")
	// At the limits themselves: valid (not started: maxWorkers goroutines).
	cfg, err := Config{Workers: maxWorkers, Stages: stages[:maxStages]}.validate()
	require.NoError(t, err)
	assert.Equal(t, maxWorkers, cfg.Workers)
}
