package scheduler

import (
	"bytes"
	"flag"
	"math"
	"runtime"
	"strings"
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

		// Each policy field: its own kinds, the zero default, an unknown
		// Policy, and a policy of each other kind.
		{"wake one", Config{Wake: WakeOne}, ""},
		{"wake searcher", Config{Wake: WakeSearcher}, ""},
		{"unknown wake", Config{Wake: 99}, "Wake = policy(99): unknown policy"},
		{"steal as wake", Config{Wake: StealHalf}, "Wake = steal-half: not a wake policy"},
		{"take as wake", Config{Wake: TakeGuided}, "Wake = take-guided: not a wake policy"},
		{"local as wake", Config{Wake: LocalLIFO}, "Wake = local-lifo: not a wake policy"},
		{"steal one", Config{Steal: StealOne}, ""},
		{"unknown steal", Config{Steal: 42}, "Steal = policy(42): unknown policy"},
		{"wake as steal", Config{Steal: WakeAll}, "Steal = wake-all: not a steal policy (want steal-one, steal-half)"},
		{"take as steal", Config{Steal: TakeFair}, "Steal = take-fair: not a steal policy"},
		{"local as steal", Config{Steal: LocalFIFO}, "Steal = local-fifo: not a steal policy"},
		{"take fixed", Config{Take: TakeFixed, BucketBatch: 500}, ""},
		{"take fair", Config{Take: TakeFair}, ""},
		{"unknown take", Config{Take: 77}, "Take = policy(77): unknown policy"},
		{"wake as take", Config{Take: WakeN}, "Take = wake-n: not a take policy"},
		{"steal as take", Config{Take: StealOne}, "Take = steal-one: not a take policy"},
		{"local as take", Config{Take: LocalPrivate}, "Take = local-private: not a take policy"},
		{"local lifo", Config{Local: LocalLIFO}, ""},
		{"local private", Config{Local: LocalPrivate}, ""},
		{"unknown local", Config{Local: 13}, "Local = policy(13): unknown policy"},
		{"wake as local", Config{Local: WakeSearcher}, "Local = wake-searcher: not a local policy"},
		{"steal as local", Config{Local: StealHalf}, "Local = steal-half: not a local policy"},
		{"take as local", Config{Local: TakeFixed}, "Local = take-fixed: not a local policy"},

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

// allPolicies is every Policy, the zero (default) one first.
var allPolicies = []Policy{0, WakeOne, WakeAll, WakeN, WakeSearcher, StealOne, StealHalf,
	TakeFair, TakeFixed, TakeGuided, LocalPrivate, LocalLIFO, LocalFIFO}

// TestPolicyFlag: a Policy is a command-line flag through flag.TextVar,
// with its default shown by name and bad values refused.
func TestPolicyFlag(t *testing.T) {
	var cfg Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	fs.TextVar(&cfg.Wake, "wake", WakeN, "wake policy")
	fs.TextVar(&cfg.Take, "take", Policy(0), "take policy")
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
	assert.Contains(t, out.String(), "unknown policy")

	// A flag set to a policy of the wrong kind parses (it is a Policy)
	// and New refuses it.
	require.NoError(t, fs.Parse([]string{"-wake=take-guided"}))
	_, err := New(cfg)
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "Wake = take-guided: not a wake policy")
	assert.True(t, strings.Contains(err.Error(), "wake-one, wake-all, wake-n, wake-searcher"), err.Error())
}
