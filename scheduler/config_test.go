package scheduler

import (
	"bytes"
	"encoding"
	"flag"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/trace"
)

func TestConfigValidation(t *testing.T) {
	st := []string{"a", "b"}
	cases := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" = valid
	}{
		{"zero", Config{}, ""},
		{"minimal", Config{Stages: st}, ""},
		{"all set", Config{Workers: 3, Stages: st, Wake: WakeN, Steal: StealHalf, StealLimit: 4, Take: TakeFixed,
			BucketBatch: 8, Local: LocalFIFO, Spins: 2, ParkSpin: time.Millisecond, MaxQueued: 100}, ""},
		{"negative workers", Config{Workers: -1, Stages: st}, "Workers = -1"},
		{"too many workers", Config{Workers: 1 << 20, Stages: st}, "Workers = 1048576: at most"},
		{"empty stage", Config{Stages: []string{"a", ""}}, "Stages[1] is empty"},
		{"duplicate stage", Config{Stages: []string{"a", "b", "a"}}, `Stages[2] = "a" duplicates Stages[0]`},
		{"reserved stage", Config{Stages: []string{"Unconstrained"}}, "reserved"},

		// Each policy field: its own kinds, the zero default, and a value
		// that is not of its family (a policy of another family cannot be
		// written there; a conversion from a number can make one).
		{"wake one", Config{Wake: WakeOne}, ""},
		{"wake searcher", Config{Wake: WakeSearcher}, ""},
		{"unknown wake", Config{Wake: 99}, "Wake = wake-policy(99): unknown wake policy (want wake-one, wake-all, wake-n, wake-searcher)"},
		{"steal's value as wake", Config{Wake: WakePolicy(StealHalf)}, "Wake = wake-policy(6): unknown wake policy"},
		{"steal one", Config{Steal: StealOne}, ""},
		{"unknown steal", Config{Steal: 42}, "Steal = steal-policy(42): unknown steal policy (want steal-one, steal-half)"},
		{"wake's value as steal", Config{Steal: StealPolicy(WakeAll)}, "Steal = steal-policy(2): unknown steal policy"},
		{"take fixed", Config{Take: TakeFixed, BucketBatch: 500}, ""},
		{"take fair", Config{Take: TakeFair}, ""},
		{"unknown take", Config{Take: 77}, "Take = take-policy(77): unknown take policy"},
		{"local's value as take", Config{Take: TakePolicy(LocalPrivate)}, "Take = take-policy(10): unknown take policy"},
		{"local lifo", Config{Local: LocalLIFO}, ""},
		{"local private", Config{Local: LocalPrivate}, ""},
		{"unknown local", Config{Local: 13}, "Local = local-policy(13): unknown local policy"},
		{"take's value as local", Config{Local: LocalPolicy(TakeFixed)}, "Local = local-policy(8): unknown local policy"},

		{"steal limit 1", Config{StealLimit: 1}, ""},
		{"steal limit max", Config{Steal: StealHalf, StealLimit: policy.MaxTake}, ""},
		{"steal limit negative", Config{StealLimit: -1}, "StealLimit = -1: must be 1..128"},
		{"steal limit over max", Config{StealLimit: policy.MaxTake + 1}, "StealLimit = 129: must be 1..128"},
		{"steal limit on steal-one", Config{Steal: StealOne, StealLimit: 3}, "StealLimit = 3 with Steal = steal-one"},
		{"negative bucket batch", Config{BucketBatch: -2}, "BucketBatch = -2"},
		{"negative spins", Config{Spins: -1}, ""},
		{"spins at the bound", Config{Spins: 1 << 16}, ""},
		{"spins past the bound", Config{Spins: 1<<16 + 1}, "Spins = 65537: at most 65536"},
		{"spins that overflow the round bound", Config{Spins: 1<<61 - 2}, "at most 65536"},
		{"spins MaxInt", Config{Spins: math.MaxInt}, "at most 65536"},
		{"park spin off", Config{ParkSpin: -1}, ""},
		{"park spin 1s", Config{ParkSpin: time.Second}, ""},
		{"park spin too long", Config{ParkSpin: time.Minute}, "ParkSpin = 1m0s: at most 1s"},
		{"max queued", Config{MaxQueued: 1}, ""},
		{"negative max queued", Config{MaxQueued: -1}, "MaxQueued = -1"},
		{"tracer size", Config{Workers: 2, Tracer: trace.NewRecorder(3, trace.Options{MaxBytes: 1 << 16})}, "Tracer has 3 worker buffers, Workers = 2"},
		{"tracer for GOMAXPROCS", Config{Tracer: trace.NewRecorder(runtime.GOMAXPROCS(0), trace.Options{MaxBytes: 1 << 16})}, ""},
		{"tracer size with Workers 0", Config{Tracer: trace.NewRecorder(runtime.GOMAXPROCS(0)+1, trace.Options{MaxBytes: 1 << 16})},
			fmt.Sprintf("Workers = %d (Workers 0: GOMAXPROCS): make it with trace.NewRecorder(%d, …)", runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.cfg)
			if c.want == "" {
				require.NoError(t, err)
				require.NoError(t, s.Close())
				return
			}
			require.Nil(t, s)
			require.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), "Config.")
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := Config{}.validate()
	require.NoError(t, err)
	want := Config{
		Workers:     runtime.GOMAXPROCS(0),
		Stages:      []string{"main"},
		Wake:        WakeN,
		Steal:       StealHalf,
		StealLimit:  policy.MaxTake,
		Take:        TakeGuided,
		BucketBatch: 32,
		Local:       LocalPrivate,
		Spins:       64,
		ParkSpin:    200 * time.Microsecond,
	}
	assert.Equal(t, want, cfg, "the defaults the sweeps chose (benchmarks/results/DEFAULTS.md)")
	assert.Equal(t, policy.DefaultWake, policy.Kind(WakeN))
	assert.Equal(t, policy.DefaultSteal, policy.Kind(StealHalf))
	assert.Equal(t, policy.DefaultTake, policy.Kind(TakeGuided))
	assert.Equal(t, policy.DefaultLocal, policy.Kind(LocalPrivate))

	// Any negative ParkSpin means no poll; any negative Spins, no rounds.
	cfg, err = Config{ParkSpin: -5 * time.Second, Spins: -3}.validate()
	require.NoError(t, err)
	assert.Equal(t, time.Duration(-1), cfg.ParkSpin)
	assert.Equal(t, 0, cfg.Spins)

	// The scheduler keeps its own copy of Stages.
	stages := []string{"a", "b"}
	s := newSched(t, Config{Workers: 1, Stages: stages})
	stages[0] = "changed"
	names := []string{}
	for _, sg := range s.Stats().Stages {
		names = append(names, sg.Name)
	}
	assert.Equal(t, []string{"Unconstrained", "a", "b"}, names)
}

// TestPolicyFlag: each policy family is a command-line flag through
// flag.TextVar, with its default shown by name, and a flag refuses the
// names of other families as it parses.
func TestPolicyFlag(t *testing.T) {
	var cfg Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	fs.TextVar(&cfg.Wake, "wake", WakeN, "wake policy")
	fs.TextVar(&cfg.Take, "take", TakePolicy(0), "take policy")
	fs.TextVar(&cfg.Local, "local", LocalPrivate, "local policy")
	require.Equal(t, WakeN, cfg.Wake, "the flag's default")
	require.NoError(t, fs.Parse([]string{"-wake=wake-all", "-take", "take-fixed"}))
	assert.Equal(t, WakeAll, cfg.Wake)
	assert.Equal(t, TakeFixed, cfg.Take)
	assert.Equal(t, LocalPrivate, cfg.Local)
	s := newSched(t, cfg)
	assert.Equal(t, WakeAll, s.s.cfg.Wake)

	fs.PrintDefaults()
	assert.Contains(t, out.String(), "(default wake-n)")
	out.Reset()
	require.Error(t, fs.Parse([]string{"-wake=sometimes"}))
	assert.Contains(t, out.String(), `"sometimes" is not a wake policy (want one of: wake-one, wake-all, wake-n, wake-searcher, or default)`)

	// A policy of another family is refused by the flag, not by New.
	for _, c := range []struct{ args, want string }{
		{"-wake=take-guided", `"take-guided" is not a wake policy`},
		{"-wake=steal-half", `"steal-half" is not a wake policy`},
		{"-take=wake-n", `"wake-n" is not a take policy (want one of: take-fair, take-fixed, take-guided, or default)`},
		{"-local=steal-one", `"steal-one" is not a local policy`},
	} {
		out.Reset()
		require.Error(t, fs.Parse([]string{c.args}), c.args)
		assert.Contains(t, out.String(), c.want, c.args)
	}
	assert.Equal(t, WakeAll, cfg.Wake, "a refused flag leaves its field as it was")
	assert.Equal(t, TakeFixed, cfg.Take)
}

// TestPolicyFamiliesAreTypes: each Config policy field has its own type,
// each constant has its field's type, and only the wake family is an Add
// option, so that a policy in another family's place is a compile error.
func TestPolicyFamiliesAreTypes(t *testing.T) {
	cfg := reflect.TypeFor[Config]()
	field := func(name string) reflect.Type {
		f, ok := cfg.FieldByName(name)
		require.True(t, ok, name)
		return f.Type
	}
	families := map[string][]any{
		"Wake":  {WakeOne, WakeAll, WakeN, WakeSearcher},
		"Steal": {StealOne, StealHalf},
		"Take":  {TakeFair, TakeFixed, TakeGuided},
		"Local": {LocalPrivate, LocalLIFO, LocalFIFO},
	}
	seen := map[reflect.Type]string{}
	for name, consts := range families {
		ft := field(name)
		if other, dup := seen[ft]; dup {
			t.Errorf("Config.%s and Config.%s share the type %v", name, other, ft)
		}
		seen[ft] = name
		for _, c := range consts {
			assert.Equal(t, ft, reflect.TypeOf(c), "%v", c)
			_, isOption := c.(Option)
			assert.Equal(t, name == "Wake", isOption, "%v as an Add option", c)
			m, ok := c.(encoding.TextMarshaler)
			require.True(t, ok, "%v marshals as text", c)
			text, err := m.MarshalText()
			require.NoError(t, err)
			back := reflect.New(ft)
			require.NoError(t, back.Interface().(encoding.TextUnmarshaler).UnmarshalText(text))
			assert.Equal(t, c, back.Elem().Interface(), "%s round-trips", text)
		}
	}
	_, err := WakePolicy(StealOne).MarshalText()
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "wake-policy(5) is not a wake policy")
	text, err := TakePolicy(0).MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "default", string(text))
}
