package scheduler

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wsched/wsched/trace"
)

func TestConfigValidation(t *testing.T) {
	st := []string{"a", "b"}
	cases := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" = valid
	}{
		{"minimal", Config{Stages: st}, ""},
		{"all set", Config{Workers: 3, Stages: st, Wake: WakeN, Steal: StealBatch(4), BucketBatch: 8, Spins: 2, LocalFIFO: true}, ""},
		{"negative workers", Config{Workers: -1, Stages: st}, "Workers = -1"},
		{"too many workers", Config{Workers: 1 << 20, Stages: st}, "at most"},
		{"no stages", Config{}, "no Stages"},
		{"empty stage", Config{Stages: []string{"a", ""}}, "Stages[1] is empty"},
		{"duplicate stage", Config{Stages: []string{"a", "b", "a"}}, `Stages[2] = "a" duplicates Stages[0]`},
		{"reserved stage", Config{Stages: []string{"Unconstrained"}}, "reserved"},
		{"unknown wake", Config{Stages: st, Wake: 99}, "unknown wake policy"},
		{"unknown steal", Config{Stages: st, Steal: StealPolicy{Kind: 42}}, "unknown steal policy"},
		{"batch limit 0", Config{Stages: st, Steal: StealBatch(0)}, "StealBatch limit = 0"},
		{"batch limit over MaxSteal", Config{Stages: st, Steal: StealBatch(MaxSteal + 1)}, "StealBatch limit = 129: must be 1..128"},
		{"batch limit MaxSteal", Config{Stages: st, Steal: StealBatch(MaxSteal)}, ""},
		{"limit on half", Config{Stages: st, Steal: StealPolicy{Kind: StealKindHalf, Limit: 3}}, "only StealBatch"},
		{"limit without kind", Config{Stages: st, Steal: StealPolicy{Limit: 3}}, "without a Steal.Kind"},
		{"negative bucket batch", Config{Stages: st, BucketBatch: -2}, "BucketBatch = -2"},
		{"negative spins", Config{Stages: st, Spins: -1}, "Spins = -1"},
		{"unknown take", Config{Stages: st, Take: 7}, "Take = 7: unknown take policy"},
		{"take fixed", Config{Stages: st, Take: TakeFixed, BucketBatch: 500}, ""},
		{"park spin off", Config{Stages: st, ParkSpin: NoParkSpin}, ""},
		{"park spin 1s", Config{Stages: st, ParkSpin: time.Second}, ""},
		{"park spin too long", Config{Stages: st, ParkSpin: time.Minute}, "ParkSpin = 1m0s: at most 1s"},
		{"tracer size", Config{Workers: 2, Stages: st, Tracer: trace.NewRecorder(3, trace.Options{MaxBytes: 1 << 16})}, "Tracer has 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.cfg)
			if c.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				s.Close()
				return
			}
			if s != nil || err == nil {
				t.Fatalf("New succeeded, want error containing %q", c.want)
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q: want ErrInvalidConfig containing %q", err, c.want)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := Config{Stages: []string{"x"}}.validate()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workers != runtime.GOMAXPROCS(0) || cfg.Wake != DefaultWake || cfg.Steal != StealHalf() ||
		cfg.BucketBatch != DefaultBucketBatch || cfg.Spins != DefaultSpins || cfg.Take != DefaultTake ||
		cfg.ParkSpin != DefaultParkSpin {
		t.Fatalf("defaults not applied: %+v", cfg)
	}
	// The defaults the sweeps chose (benchmarks/results/DEFAULTS.md).
	if DefaultWake != WakeN || DefaultBucketBatch != 32 || DefaultSpins != 64 || DefaultParkSpin != 200*time.Microsecond || DefaultTake != TakeGuided {
		t.Fatalf("defaults moved from the sweeps' choice: wake %v, batch %d, spins %d, park spin %v",
			DefaultWake, DefaultBucketBatch, DefaultSpins, DefaultParkSpin)
	}
	// Any negative ParkSpin means NoParkSpin.
	if cfg, err := (Config{Stages: []string{"x"}, ParkSpin: -5 * time.Second}).validate(); err != nil || cfg.ParkSpin != NoParkSpin {
		t.Fatalf("ParkSpin -5s: %v, %v; want NoParkSpin", cfg.ParkSpin, err)
	}
	// The scheduler keeps its own copy of Stages.
	stages := []string{"a", "b"}
	s := newSched(t, Config{Workers: 1, Stages: stages})
	stages[0] = "changed"
	if id, err := s.Stage("a"); err != nil || id != 1 || s.StageName(1) != "a" {
		t.Fatalf("Stage(a) = %d, %v after the caller changed its slice", id, err)
	}
}

func TestParsePolicies(t *testing.T) {
	for _, p := range []WakePolicy{WakeOne, WakeAll, WakeN, WakeSearcher, WakeDefault} {
		q, err := ParseWakePolicy(p.String())
		if err != nil || q != p {
			t.Errorf("ParseWakePolicy(%q) = %v, %v", p.String(), q, err)
		}
	}
	if _, err := ParseWakePolicy("sometimes"); err == nil {
		t.Error("ParseWakePolicy(sometimes) succeeded")
	}
	if got := WakePolicy(77).String(); got != "WakePolicy(77)" {
		t.Errorf("String = %q", got)
	}
	for _, p := range []StealPolicy{StealOne(), StealHalf(), StealBatch(8)} {
		q, err := ParseStealPolicy(p.String())
		if err != nil || q != p {
			t.Errorf("ParseStealPolicy(%q) = %v, %v", p.String(), q, err)
		}
	}
	for _, bad := range []string{"batch:0", "batch:x", "batch:", "all"} {
		if _, err := ParseStealPolicy(bad); err == nil {
			t.Errorf("ParseStealPolicy(%q) succeeded", bad)
		}
	}
}
