package main

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// patterned is a stream of n bytes, the first 0x0A (a Perfetto record's
// tag) and then a pattern, read without allocating.
type patterned struct{ n, off int64 }

const period = 251

var block = func() []byte {
	b := make([]byte, 256*period)
	for i := range b {
		b[i] = byte((i + 0x0a) % period)
	}
	return b
}()

func (p *patterned) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.off)]
	for done := 0; done < len(b); {
		done += copy(b[done:], block[(p.off+int64(done))%period:])
	}
	p.off += int64(len(b))
	return len(b), nil
}

// TestReadStreamHoldsLittle: a stream, whose size is not known in advance,
// is read holding no more than its size plus a few MiB, and given up as
// soon as it passes the limit, holding no more than those few MiB.
func TestReadStreamHoldsLittle(t *testing.T) {
	const (
		limit = 32 << 20
		slack = 8 << 20
	)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where a long stream is spooled
	read := func(n int64) ([]byte, error, uint64) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		data, err := readStream(&patterned{n: n}, "pipe", limit)
		runtime.ReadMemStats(&after)
		return data, err, after.TotalAlloc - before.TotalAlloc
	}
	for _, n := range []int64{1000, limit} {
		data, err, alloc := read(n)
		require.NoError(t, err)
		require.Len(t, data, int(n))
		for off := 0; off < len(data); {
			want := block[off%period:]
			want = want[:min(len(want), len(data)-off)]
			require.True(t, bytes.Equal(want, data[off:off+len(want)]), "bytes from %d of a %d-byte stream", off, n)
			off += len(want)
		}
		assert.LessOrEqual(t, alloc, uint64(n+slack), "allocated reading a %d-byte stream", n)
	}
	_, err, alloc := read(3 * limit)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pipe: more than 32 MiB from a stream")
	assert.LessOrEqual(t, alloc, uint64(slack), "allocated reading a stream past the limit")
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "temporary files left behind")
}
