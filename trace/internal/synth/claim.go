package synth

import (
	"errors"
	"regexp"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/wsched/wsched/trace/perfetto/perfettopb"
)

var workersClaim = regexp.MustCompile(`workers=[0-9]+`)

// ClaimWorkers rewrites the process track's "workers=N" of a wsched
// Perfetto trace to workers and leaves every other byte's meaning as it
// was: a recording of a few workers that claims many, the hostile input
// of the analyze and simulate bounds tests.
func ClaimWorkers(data []byte, workers int) ([]byte, error) {
	var tr perfettopb.Trace
	if err := proto.Unmarshal(data, &tr); err != nil {
		return nil, err
	}
	done := false
	for _, p := range tr.Packet {
		td := p.GetTrackDescriptor()
		if td == nil || td.Process == nil {
			continue
		}
		d := workersClaim.ReplaceAllString(td.GetDescription(), "workers="+strconv.Itoa(workers))
		td.Description = &d
		done = true
	}
	if !done {
		return nil, errors.New("synth: no process track")
	}
	return proto.Marshal(&tr)
}
