package hashstream

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wsched/wsched/scheduler"
)

// Stages are the job's stages, in order: Hash (a packet per file, queued
// by the walk) and Aggregate (one packet that merges the workers' sums).
var Stages = []string{"Hash", "Aggregate"}

const (
	stageHash      scheduler.StageID = 1
	stageAggregate scheduler.StageID = 2
)

// DefaultMaxQueued is Options.MaxQueued's default: enough queued files
// that no worker waits for the walk while the walk is faster, few enough
// that their memory is a constant (each queued file is one hashFile of 48
// bytes and its path).
const DefaultMaxQueued = 256

// Options configures a streaming run.
type Options struct {
	// Workers hashes with this many workers; 0 means GOMAXPROCS.
	Workers int
	// MaxQueued bounds the files walked but not yet taken by a worker
	// (scheduler.Config.MaxQueued): the walk waits for room (Block). Zero
	// means DefaultMaxQueued; negative means unbounded, the walk never
	// waits and every file it has found waits in the queue.
	MaxQueued int
	// Rounds hashes each file's content this many times (0 means once): a
	// slower hash, so that a measurement can make the walk outrun the
	// workers by a chosen factor.
	Rounds int
	// AfterWalk, if set, is called on the walking goroutine once the walk
	// has added every file, before it releases its hold: when a walk that
	// outran the workers has the most files in flight (measurements of
	// memory use it).
	AfterWalk func()
	// Config is the rest of the scheduler's configuration (its Workers,
	// Stages and MaxQueued are set from the fields above).
	Config scheduler.Config
}

// Dir is what the job computes for one directory: its regular files, their
// bytes, and a digest of their names and contents that does not depend on
// the order in which they were hashed: the XOR over the files of
// SHA-256(name, 0, SHA-256(content)).
type Dir struct {
	Dir    string // relative to the root, "." for the root
	Files  int
	Bytes  int64
	Digest [sha256.Size]byte
}

// Result is what a run found.
type Result struct {
	Dirs    []Dir // sorted by Dir; directories without regular files are left out
	Files   int
	Bytes   int64
	Elapsed time.Duration
	// PeakInFlight is the most files the walk had found and no worker had
	// started hashing, at any time: what MaxQueued bounds (wsched runs
	// only).
	PeakInFlight int
}

// Job streams a directory tree through a scheduler, one cycle per Run: the
// calling goroutine walks the tree and adds a Hash packet per file through
// a scheduler.Hold, which keeps the cycle open while it walks without
// taking a worker; the adds wait for room under MaxQueued (Block), so the
// walk never gets more than MaxQueued files ahead of the workers. Each Hash
// packet reads its file with its worker's buffer and adds the result to
// its worker's sums (a scheduler.Reducer: no lock); once the walk is
// released and every file hashed, one Aggregate packet merges the sums.
//
// A file that cannot be read ends the cycle: Run returns a
// *scheduler.CycleError whose Item is the file's path, and the walk stops
// at its next add.
type Job struct {
	s         *scheduler.Scheduler
	rounds    int
	afterWalk func()
	sums      *scheduler.Reducer[Sums]
	bufs      [][]byte // bufs[w]: worker w's read buffer
	result    Result   // written by the Aggregate packet

	// started counts Hash packets that began; the walk compares it with the
	// files it added for PeakInFlight.
	started atomic.Int64
	walked  int // files the last Run's walk added
}

// Sums are per-directory results: one worker's, or a whole run's once merged.
type Sums map[string]*Dir

// NewJob starts a scheduler for the job. Close the job when done.
func NewJob(opts Options) (*Job, error) {
	cfg := opts.Config
	cfg.Workers = opts.Workers
	cfg.Stages = Stages
	switch {
	case opts.MaxQueued == 0:
		cfg.MaxQueued = DefaultMaxQueued
	case opts.MaxQueued < 0:
		cfg.MaxQueued = 0
	default:
		cfg.MaxQueued = opts.MaxQueued
	}
	if opts.Rounds < 0 {
		return nil, fmt.Errorf("hashstream: Options.Rounds = %d: must be >= 1 (or 0 for 1)", opts.Rounds)
	}
	s, err := scheduler.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("hashstream: %w", err)
	}
	j := &Job{s: s, rounds: max(opts.Rounds, 1), afterWalk: opts.AfterWalk, bufs: make([][]byte, s.Workers())}
	j.sums = scheduler.NewReducer(s, func(acc, v Sums) Sums {
		if acc == nil {
			acc = Sums{}
		}
		acc.Merge(v)
		return acc
	})
	for i := range j.bufs {
		j.bufs[i] = make([]byte, 64<<10)
	}
	return j, nil
}

// Close stops the scheduler.
func (j *Job) Close() error { return j.s.Close() }

// Walked returns how many files the last Run's walk added to the cycle,
// including those a failed or cancelled cycle dropped (its
// CycleError.Dropped and the scheduler's Stats count them).
func (j *Job) Walked() int { return j.walked }

// Scheduler returns the job's scheduler.
func (j *Job) Scheduler() *scheduler.Scheduler { return j.s }

// Run hashes every regular file under root once. A context cancelled
// meanwhile ends the cycle and the walk; the error is the context's.
func (j *Job) Run(ctx context.Context, root string) (Result, error) {
	j.sums.Reset()
	j.result = Result{}
	j.started.Store(0)
	t0 := time.Now()
	hold, err := j.s.Hold(stageHash)
	if err != nil {
		return Result{}, fmt.Errorf("hashstream: %w", err)
	}
	if err := j.s.Add(&aggregate{j: j}, stageAggregate); err != nil {
		hold.Release()
		return Result{}, fmt.Errorf("hashstream: %w", err)
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ran := make(chan error, 1)
	go func() { ran <- j.s.Run(runCtx) }()

	var added int64
	peak := int64(0)
	defer func() { j.walked = int(added) }()
	walkErr := Walk(root, func(path, rel string) error {
		if err := hold.Add(&hashFile{j: j, path: path, rel: rel}, scheduler.Block(ctx)); err != nil {
			return err
		}
		added++
		peak = max(peak, added-j.started.Load())
		return nil
	})
	if walkErr == nil && j.afterWalk != nil {
		j.afterWalk()
	}
	// The walk failed on its own (not by the cycle's end): the files it
	// found need no hashing.
	walkFailed := walkErr != nil && hold.Err() == nil
	if walkFailed {
		cancel(walkErr)
	}
	hold.Release()
	runErr := <-ran
	switch {
	case walkFailed:
		return Result{}, fmt.Errorf("hashstream: %w", walkErr)
	case runErr != nil:
		// The cycle's error: the walk's, if any, is its echo (a hold's
		// adds return the cycle's error once it ended).
		return Result{}, fmt.Errorf("hashstream: %w", runErr)
	}
	r := j.result
	r.Elapsed = time.Since(t0)
	r.PeakInFlight = int(peak)
	return r, nil
}

// Stream runs the job once on a new scheduler.
func Stream(ctx context.Context, root string, opts Options) (Result, error) {
	j, err := NewJob(opts)
	if err != nil {
		return Result{}, err
	}
	defer j.Close()
	return j.Run(ctx, root)
}

// hashFile hashes one file. Its String is the file's path, which a
// CycleError names if it fails: asked only then, so it costs nothing on
// success.
type hashFile struct {
	j         *Job
	path, rel string
}

// PacketName names the packet type in traces and statistics.
func (p *hashFile) PacketName() string { return "HashFile" }

// String returns the file's path.
func (p *hashFile) String() string { return p.path }

func (p *hashFile) Run(w *scheduler.Worker) error {
	j := p.j
	j.started.Add(1)
	sum, n, err := HashFile(p.path, j.rounds, j.bufs[w.ID()])
	if err != nil {
		return err
	}
	local := j.sums.Local(w)
	if *local == nil {
		*local = Sums{}
	}
	local.AddFile(p.rel, sum, n)
	return nil
}

// aggregate merges the workers' sums into the result: the Hash stage is
// drained, so nobody writes them now.
type aggregate struct{ j *Job }

// PacketName names the packet type.
func (p *aggregate) PacketName() string { return "Aggregate" }

func (p *aggregate) Run(w *scheduler.Worker) error {
	p.j.result = p.j.sums.Result().Result()
	return nil
}

// Result sorts the directories into a Result (Elapsed and PeakInFlight
// left zero).
func (all Sums) Result() Result {
	var r Result
	for _, d := range all {
		r.Dirs = append(r.Dirs, *d)
		r.Files += d.Files
		r.Bytes += d.Bytes
	}
	slices.SortFunc(r.Dirs, func(a, b Dir) int { return strings.Compare(a.Dir, b.Dir) })
	return r
}

// addFile adds one file's digest and size to d.
func (d *Dir) addFile(name string, sum [sha256.Size]byte, n int64) {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(sum[:])
	var fd [sha256.Size]byte
	h.Sum(fd[:0])
	for i := range d.Digest {
		d.Digest[i] ^= fd[i]
	}
	d.Files++
	d.Bytes += n
}

// Merge adds o's directories to s.
func (s Sums) Merge(o Sums) {
	for dir, d := range o {
		a := s[dir]
		if a == nil {
			a = &Dir{Dir: dir}
			s[dir] = a
		}
		a.add(d)
	}
}

// add merges o into d.
func (d *Dir) add(o *Dir) {
	for i := range d.Digest {
		d.Digest[i] ^= o.Digest[i]
	}
	d.Files += o.Files
	d.Bytes += o.Bytes
}

// HashFile returns the SHA-256 of the file's content, hashed rounds times
// (each round hashes the content and the previous round's digest), and its
// size, reading through buf.
func HashFile(path string, rounds int, buf []byte) ([sha256.Size]byte, int64, error) {
	var sum [sha256.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return sum, 0, err
	}
	defer f.Close()
	var n int64
	for r := range max(rounds, 1) {
		if r > 0 {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return sum, 0, err
			}
		}
		h := sha256.New()
		h.Write(sum[:])
		n, err = io.CopyBuffer(h, onlyReader{f}, buf)
		if err != nil {
			return sum, 0, err
		}
		h.Sum(sum[:0])
	}
	return sum, n, nil
}

// onlyReader hides *os.File's WriterTo, so that io.CopyBuffer uses the
// caller's buffer instead of allocating its own.
type onlyReader struct{ io.Reader }

// Walk calls f for every regular file under root, in lexical order, with
// its path and its path relative to root, and stops at the first error f
// or the walk returns. Symbolic links are not followed.
func Walk(root string, f func(path, rel string) error) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		return f(path, rel)
	})
}

// errStop stops a walk whose consumers ended.
var errStop = errors.New("hashstream: stopped")
