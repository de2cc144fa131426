package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wsched/wsched/trace/analyze"
	"github.com/wsched/wsched/trace/perfetto"
)

const analyzeUsage = `usage: wsched analyze [-json] [-check] [-svg OUT [-svg-stage NAME] [-svg-cycle N]] FILE

Reads a Perfetto trace written by wsched (wsched demo, or perfetto.WriteFile
on a trace.Recorder snapshot) and prints first a verdict for each stage that
ran over 1.1 times its lower bound (the cause, the scheduler option that
fixes it and the ratio wsched simulate's replay predicts with it) and a line
summing each stage up over the cycles; then, per cycle and per stage: the
makespan; the lower bound max(longest packet, work / workers) and the ratio
to it; each worker's busy share; steals; wake-up latency p50/p99 (wake sent
to the woken worker's first packet), split into wakes of blocked workers and
of polling ones; time idle while work was queued
elsewhere, and how much of it each worker spent parked; the critical path
and the heaviest packet types.

A file costs what it holds, not what it claims. A window lists every worker
while workers x windows is at most the file's size in bytes; beyond that it
lists the workers whose packet or park slices begin or end in it, or whose
deque alone held the queued work, and sums up the others (how many ran a
packet or slept throughout, and the idle time each idle one had while work
was queued). Cycles that overlap (a cycle nested in another) or stage
slices that overlap are rejected: wsched writes neither. A regular file is
read whole; a pipe or device up to 1 GiB, its first 4 MiB in memory and
the rest through a temporary file, and given up as soon as it passes 1 GiB.

-svg OUT also draws one window as an SVG picture (no browser needed): a row
per worker with its packets coloured by type (legend below), parked time,
idle time while work was queued elsewhere (red), steals (a mark, and an
arrow from where the stolen packet was queued) and wake-ups. The window is
the stage that lost the most time against its lower bound (makespan minus
bound), or the stage named by -svg-stage (in cycle -svg-cycle, else in the
cycle where it lost the most), or with -svg-cycle alone the whole cycle. The picture is bounded:
at most 128 workers and 2,000 packet rectangles, narrow slices merged with
their neighbours (it says so), 300 steal arrows: under 2 MB. The
same file and flags give the same picture. It is written atomically
(a temporary file renamed); OUT "-" writes it to stdout instead of the
report.

Flags:
`

// analyzeCmd is `wsched analyze`.
func analyzeCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wsched analyze", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), analyzeUsage)
		fs.PrintDefaults()
	}
	asJSON := fs.Bool("json", false, "print the report as JSON")
	check := fs.Bool("check", false, "also check the file against Perfetto's trace rules; violations fail")
	svgOut := fs.String("svg", "", "also draw a window's timeline as SVG into `OUT` (\"-\": stdout, instead of the report)")
	svgStage := fs.String("svg-stage", "", "with -svg: draw the stage `NAME` (default: the stage that lost the most time against its bound)")
	svgCycle := fs.Uint64("svg-cycle", 0, "with -svg: draw cycle `N` (the whole cycle, or its -svg-stage)")
	// Flags may come before or after FILE (wsched analyze t.pftrace -json).
	files, code, ok := parseAround(fs, args)
	if !ok {
		return code
	}
	if len(files) != 1 {
		fmt.Fprintf(stderr, "wsched analyze: want one FILE, got %d arguments (see -h)\n", len(files))
		return 2
	}
	path := files[0]
	if *svgOut == "" && (*svgStage != "" || *svgCycle != 0) {
		fmt.Fprintln(stderr, "wsched analyze: -svg-stage and -svg-cycle need -svg OUT (see -h)")
		return 2
	}
	fail := func(err error) int {
		// One line: the first line of the error.
		msg, _, _ := strings.Cut(err.Error(), "\n")
		fmt.Fprintf(stderr, "wsched analyze: %s\n", msg)
		return 1
	}
	data, err := readTrace(path)
	if err != nil {
		return fail(err)
	}
	if *check {
		if _, err := perfetto.Check(data); err != nil {
			fmt.Fprintln(stdout, err)
			return fail(fmt.Errorf("%s: %w", path, err))
		}
	}
	if *svgOut != "" {
		opt := analyze.SVGOptions{Stage: *svgStage, Cycle: *svgCycle}
		info, err := writeSVG(*svgOut, data, opt, stdout)
		var oe *outputError
		switch {
		case errors.As(err, &oe):
			return fail(err) // names the output, not the trace
		case err != nil:
			return fail(fmt.Errorf("%s: %w", path, err))
		}
		what := "the whole trace"
		switch {
		case info.Stage != "":
			what = fmt.Sprintf("cycle %d, stage %s", info.Cycle, info.Stage)
		case info.Cycle != 0:
			what = fmt.Sprintf("cycle %d", info.Cycle)
		}
		where := *svgOut
		if where == "-" {
			where = "stdout"
		}
		fmt.Fprintf(stderr, "wsched analyze: %s (ratio %.2f) drawn to %s: %s, %s for %s, %s\n",
			what, info.Ratio, where, nouns(info.Workers, "worker"), nouns(info.Rects, "packet rectangle"), nouns(info.Slices, "slice"), nouns(info.Bytes, "byte"))
		if *svgOut == "-" {
			return 0
		}
	}
	r, err := analyze.Bytes(data)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", path, err))
	}
	if *asJSON {
		err = r.WriteJSON(stdout)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		return fail(err)
	}
	return 0
}

// writeSVG draws data's timeline into the file out, through a temporary
// file in its directory renamed over it, so that a reader never sees half
// a picture and a failure leaves out as it was; out "-" is stdout. An
// error of the output's (its directory missing, no permission, a full
// disk) is an *outputError naming out, never the temporary file; any
// other error is the trace's.
func writeSVG(out string, data []byte, opt analyze.SVGOptions, stdout io.Writer) (analyze.SVGInfo, error) {
	if out == "-" {
		return analyze.SVG(stdout, data, opt)
	}
	f, err := os.CreateTemp(filepath.Dir(out), ".wsched-svg-*")
	if err != nil {
		return analyze.SVGInfo{}, outputErr(out, err)
	}
	defer os.Remove(f.Name()) // after the rename, there is nothing left to remove
	w := &trackedWriter{w: f}
	info, err := analyze.SVG(w, data, opt)
	if err != nil {
		f.Close()
		if w.err != nil {
			return info, outputErr(out, w.err)
		}
		return info, err
	}
	err = f.Chmod(0o644)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), out)
	}
	if err != nil {
		return info, outputErr(out, err)
	}
	return info, nil
}

// outputError is a failure to write -svg's output file.
type outputError struct {
	out string
	err error
}

func (e *outputError) Error() string { return "-svg " + e.out + ": " + e.err.Error() }
func (e *outputError) Unwrap() error { return e.err }

// outputErr is err, a failure to write out, as an *outputError: a
// *fs.PathError's own path (the temporary file's) is left out.
func outputErr(out string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return &outputError{out, err}
}

// trackedWriter remembers the first error of the writer it wraps, so
// that an output failure is told from the trace's.
type trackedWriter struct {
	w   io.Writer
	err error
}

func (t *trackedWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil && t.err == nil {
		t.err = err
	}
	return n, err
}

// maxStreamBytes bounds what analyze reads from a pipe or device, whose
// size is not known in advance (wsched analyze /dev/zero must not exhaust
// memory). 1 GiB is some 30 million packet slices, far beyond what a
// recorder's default 32 MiB holds (about 25 MB of trace).
const maxStreamBytes = 1 << 30

// streamMemBytes is how much of a stream is read into memory before the
// rest is copied to a temporary file (see readStream).
const streamMemBytes = 4 << 20

// readTrace reads the file at path whole: a regular file as it is (memory
// is then bounded by its size), anything else up to maxStreamBytes.
func readTrace(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().IsRegular() {
		return os.ReadFile(path)
	}
	return readStream(f, path, maxStreamBytes)
}

// readStream reads r, named name, whole, up to limit bytes. Its size is not
// known in advance, and reading it into a growing buffer would hold up to
// twice its size (and twice the limit before giving up): so its first
// streamMemBytes are read into a buffer of that size, and a stream that
// goes on is copied to a temporary file (in os.TempDir, removed when done)
// up to limit + 1 bytes, then read back into a buffer of its size. Reading
// allocates at most the stream's size plus streamMemBytes (and io.Copy's
// 32 KiB), and a stream past the limit is given up as soon as the limit is
// passed, having allocated streamMemBytes.
func readStream(r io.Reader, name string, limit int64) ([]byte, error) {
	// A Perfetto trace starts with a packet record's tag, 0x0A: if the
	// stream does not, the first bytes are enough for the decoder's error.
	head := make([]byte, 1)
	if n, err := io.ReadFull(r, head); n == 0 {
		if err == io.EOF {
			return nil, nil
		}
		return nil, err
	}
	if head[0] != 0x0a {
		return head, nil
	}
	tooLong := fmt.Errorf("%s: more than %d MiB from a stream; save the trace to a file first", name, limit>>20)
	data := make([]byte, min(limit+1, streamMemBytes))
	data[0] = head[0]
	n, err := io.ReadFull(r, data[1:])
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return bytes.Clone(data[:1+n]), nil // the whole stream
	case err != nil:
		return nil, err
	case int64(len(data)) > limit:
		return nil, tooLong
	}
	f, err := os.CreateTemp("", "wsched-analyze-*")
	if err != nil {
		return nil, fmt.Errorf("%s: a stream over %d MiB is copied to a temporary file: %w", name, streamMemBytes>>20, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return nil, fmt.Errorf("%s: copying the stream: %w", name, err)
	}
	rest, err := io.Copy(f, io.LimitReader(r, limit+1-int64(len(data))))
	if err != nil {
		return nil, fmt.Errorf("%s: copying the stream: %w", name, err)
	}
	size := int64(len(data)) + rest
	data = nil
	if size > limit {
		return nil, tooLong
	}
	data = make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), data); err != nil {
		return nil, fmt.Errorf("%s: reading the stream back: %w", name, err)
	}
	return data, nil
}
