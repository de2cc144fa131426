package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// A Fingerprint describes the environment a result was measured in. It is
// written at the top of every result file as benchfmt configuration lines
// ("key: value"), so that any reader of the Go benchmark format keeps it,
// and Compare can tell results of different machines apart before it
// compares a single number (the MMTk luindex "regression" of +8.2% was a
// microcode update, mmtk-core #1200).
type Fingerprint struct {
	Pairs []KV
}

// A KV is one fingerprint entry.
type KV struct{ Key, Value string }

// Fingerprint keys. The first group identifies the machine and toolchain:
// results are comparable only when these match. The second describes
// conditions during the run: they are reported, and a difference is noted,
// but it does not by itself make results incomparable.
const (
	KeyGOOS       = "goos"
	KeyGOARCH     = "goarch"
	KeyCPU        = "cpu"
	KeyMicrocode  = "microcode"
	KeyCPUs       = "cpus"
	KeyGovernor   = "governor"
	KeyKernel     = "kernel"
	KeyGo         = "go"
	KeyGOMAXPROCS = "gomaxprocs"
	KeyCommit     = "commit"
	KeyMHz        = "mhz"
	KeyLoadStart  = "loadavg-start"
	KeyLoadEnd    = "loadavg-end"
	// KeyCommand is not part of the fingerprint proper: the command line
	// that produced the file, read back for summaries.
	KeyCommand = "command"
)

// identityKeys must be equal for two results to be comparable.
var identityKeys = []string{KeyGOOS, KeyGOARCH, KeyCPU, KeyMicrocode, KeyCPUs, KeyGovernor, KeyKernel, KeyGo, KeyGOMAXPROCS}

// fingerprintKeys is every key a fingerprint may hold, in file order.
var fingerprintKeys = []string{KeyGOOS, KeyGOARCH, KeyCPU, KeyMicrocode, KeyCPUs, KeyMHz, KeyGovernor,
	KeyKernel, KeyGo, KeyGOMAXPROCS, KeyCommit, KeyLoadStart, KeyLoadEnd, KeyCommand}

// Get returns the value of key, or "".
func (f *Fingerprint) Get(key string) string {
	for _, kv := range f.Pairs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// Set sets key to value, appending it if new.
func (f *Fingerprint) Set(key, value string) {
	for i := range f.Pairs {
		if f.Pairs[i].Key == key {
			f.Pairs[i].Value = value
			return
		}
	}
	f.Pairs = append(f.Pairs, KV{key, value})
}

// Config returns the fingerprint as benchfmt file configuration.
func (f *Fingerprint) Config() []benchfmt.Config {
	var out []benchfmt.Config
	for _, kv := range f.Pairs {
		out = append(out, benchfmt.Config{Key: kv.Key, Value: []byte(kv.Value), File: true})
	}
	return out
}

// WriteTo writes the fingerprint as "key: value" lines.
func (f *Fingerprint) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	for _, kv := range f.Pairs {
		fmt.Fprintf(&b, "%s: %s\n", kv.Key, kv.Value)
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// TakeFingerprint records the current environment. The load average at the
// end is added by the caller when the run ends (Fingerprint.Set(KeyLoadEnd,
// LoadAvg())).
func TakeFingerprint() *Fingerprint {
	f := &Fingerprint{}
	info := cpuinfo()
	f.Set(KeyGOOS, runtime.GOOS)
	f.Set(KeyGOARCH, runtime.GOARCH)
	f.Set(KeyCPU, orUnknown(info["model name"]))
	f.Set(KeyMicrocode, orUnknown(info["microcode"]))
	f.Set(KeyCPUs, strconv.Itoa(runtime.NumCPU()))
	f.Set(KeyMHz, orUnknown(currentMHz(info)))
	f.Set(KeyGovernor, orUnknown(readTrim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")))
	f.Set(KeyKernel, orUnknown(kernel()))
	f.Set(KeyGo, runtime.Version())
	f.Set(KeyGOMAXPROCS, strconv.Itoa(runtime.GOMAXPROCS(0)))
	f.Set(KeyCommit, Commit())
	f.Set(KeyLoadStart, LoadAvg())
	return f
}

func orUnknown(s string) string {
	s = strings.Join(strings.Fields(s), " ") // one line, single spaces
	if s == "" {
		return "unknown"
	}
	return s
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// cpuinfo returns the first processor's fields from /proc/cpuinfo, plus
// "cpu MHz" averaged over all processors.
func cpuinfo() map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return out
	}
	var mhzSum float64
	var mhzN int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "cpu MHz" {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				mhzSum += x
				mhzN++
			}
			continue
		}
		if _, seen := out[k]; !seen {
			out[k] = v
		}
	}
	if mhzN > 0 {
		out["cpu MHz"] = strconv.FormatFloat(mhzSum/float64(mhzN), 'f', 0, 64)
	}
	return out
}

// currentMHz prefers the cpufreq driver's current frequency, then
// /proc/cpuinfo's.
func currentMHz(info map[string]string) string {
	if khz, err := strconv.Atoi(readTrim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")); err == nil {
		return strconv.Itoa(khz / 1000)
	}
	return info["cpu MHz"]
}

func kernel() string {
	rel := readTrim("/proc/sys/kernel/osrelease")
	if rel == "" {
		if out, err := exec.Command("uname", "-r").Output(); err == nil {
			rel = strings.TrimSpace(string(out))
		}
	}
	return rel
}

// LoadAvg returns the 1, 5 and 15 minute load averages, or "unknown".
func LoadAvg() string {
	f := strings.Fields(readTrim("/proc/loadavg"))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// BuildCommit is the commit the binary was built from, when the build set
// it: go build -ldflags "-X github.com/wsched/wsched/benchmarks/harness.BuildCommit=$(git rev-parse --short=12 HEAD)".
var BuildCommit string

// Commit returns the commit of the code being measured: WSCHED_BENCH_COMMIT
// if set, else BuildCommit, else the build's VCS stamp, else the wsched
// repository's HEAD now (with "-dirty" when the work tree has uncommitted
// changes; under go run that is the code being run), else "unknown". A
// prebuilt binary run while the repository moves on should carry
// BuildCommit, or its results name the wrong commit.
func Commit() string {
	if c := os.Getenv("WSCHED_BENCH_COMMIT"); c != "" {
		return c
	}
	if BuildCommit != "" {
		return BuildCommit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	dir := repoDir()
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "-dirty"
	}
	return c
}

// repoDir finds the directory to ask git about: the working directory
// (the harness runs inside benchmarks/, which is inside the repository).
func repoDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return filepath.Clean(wd)
}

// ReadFingerprint extracts the fingerprint from a result file: every
// configuration line whose key is a fingerprint key, wherever it appears
// (loadavg-end is written after the results). A key given twice keeps its
// last value.
func ReadFingerprint(r io.Reader) (*Fingerprint, error) {
	f := &Fingerprint{}
	known := map[string]bool{}
	for _, k := range fingerprintKeys {
		known[k] = true
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Benchmark") {
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok || !known[k] {
			continue
		}
		f.Set(k, strings.TrimSpace(v))
	}
	return f, sc.Err()
}

// A FingerprintDiff is one way two fingerprints differ.
type FingerprintDiff struct {
	Key, Old, New string
	Identity      bool // the machine or toolchain differs: results are not comparable
}

// DiffFingerprints lists how a and b differ: every identity key that
// differs, the commit (expected when comparing builds, reported for the
// record), the frequency when it differs by more than 5%, and load
// averages that show other work running beside the benchmark.
func DiffFingerprints(a, b *Fingerprint) []FingerprintDiff {
	var out []FingerprintDiff
	for _, k := range identityKeys {
		if av, bv := a.Get(k), b.Get(k); av != bv {
			out = append(out, FingerprintDiff{Key: k, Old: av, New: bv, Identity: true})
		}
	}
	if av, bv := a.Get(KeyCommit), b.Get(KeyCommit); av != bv {
		out = append(out, FingerprintDiff{Key: KeyCommit, Old: av, New: bv})
	}
	if av, bv := a.Get(KeyMHz), b.Get(KeyMHz); av != bv {
		x, err1 := strconv.ParseFloat(av, 64)
		y, err2 := strconv.ParseFloat(bv, 64)
		if err1 != nil || err2 != nil || x <= 0 || abs(y-x)/x > 0.05 {
			out = append(out, FingerprintDiff{Key: KeyMHz, Old: av, New: bv})
		}
	}
	cpus, _ := strconv.ParseFloat(a.Get(KeyCPUs), 64)
	if cpus <= 0 {
		cpus = float64(runtime.NumCPU())
	}
	// Load at the start is other work only: more than a quarter of the CPUs
	// busy is worth a note. Load at the end includes the benchmark itself,
	// which keeps up to every CPU busy: note only more than that.
	for _, c := range []struct {
		key   string
		limit float64
	}{{KeyLoadStart, cpus / 4}, {KeyLoadEnd, cpus}} {
		av, bv := a.Get(c.key), b.Get(c.key)
		if load1(av) > c.limit || load1(bv) > c.limit {
			out = append(out, FingerprintDiff{Key: c.key, Old: av, New: bv})
		}
	}
	return out
}

// load1 returns a load average string's 1-minute figure (0 if unknown).
func load1(load string) float64 {
	f := strings.Fields(load)
	if len(f) == 0 {
		return 0
	}
	x, _ := strconv.ParseFloat(f[0], 64)
	return x
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
