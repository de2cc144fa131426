package perfetto

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace/internal/pfwire"
)

// FuzzDecode feeds arbitrary bytes to the decoder and the checker: they
// must return an error or succeed, never panic, hang or allocate beyond the
// input's size. Seeds: the golden trace, its truncations, and junk.
//
//	go test -run XXX -fuzz FuzzDecode -fuzztime 30s ./trace/perfetto/
func FuzzDecode(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "small.pftrace.golden"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	for _, n := range []int{1, 2, 7, len(golden) / 2, len(golden) - 1} {
		f.Add(golden[:n])
	}
	f.Add([]byte{})
	f.Add([]byte("{\"traceEvents\":[]}"))
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{0x0a, 0x02, 0x5a, 0x00})
	for _, p := range good() {
		f.Add(p)
	}
	for _, p := range goodDelta() {
		f.Add(p)
	}
	f.Add(cat(goodDelta()...))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		_ = pfwire.Decode(data, func(p *pfwire.Packet) error {
			n++
			if p.Offset < 0 || p.Offset >= len(data) { // checked first: the fuzzer calls this per packet
				require.Fail(t, fmt.Sprintf("packet offset %d outside input of %d bytes", p.Offset, len(data)))
			}
			return nil
		})
		require.LessOrEqual(t, n, len(data)/2, "packets from %d bytes", len(data))
		_, _ = Check(data)
	})
}
