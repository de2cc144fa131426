package scheduler

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"
)

// payload is a packet's buffer, which the scheduler must not keep alive
// once the packet ran (Spawn's doc: no reference after its Run returns).
type payload struct {
	buf  [256]byte
	runs *atomic.Int64
}

// heavy is a pointer packet holding a payload.
type heavy struct{ p *payload }

func (h *heavy) Run(*Worker) error { h.p.runs.Add(1); return nil }

// tracker makes payloads and counts those still reachable.
type tracker struct {
	runs atomic.Int64
	refs []weak.Pointer[payload]
}

func (tr *tracker) packet() *heavy {
	p := &payload{runs: &tr.runs}
	tr.refs = append(tr.refs, weak.Make(p))
	return &heavy{p}
}

// alive collects garbage and counts the payloads still reachable.
func (tr *tracker) alive() int {
	for range 3 {
		runtime.GC()
	}
	n := 0
	for _, r := range tr.refs {
		if r.Value() != nil {
			n++
		}
	}
	return n
}

// fanout is a packet that spawns n heavy packets, through Spawn or
// SpawnOrRun, made by the tracker before the cycle (the tracker's slice is
// not appended to while workers run).
type fanout struct {
	ps      []*heavy
	orRun   bool
	asIface bool
}

func (f fanout) Run(w *Worker) error {
	for _, p := range f.ps {
		switch {
		case f.orRun:
			SpawnOrRun(w, p)
		case f.asIface:
			Spawn[Packet](w, p)
		default:
			Spawn(w, p)
		}
	}
	return nil
}

var errRetainBoom = errors.New("boom")

// TestNoReferenceAfterRun: once Run returned, no packet that ran (or was
// dropped by an aborted cycle) is reachable from the scheduler, whatever
// queued it: Spawn of pointers and of interfaces, SpawnOrRun, Add, a lent
// AddAll, an aborted cycle, under each local order, over two cycles on 2
// workers. Thieves and bucket takes copy packets out of slots that they
// do not clear while workers run; the cycle's end clears them.
func TestNoReferenceAfterRun(t *testing.T) {
	const n = 5000
	for _, local := range []LocalPolicy{LocalPrivate, LocalLIFO, LocalFIFO} {
		for _, how := range []string{"spawn", "spawn-iface", "spawnorrun", "add", "addall", "lend", "aborted"} {
			t.Run(local.String()+"/"+how, func(t *testing.T) {
				s := newSched(t, Config{Workers: 2, Local: local})
				tr := &tracker{}
				for cycle := range 2 {
					ps := make([]*heavy, n)
					for i := range ps {
						ps[i] = tr.packet()
					}
					var err error
					switch how {
					case "spawn", "spawn-iface", "spawnorrun":
						err = s.Add(fanout{ps: ps, orRun: how == "spawnorrun", asIface: how == "spawn-iface"})
					case "add":
						for _, p := range ps {
							if err = s.Add(p); err != nil {
								break
							}
						}
					case "addall", "lend", "aborted":
						pk := make([]Packet, len(ps))
						for i, p := range ps {
							pk[i] = p
						}
						if how == "aborted" {
							// The failing packet first in the bucket's
							// order: a few packets run, the rest is
							// dropped.
							require.NoError(t, s.Add(Func("boom", func(*Worker) error { return errRetainBoom })))
						}
						if how == "lend" {
							err = s.AddAll(pk, Lend)
						} else {
							err = s.AddAll(pk)
						}
					}
					require.NoError(t, err)
					ps = nil
					err = s.Run(context.Background())
					if how == "aborted" {
						require.ErrorIs(t, err, errRetainBoom)
					} else {
						require.NoError(t, err)
					}
					require.Zero(t, tr.alive(), "cycle %d: payloads reachable after Run returned (%d ran)", cycle, tr.runs.Load())
				}
				if how != "aborted" {
					require.Equal(t, int64(2*n), tr.runs.Load(), "packets run")
				}
			})
		}
	}
}
