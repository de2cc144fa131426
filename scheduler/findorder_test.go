package scheduler

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/policy"
)

// orderLog records the sources of the packets a single worker runs, in
// order (one worker: no synchronisation needed).
type orderLog struct{ got []policy.Source }

// sourced is a packet that records its source when it runs.
type sourced struct {
	log *orderLog
	src policy.Source
	run func(w *Worker) error
}

func (p sourced) Run(w *Worker) error {
	p.log.got = append(p.log.got, p.src)
	if p.run != nil {
		return p.run(w)
	}
	return nil
}

// TestFindOrder: the order in which a worker takes packets from its own
// queues and the buckets is policy.FindOrder, which `wsched simulate`
// walks; trace/simulate's TestFindOrder replays the same scenario. One
// worker: a bucket take of 10 (TakeFixed, BucketBatch 10: the first runs,
// nine are held), whose first packet queues a designated packet, a
// priority packet and 257 spawns (the 257th spills the 128 oldest into the
// deque), and a packet left in the normal lane. (The last source, steals,
// needs a second worker: find tries them after every bucket.)
func TestFindOrder(t *testing.T) {
	s, err := New(Config{Workers: 1, Stages: []string{"S"}, Take: TakeFixed, BucketBatch: 10})
	require.NoError(t, err)
	defer s.Close()
	log := &orderLog{}
	setup := sourced{log: log, src: policy.SourceNormalLane, run: func(w *Worker) error {
		if err := s.AddDesignated(0, sourced{log: log, src: policy.SourceDesignated}); err != nil {
			return err
		}
		if err := s.Add(sourced{log: log, src: policy.SourcePriorityLane}, Priority); err != nil {
			return err
		}
		for i := range privCap + 1 {
			src := policy.SourcePrivate
			if i < privCap/2 {
				src = policy.SourceDeque // spilled by the 257th
			}
			Spawn(w, sourced{log: log, src: src})
		}
		return nil
	}}
	ps := []Packet{setup}
	for range 9 {
		ps = append(ps, sourced{log: log, src: policy.SourceHeld})
	}
	ps = append(ps, sourced{log: log, src: policy.SourceNormalLane})
	require.NoError(t, s.AddAll(ps))
	require.NoError(t, s.Run(context.Background()))

	var runs []policy.Source
	for _, src := range log.got[1:] { // after the setup packet
		if len(runs) == 0 || runs[len(runs)-1] != src {
			runs = append(runs, src)
		}
	}
	want := policy.FindOrder[:len(policy.FindOrder)-1]
	require.Equal(t, names(want[:]), names(runs), "sources in the order they ran")
}

func names(ss []policy.Source) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(string(rune('0' + s)))
	}
	return b.String()
}
