package kind

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite kind-config.yaml from Config")

func TestConfig(t *testing.T) {
	raw, err := Config()
	if err != nil {
		t.Fatal(err)
	}
	var c clusterConfig
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		t.Fatalf("rendered config does not parse: %v\n%s", err, raw)
	}
	if c.Kind != "Cluster" || c.APIVersion != "kind.x-k8s.io/v1alpha4" {
		t.Errorf("kind %q apiVersion %q, want Cluster kind.x-k8s.io/v1alpha4", c.Kind, c.APIVersion)
	}
	want := []struct {
		role, zone string
	}{
		{"control-plane", ""},
		{"worker", "zone-a"},
		{"worker", "zone-b"},
		{"worker", "zone-c"},
	}
	if len(c.Nodes) != len(want) {
		t.Fatalf("%d nodes, want %d:\n%s", len(c.Nodes), len(want), raw)
	}
	for i, w := range want {
		n := c.Nodes[i]
		if n.Role != w.role || n.Labels[ZoneLabel] != w.zone {
			t.Errorf("node %d: role %q zone %q, want %q %q", i, n.Role, n.Labels[ZoneLabel], w.role, w.zone)
		}
	}
}

// TestCommittedConfig keeps kind-config.yaml equal to Config; -update
// rewrites it.
func TestCommittedConfig(t *testing.T) {
	want, err := Config()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("kind-config.yaml", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("kind-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("kind-config.yaml differs from Config(); run: go test ./kind/ -run TestCommittedConfig -update\ncommitted:\n%s\nrendered:\n%s", got, want)
	}
}

// Fake programs.
const (
	dockerOK = `#!/bin/sh
case "$1" in
info) echo 29.0.0 ;;
image) echo "Error response from daemon: No such image: $5" >&2; exit 1 ;;
*) echo "unexpected: $*" >&2; exit 99 ;;
esac
`
	dockerNoDaemon = `#!/bin/sh
echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2
exit 1
`
	dockerHangs = "#!/bin/sh\nexec sleep 30\n"
	kindFake    = "#!/bin/sh\necho \"kind must not run in unit tests: $*\" >&2\nexit 99\n"
)

// toolDir returns a directory holding the given programs (name -> script)
// and a lookPath that searches only it.
func toolDir(t *testing.T, progs map[string]string) (string, func(string) (string, error)) {
	t.Helper()
	dir := t.TempDir()
	for name, script := range progs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, func(name string) (string, error) { return exec.LookPath(filepath.Join(dir, name)) }
}

func TestCheck(t *testing.T) {
	const timeout = 300 * time.Millisecond
	tests := []struct {
		name  string
		progs map[string]string
		want  error    // nil: the check passes
		say   []string // in the error
	}{
		{"no docker client", nil, ErrNoDocker,
			[]string{"kind needs a running Docker engine", "this machine has none", "no docker client", "make chaos"}},
		{"no daemon", map[string]string{"docker": dockerNoDaemon, "kind": kindFake}, ErrNoDocker,
			[]string{"kind needs a running Docker engine", "docker info failed", "Cannot connect to the Docker daemon", "make chaos"}},
		{"daemon hangs", map[string]string{"docker": dockerHangs, "kind": kindFake}, ErrNoDocker,
			[]string{"did not answer within " + timeout.String(), "make chaos"}},
		{"no kind", map[string]string{"docker": dockerOK}, ErrNoKind,
			[]string{"no kind program", "go install sigs.k8s.io/kind@" + KindVersion, "make chaos"}},
		{"all there", map[string]string{"docker": dockerOK, "kind": kindFake}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, look := toolDir(t, tt.progs)
			p, err := New(WithDir(t.TempDir()), WithLookPath(look), WithDockerTimeout(timeout))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			tools, err := p.Check(t.Context())
			if took := time.Since(start); took > timeout+3*time.Second {
				t.Errorf("Check took %s with a %s docker timeout", took, timeout)
			}
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if tools.Docker != filepath.Join(dir, "docker") || tools.Kind != filepath.Join(dir, "kind") {
					t.Errorf("tools %+v, want the ones in %s", tools, dir)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Check error %v, want %v", err, tt.want)
			}
			for _, s := range tt.say {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

// TestPrerequisitesTouchNothing: Up and Down stop at a missing
// prerequisite before they write a file or run kind.
func TestPrerequisitesTouchNothing(t *testing.T) {
	tests := []struct {
		name  string
		progs map[string]string
		down  bool
		want  error
		say   string
	}{
		{"up without docker", nil, false, ErrNoDocker, "make chaos"},
		{"up without kind", map[string]string{"docker": dockerOK}, false, ErrNoKind, "go install"},
		{"up without the agent image", map[string]string{"docker": dockerOK, "kind": kindFake}, false, ErrNoImage,
			"docker build -t " + DefaultImage + " ."},
		{"down without docker", nil, true, ErrNoDocker, "make chaos"},
		{"down without kind", map[string]string{"docker": dockerOK}, true, ErrNoKind, "go install"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, look := toolDir(t, tt.progs)
			dir := filepath.Join(t.TempDir(), "state")
			p, err := New(WithDir(dir), WithLookPath(look))
			if err != nil {
				t.Fatal(err)
			}
			if tt.down {
				err = p.Down(t.Context())
			} else {
				_, err = p.Up(t.Context())
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.say) {
				t.Fatalf("error %v, want %v saying %q", err, tt.want, tt.say)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was created (stat: %v)", dir, err)
			}
		})
	}
}

func TestCheckStopsWithContext(t *testing.T) {
	_, look := toolDir(t, map[string]string{"docker": dockerHangs})
	p, err := New(WithDir(t.TempDir()), WithLookPath(look))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	// A cancelled run is not a missing engine: no exit 2, no advice.
	if _, err := p.Check(ctx); errors.Is(err, ErrNoDocker) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the deadline and not ErrNoDocker", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Check took %s after its context ended", took)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		bad  string // in the error; "" means valid
	}{
		{"defaults", nil, ""},
		{"dotted name", []Option{WithName("kafka.chaos-1")}, ""},
		{"upper case name", []Option{WithName("Kafka")}, "cluster name"},
		{"empty name", []Option{WithName("")}, "cluster name"},
		{"trailing dash", []Option{WithName("kafka-")}, "cluster name"},
		{"space in dir", []Option{WithDir("/tmp/a b")}, "spaces"},
		{"zero docker timeout", []Option{WithDockerTimeout(0)}, "positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(append([]Option{WithDir(t.TempDir())}, tt.opts...)...)
			if tt.bad == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p.KubeconfigPath() != filepath.Join(p.dir, "kubeconfig") {
					t.Errorf("kubeconfig %s, want it in %s", p.KubeconfigPath(), p.dir)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.bad) {
				t.Errorf("error %v, want one saying %q", err, tt.bad)
			}
		})
	}
}

func TestDefaultDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	p, err := New(WithName("mine"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".kafkachaos", "kind", "mine", "kubeconfig"); p.KubeconfigPath() != want {
		t.Errorf("kubeconfig %s, want %s", p.KubeconfigPath(), want)
	}
}
