package scheduler

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

type chain struct{ n int; out *int }

func (c chain) Run(w *Worker) error {
	*c.out++
	if c.n > 0 {
		Spawn(w, chain{c.n - 1, c.out})
	}
	return nil
}

type fibArgs struct{ n int; out *int }
type fibSum struct{ a, b int; out *int }

func (s fibSum) Run(*Worker) error { *s.out = s.a + s.b; return nil }
func (f fibArgs) Run(w *Worker) error {
	if f.n < 2 { *f.out = f.n; return nil }
	s := Join(w, fibSum{out: f.out})
	Spawn(w, fibArgs{f.n - 1, &s.a})
	Spawn(w, fibArgs{f.n - 2, &s.b})
	return nil
}

func TestQuick(t *testing.T) {
	s, err := New(Config{Workers: 2})
	require.NoError(t, err)
	defer s.Close()
	n := 0
	require.NoError(t, s.Add(chain{1000, &n}))
	require.NoError(t, s.Run(context.Background()))
	require.Equal(t, 1001, n)
	for _, k := range []int{1, 10, 20, 25} {
		var out int
		require.NoError(t, s.Add(fibArgs{k, &out}))
		require.NoError(t, s.Run(context.Background()))
		want := func(n int) int { a, b := 0, 1; for range n { a, b = b, a+b }; return a }(k)
		require.Equal(t, want, out, k)
	}
	boom := errors.New("boom")
	require.NoError(t, s.Add(Func("failer", func(*Worker) error { return boom })))
	err = s.Run(context.Background())
	require.ErrorIs(t, err, boom)
	t.Log(err)
	st := s.Stats()
	for _, p := range st.Packets { t.Log(p.Name, p.Count) }
	allocs := testing.AllocsPerRun(20, func() {
		n := 0
		s.Add(chain{1000, &n})
		s.Run(context.Background())
	})
	t.Log("allocs per 1000-chain cycle", allocs)
}
