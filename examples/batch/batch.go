package batch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/wsched/wsched/examples/stagetime"
	"github.com/wsched/wsched/scheduler"
)

// Stages are the job's stages, in order.
var Stages = []string{"List", "Parse", "Aggregate"}

// The stages' IDs: Stages[i] is StageID i+1.
const (
	stageList      scheduler.StageID = 1
	stageParse     scheduler.StageID = 2
	stageAggregate scheduler.StageID = 3
)

// BigFile is the size from which a file is queued in the Parse stage's
// priority lane: parse times are heavy-tailed (the largest files under
// GOROOT/src take tens of milliseconds, the median well under one), and
// starting the longest packets first keeps one of them from being the last
// to run while the other workers idle.
const BigFile = 64 << 10

// Result is what a run found and what it cost.
type Result struct {
	Packages []Package // sorted by Dir, then Name
	Totals   Totals
	Elapsed  time.Duration
	Stages   []stagetime.Stage  // per stage (wsched run only)
	Stats    stagetime.Counters // scheduler counters of this cycle
}

// DefaultRoot returns $(go env GOROOT)/src, falling back to the GOROOT this
// program was built with.
func DefaultRoot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	goroot := strings.TrimSpace(string(out))
	if err != nil || goroot == "" {
		goroot = runtime.GOROOT()
	}
	return filepath.Join(goroot, "src")
}

// Job runs the batch job on a wsched scheduler, one cycle per Run:
//
//   - List: one packet per directory reads it, spawns a packet per
//     subdirectory (scheduler.Spawn) and queues a Parse packet per Go file
//     (files of BigFile bytes or more one by one in the priority lane, the
//     rest with one AddAll). Parse is closed while List runs, so queuing
//     wakes nobody.
//   - Parse: each packet reads and parses one file and adds its counts to
//     its worker's own tally (no lock).
//   - Aggregate: one packet merges the workers' tallies.
//
// A packet that meets an I/O error returns it, which ends the cycle: Run
// returns the error (a *scheduler.CycleError naming the packet, wrapping
// the error).
type Job struct {
	sched *scheduler.Scheduler
	clock *stagetime.Clock
	root  string

	workers []workerState // workers[w] is touched only by worker w during a cycle
	result  Result        // written by the Aggregate packet
}

type workerState struct {
	tally Tally
	_     [64]byte
}

// NewJob starts a scheduler for the job over root. cfg.Stages is ignored.
// Close the job when done.
func NewJob(root string, cfg scheduler.Config) (*Job, error) {
	cfg.Stages = Stages
	s, err := scheduler.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	return &Job{
		sched:   s,
		clock:   stagetime.New(s.Workers(), append([]string{"Unconstrained"}, Stages...)),
		root:    root,
		workers: make([]workerState, s.Workers()),
	}, nil
}

// Close stops the scheduler.
func (j *Job) Close() error { return j.sched.Close() }

// Scheduler returns the job's scheduler.
func (j *Job) Scheduler() *scheduler.Scheduler { return j.sched }

// Run runs the job once.
func (j *Job) Run(ctx context.Context) (Result, error) {
	for i := range j.workers {
		j.workers[i] = workerState{}
	}
	j.result = Result{}
	before := j.sched.Stats()
	if err := j.sched.Add(&listDir{j: j, dir: j.root}, stageList); err != nil {
		return Result{}, fmt.Errorf("batch: %w", err)
	}
	if err := j.sched.Add(&aggregate{j: j}, stageAggregate); err != nil {
		return Result{}, fmt.Errorf("batch: %w", err)
	}
	j.clock.Start()
	t0 := time.Now()
	if err := j.sched.Run(ctx); err != nil {
		return Result{}, fmt.Errorf("batch: %w", err)
	}
	r := j.result
	r.Elapsed = time.Since(t0)
	r.Stages = j.clock.Stages()
	r.Stats = stagetime.Delta(j.sched.Stats(), before)
	return r, nil
}

// Run runs the job once on a new scheduler.
func Run(ctx context.Context, root string, cfg scheduler.Config) (Result, error) {
	j, err := NewJob(root, cfg)
	if err != nil {
		return Result{}, err
	}
	defer j.Close()
	return j.Run(ctx)
}

// listDir lists one directory.
type listDir struct {
	j   *Job
	dir string
}

// PacketName names the packet.
func (p *listDir) PacketName() string { return "ListDir" }

func (p *listDir) Run(w *scheduler.Worker) error {
	j := p.j
	t := j.clock.Now()
	defer j.clock.Done(w.ID(), int(stageList), t)
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return err
	}
	var small []scheduler.Packet
	for _, e := range ents {
		path := filepath.Join(p.dir, e.Name())
		switch {
		case e.IsDir():
			if !skipDir(e.Name()) {
				scheduler.Spawn(w, &listDir{j: j, dir: path}) // same stage: List
			}
		case e.Type().IsRegular() && isGoFile(e.Name()):
			pf := &parse{j: j, path: path}
			if info, err := e.Info(); err == nil && info.Size() >= BigFile {
				if err := j.sched.Add(pf, stageParse, scheduler.Priority); err != nil {
					return err
				}
			} else {
				small = append(small, pf)
			}
		}
	}
	if len(small) > 0 {
		return j.sched.AddAll(small, stageParse)
	}
	return nil
}

// parse parses one file.
type parse struct {
	j    *Job
	path string
}

// PacketName names the packet.
func (p *parse) PacketName() string { return "ParseFile" }

func (p *parse) Run(w *scheduler.Worker) error {
	j := p.j
	t := j.clock.Now()
	r, err := ParseFile(j.root, p.path)
	if err != nil {
		return err
	}
	j.workers[w.ID()].tally.Add(r)
	j.clock.Done(w.ID(), int(stageParse), t)
	return nil
}

// aggregate merges the workers' tallies into the result.
type aggregate struct{ j *Job }

// PacketName names the packet.
func (p *aggregate) PacketName() string { return "Aggregate" }

func (p *aggregate) Run(w *scheduler.Worker) error {
	j := p.j
	t := j.clock.Now()
	var all Tally
	for i := range j.workers {
		all.merge(&j.workers[i].tally) // Parse is drained: nobody writes these now
	}
	j.result.Packages, j.result.Totals = all.Packages()
	j.clock.Done(w.ID(), int(stageAggregate), t)
	return nil
}
