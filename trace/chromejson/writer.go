package chromejson

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/atomicfile"
	"github.com/wsched/wsched/trace/internal/timeline"
)

// Options configure Write.
type Options struct {
	// Pid is the process id written on every event; 0 means os.Getpid().
	// The control thread's tid is Pid, worker i's Pid+1+i, the stage
	// track's Pid+1+workers.
	Pid int
	// ProcessName names the process; "" means "wsched".
	ProcessName string
}

// Stats describe what Write wrote.
type Stats struct {
	Bytes  int64
	Events int // JSON events, metadata included
	// Slices counts packet slices; SliceBytes the bytes of their B and E
	// events.
	Slices     int
	SliceBytes int64
	Orphans    int
	Dropped    uint64
}

// BytesPerSlice is the average size of a packet slice (B + E events).
func (s Stats) BytesPerSlice() float64 {
	if s.Slices == 0 {
		return 0
	}
	return float64(s.SliceBytes) / float64(s.Slices)
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type writer struct {
	bw      *bufio.Writer
	s       *trace.Snapshot
	pid     int
	buf     []byte
	first   bool
	stats   Stats
	workers int
}

// Write streams s to out as Chrome JSON trace events ({"traceEvents":[...]})
// with the same slices, instants, counters and flows as the Perfetto
// export. Bytes go through a 64 KiB buffer; Write flushes it and returns the
// first write error.
func Write(out io.Writer, s *trace.Snapshot, opts Options) (Stats, error) {
	if s == nil {
		return Stats{}, errors.New("chromejson: nil snapshot")
	}
	pid := opts.Pid
	if pid == 0 {
		pid = os.Getpid()
	}
	if pid < 0 || pid > math.MaxInt32-2-s.Workers() {
		pid = 1
	}
	if opts.ProcessName == "" {
		opts.ProcessName = "wsched"
	}
	cw := &countingWriter{w: out}
	w := &writer{bw: bufio.NewWriterSize(cw, 64<<10), s: s, pid: pid, first: true, workers: s.Workers()}
	w.stats.Dropped = s.Dropped()
	w.bw.WriteString(`{"displayTimeUnit":"ns","traceEvents":[`)
	w.meta("process_name", pid, opts.ProcessName)
	w.meta("thread_name", pid, "control")
	for i := range w.workers {
		w.meta("thread_name", pid+1+i, "worker "+strconv.Itoa(i))
	}
	w.meta("thread_name", w.stageTid(), "stages")
	ws := timeline.Walk(s, w.op)
	w.stats.Orphans = ws.Orphans
	w.bw.WriteString("\n]}\n")
	if err := w.bw.Flush(); err != nil {
		return w.stats, fmt.Errorf("chromejson: %w", err)
	}
	w.stats.Bytes = cw.n
	return w.stats, nil
}

// WriteFile writes s to path atomically (temporary file in the same
// directory, synced, renamed, mode 0644). On error path is untouched and
// the temporary file removed.
func WriteFile(path string, s *trace.Snapshot, opts Options) (Stats, error) {
	return atomicfile.Produce(path, "chromejson", func(w io.Writer) (Stats, error) { return Write(w, s, opts) })
}

func (w *writer) stageTid() int { return w.pid + 1 + w.workers }

func (w *writer) tid(t timeline.Track) int {
	switch t.Kind {
	case timeline.TrackWorker:
		return w.pid + 1 + t.Index
	case timeline.TrackStages:
		return w.stageTid()
	}
	return w.pid
}

// start begins one event object.
func (w *writer) start() []byte {
	b := w.buf[:0]
	if w.first {
		w.first = false
		b = append(b, '\n')
	} else {
		b = append(b, ",\n"...)
	}
	return append(b, '{')
}

func (w *writer) finish(b []byte) int {
	b = append(b, '}')
	w.buf = b
	w.bw.Write(b)
	w.stats.Events++
	return len(b)
}

func (w *writer) meta(name string, tid int, value string) {
	b := w.start()
	b = append(b, `"ph":"M","name":`...)
	b = appendString(b, name)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(w.pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"args":{"name":`...)
	b = appendString(b, value)
	b = append(b, '}')
	w.finish(b)
}

// appendTS writes ns as microseconds, exactly: up to three decimals,
// trailing zeros dropped.
func appendTS(b []byte, ns int64) []byte {
	b = strconv.AppendInt(b, ns/1000, 10)
	frac := ns % 1000
	if frac == 0 {
		return b
	}
	b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	return b
}

func appendFlowID(b []byte, id uint64) []byte {
	b = append(b, `"0x`...)
	b = strconv.AppendUint(b, id, 16)
	return append(b, '"')
}

func (w *writer) op(op *timeline.Op) {
	b := w.start()
	b = append(b, `"ph":"`...)
	switch op.Kind {
	case timeline.Begin:
		b = append(b, 'B')
	case timeline.End:
		b = append(b, 'E')
	case timeline.Instant:
		if op.FlowOut != 0 || op.FlowIn != 0 {
			b = append(b, 'X') // a zero-length slice: flows bind to slices
		} else {
			b = append(b, 'i')
		}
	case timeline.Counter:
		b = append(b, 'C')
	}
	b = append(b, `","ts":`...)
	b = appendTS(b, op.Time)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(w.pid), 10)
	if op.Kind != timeline.Counter {
		b = append(b, `,"tid":`...)
		b = strconv.AppendInt(b, int64(w.tid(op.Track)), 10)
	}
	if op.Kind == timeline.End {
		n := w.finish(b)
		if op.Slice == timeline.SlicePacket {
			w.stats.SliceBytes += int64(n)
		}
		return
	}
	b = append(b, `,"name":`...)
	b = appendString(b, op.Name)
	if op.Kind == timeline.Instant {
		if op.FlowOut != 0 || op.FlowIn != 0 {
			b = append(b, `,"dur":0`...)
		} else if op.Track.Kind == timeline.TrackProcess {
			b = append(b, `,"s":"p"`...)
		} else {
			b = append(b, `,"s":"t"`...)
		}
	}
	if op.Category != "" {
		b = append(b, `,"cat":`...)
		b = appendString(b, op.Category)
	}
	if op.FlowOut != 0 {
		b = append(b, `,"bind_id":`...)
		b = appendFlowID(b, op.FlowOut)
		b = append(b, `,"flow_out":true`...)
	}
	if op.FlowIn != 0 {
		b = append(b, `,"bind_id":`...)
		b = appendFlowID(b, op.FlowIn)
		b = append(b, `,"flow_in":true`...)
	}
	if op.Kind == timeline.Counter {
		b = append(b, `,"args":{"value":`...)
		b = strconv.AppendInt(b, op.Value, 10)
		b = append(b, '}')
	} else if len(op.Args) > 0 || op.Dropped {
		b = append(b, `,"args":{`...)
		for i, a := range op.Args {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, a.Key)
			b = append(b, ':')
			switch a.Kind {
			case timeline.ArgInt:
				b = strconv.AppendInt(b, a.Int, 10)
			case timeline.ArgUint:
				b = strconv.AppendUint(b, a.Uint, 10)
			default:
				b = appendString(b, a.Str)
			}
		}
		if op.Dropped {
			if len(op.Args) > 0 {
				b = append(b, ',')
			}
			b = append(b, `"previous_events_dropped":true`...)
		}
		b = append(b, '}')
	}
	n := w.finish(b)
	if op.Slice == timeline.SlicePacket {
		w.stats.Slices++
		w.stats.SliceBytes += int64(n)
	}
}

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
