package perfetto

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/internal/synth"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// dump renders a trace one packet per line, resolving interned names, in a
// stable format for golden files and debugging: ts is the resolved time,
// (+N) the delta written, @clockN an explicit timestamp_clock_id, and
// track=(N) a track taken from the sequence's defaults.
func dump(data []byte) (string, error) {
	var b strings.Builder
	names := map[[2]uint64]string{} // (seq, iid) → name
	cats := map[[2]uint64]string{}
	annots := map[[2]uint64]string{}
	err := pfwire.Decode(data, func(p *pfwire.Packet) error {
		seq := uint64(p.Seq)
		for _, e := range p.Interned.Names {
			names[[2]uint64{seq, e.IID}] = e.Name
		}
		for _, e := range p.Interned.Categories {
			cats[[2]uint64{seq, e.IID}] = e.Name
		}
		for _, e := range p.Interned.AnnotationNames {
			annots[[2]uint64{seq, e.IID}] = e.Name
		}
		fmt.Fprintf(&b, "%d", p.Index)
		if p.HasTimestamp {
			fmt.Fprintf(&b, " ts=%d", p.Timestamp)
		}
		if p.Delta {
			fmt.Fprintf(&b, "(+%d)", p.RawTimestamp)
		}
		if p.HasClockID {
			fmt.Fprintf(&b, "@clock%d", p.ClockID)
		}
		fmt.Fprintf(&b, " seq=%d", p.Seq)
		if p.Flags != 0 {
			fmt.Fprintf(&b, " flags=%d", p.Flags)
		}
		if p.PrevDropped {
			b.WriteString(" DROPPED")
		}
		if p.ClockSnapshot {
			b.WriteString(" CLOCKS")
			for _, c := range p.Clocks {
				fmt.Fprintf(&b, " %d=%d", c.ID, c.Timestamp)
				if c.Incremental {
					b.WriteString("(incremental)")
				}
				if c.Unit != 0 {
					fmt.Fprintf(&b, "(unit=%d)", c.Unit)
				}
			}
		}
		if p.HasDefaults {
			b.WriteString(" DEFAULTS")
			if d := p.Defaults; d.HasClockID {
				fmt.Fprintf(&b, " clock=%d", d.ClockID)
			}
			if d := p.Defaults; d.HasTrackUUID {
				fmt.Fprintf(&b, " track=%d", d.TrackUUID)
			}
			for _, u := range p.Defaults.ExtraCounterTrackUUIDs {
				fmt.Fprintf(&b, " extra=%d", u)
			}
		}
		if p.Interned.Present {
			fmt.Fprintf(&b, " intern(n=%d c=%d a=%d)", len(p.Interned.Names), len(p.Interned.Categories), len(p.Interned.AnnotationNames))
		}
		if p.HasTrack {
			d := &p.Track
			fmt.Fprintf(&b, " TRACK uuid=%d", d.UUID)
			if d.Name != "" {
				fmt.Fprintf(&b, " name=%q", d.Name)
			}
			if d.ParentUUID != 0 {
				fmt.Fprintf(&b, " parent=%d", d.ParentUUID)
			}
			if d.HasProcess {
				fmt.Fprintf(&b, " process(pid=%d %q)", d.ProcessPid, d.ProcessName)
			}
			if d.HasThread {
				fmt.Fprintf(&b, " thread(pid=%d tid=%d %q)", d.ThreadPid, d.Tid, d.ThreadName)
			}
			if d.Counter {
				b.WriteString(" counter")
			}
			fmt.Fprintf(&b, " desc=%q", d.Description)
		}
		if p.HasEvent {
			e := &p.Event
			typ := [...]string{"?", "BEGIN", "END", "INSTANT", "COUNTER"}[min(int(e.Type), 4)]
			if e.DefaultTrack {
				fmt.Fprintf(&b, " %s track=(%d)", typ, e.TrackUUID)
			} else {
				fmt.Fprintf(&b, " %s track=%d", typ, e.TrackUUID)
			}
			if e.NameIID != 0 {
				fmt.Fprintf(&b, " %q", names[[2]uint64{seq, e.NameIID}])
			}
			for _, c := range e.CategoryIIDs {
				fmt.Fprintf(&b, " cat=%q", cats[[2]uint64{seq, c}])
			}
			for _, a := range e.Annotations {
				fmt.Fprintf(&b, " %s=", annots[[2]uint64{seq, a.NameIID}])
				switch a.Kind {
				case pfwire.AnnotInt:
					fmt.Fprint(&b, a.Int)
				case pfwire.AnnotUint:
					fmt.Fprint(&b, a.Uint)
				case pfwire.AnnotString:
					fmt.Fprintf(&b, "%q", a.String)
				}
			}
			if e.HasCounterValue {
				fmt.Fprintf(&b, " value=%d", e.CounterValue)
			}
			for i, v := range e.ExtraCounterValues {
				if i < len(e.ExtraCounterTrackUUIDs) {
					fmt.Fprintf(&b, " extra(%d)=%d", e.ExtraCounterTrackUUIDs[i], v)
				} else {
					fmt.Fprintf(&b, " extra(?)=%d", v)
				}
			}
			for _, f := range e.FlowIDs {
				fmt.Fprintf(&b, " flow_out=%d", f)
			}
			for _, f := range e.TerminatingFlowIDs {
				fmt.Fprintf(&b, " flow_in=%d", f)
			}
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String(), err
}

// TestGolden writes a small deterministic trace, without and with
// Origins, and compares its bytes and its dump with
// testdata/small{,-origins}.pftrace.golden and .txt. Run with -update after
// an intended format change, and review the .txt diff.
func TestGolden(t *testing.T) {
	for _, origins := range []bool{false, true} {
		name := "small"
		if origins {
			name = "small-origins"
		}
		t.Run(name, func(t *testing.T) { golden(t, name, Options{Origins: origins}) })
	}
}

func golden(t *testing.T, name string, opts Options) {
	data, _, _ := writeCheckedWith(t, synth.Small(), opts)
	text, err := dump(data)
	require.NoError(t, err)
	binPath, txtPath := filepath.Join("testdata", name+".pftrace.golden"), filepath.Join("testdata", name+".txt")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(binPath, data, 0o644))
		require.NoError(t, os.WriteFile(txtPath, []byte(text), 0o644))
	}
	wantText, err := os.ReadFile(txtPath)
	require.NoError(t, err, "run go test -run Golden -update to create it")
	assert.Equal(t, string(wantText), text, "dump differs from %s (run with -update and review)", txtPath)
	wantBin, err := os.ReadFile(binPath)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, wantBin), "bytes differ from %s", binPath)
}
