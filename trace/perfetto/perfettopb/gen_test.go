package perfettopb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// lookTool finds a generator on PATH or in $GOPATH/bin (where go install
// puts protoc-gen-go).
func lookTool(t *testing.T, name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(string(bytes.TrimSpace(out)), "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// versions matches the generator version lines, which may differ between
// machines without the code differing.
var versions = regexp.MustCompile(`(?m)^// \tprotoc(-gen-go)? +v.*$`)

// TestGeneratedCodeIsCurrent regenerates perfetto.pb.go into a temporary
// directory and compares it with the committed file.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	protoc := lookTool(t, "protoc")
	plugin := lookTool(t, "protoc-gen-go")
	if protoc == "" || plugin == "" {
		t.Skip("protoc or protoc-gen-go not installed; install with `apt-get install -y protobuf-compiler` and " +
			"`go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12` to check the generated code")
	}
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	dir := t.TempDir()
	cmd := exec.Command(protoc, "--plugin=protoc-gen-go="+plugin, "-I="+root, "--go_out="+dir,
		"--go_opt=paths=source_relative", "trace/perfetto/perfettopb/perfetto.proto")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "protoc:\n%s", out)
	fresh, err := os.ReadFile(filepath.Join(dir, "trace/perfetto/perfettopb/perfetto.pb.go"))
	require.NoError(t, err)
	committed, err := os.ReadFile("perfetto.pb.go")
	require.NoError(t, err)
	fresh = versions.ReplaceAll(fresh, nil)
	committed = versions.ReplaceAll(committed, nil)
	require.True(t, bytes.Equal(fresh, committed), "perfetto.pb.go is stale: run `go generate ./trace/perfetto/perfettopb`")
}
