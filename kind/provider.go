package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	e2ekind "sigs.k8s.io/e2e-framework/support/kind"

	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// Prerequisite errors. Up and Down return them, wrapped with what was
// tried and what to do instead, before they change anything.
var (
	// ErrNoDocker: there is no docker client, or no Docker engine answers.
	ErrNoDocker = errors.New("kind needs a running Docker engine")
	// ErrNoKind: the kind program is not on $PATH.
	ErrNoKind = errors.New("kind: the kind program is not installed")
	// ErrNoImage: the agent image is not in the Docker engine, so it
	// cannot be loaded into the nodes.
	ErrNoImage = errors.New("kind: the agent image is not in the Docker engine")
)

// Defaults of New.
const (
	DefaultName          = "kafkachaos"
	DefaultImage         = nodeagent.AgentImage + ":dev"
	DefaultDockerTimeout = 10 * time.Second
	DefaultReadyTimeout  = 10 * time.Minute
	// KindVersion is the kind release the install hint names.
	KindVersion = "v0.33.0"
)

// How often Up looks at the Kafka pods, and how often it says what it saw.
const (
	readyPoll     = 2 * time.Second
	progressEvery = 15 * time.Second
)

// useLocal ends every prerequisite error.
const useLocal = "Use the local target instead, which needs no Docker: make chaos (or kafkachaos cluster up)"

// Provider brings one kind cluster, with Kafka on it, up and down.
type Provider struct {
	name          string
	layout        manifests.Layout
	image         string
	dir           string
	kubeconfig    string
	lookPath      func(string) (string, error)
	dockerTimeout time.Duration
	readyTimeout  time.Duration
	logf          func(format string, args ...any)
}

// Option configures a Provider.
type Option func(*Provider)

// WithName names the kind cluster, overriding the default "kafkachaos".
func WithName(name string) Option { return func(p *Provider) { p.name = name } }

// WithLayout picks the Kafka layout Up deploys, overriding the default,
// manifests.Layouts()[0] (combined mode).
func WithLayout(l manifests.Layout) Option { return func(p *Provider) { p.layout = l } }

// WithImage sets the agent image Up loads into the nodes, overriding the
// default DefaultImage; "" loads none.
func WithImage(image string) Option { return func(p *Provider) { p.image = image } }

// WithDir sets the directory of the rendered kind config and, by default,
// of the kubeconfig, overriding the default ~/.kafkachaos/kind/<name>.
func WithDir(dir string) Option {
	return func(p *Provider) {
		if dir != "" {
			p.dir = dir
		}
	}
}

// WithKubeconfig sets where Up writes the cluster's kubeconfig (and Down
// removes it), overriding the default <dir>/kubeconfig.
func WithKubeconfig(path string) Option {
	return func(p *Provider) {
		if path != "" {
			p.kubeconfig = path
		}
	}
}

// WithLookPath sets how programs are found, overriding the default
// exec.LookPath (which searches $PATH).
func WithLookPath(fn func(string) (string, error)) Option {
	return func(p *Provider) { p.lookPath = fn }
}

// WithDockerTimeout bounds `docker info`, overriding the default 10s.
func WithDockerTimeout(d time.Duration) Option { return func(p *Provider) { p.dockerTimeout = d } }

// WithReadyTimeout bounds the wait for Kafka's pods, overriding the
// default 10 minutes (the nodes pull apache/kafka first).
func WithReadyTimeout(d time.Duration) Option { return func(p *Provider) { p.readyTimeout = d } }

// WithLogf receives progress lines, overriding the default of discarding
// them.
func WithLogf(fn func(format string, args ...any)) Option { return func(p *Provider) { p.logf = fn } }

// New returns a Provider. It checks the options, not the machine: Up and
// Down check the prerequisites.
func New(opts ...Option) (*Provider, error) {
	p := &Provider{
		name:          DefaultName,
		layout:        manifests.Layouts()[0],
		image:         DefaultImage,
		lookPath:      exec.LookPath,
		dockerTimeout: DefaultDockerTimeout,
		readyTimeout:  DefaultReadyTimeout,
		logf:          func(string, ...any) {},
	}
	for _, o := range opts {
		o(p)
	}
	if !validName(p.name) {
		return nil, fmt.Errorf("kind: cluster name %q: want lower-case letters, digits and inner '-' or '.'", p.name)
	}
	if p.dockerTimeout <= 0 || p.readyTimeout <= 0 {
		return nil, errors.New("kind: timeouts must be positive")
	}
	if p.lookPath == nil || p.logf == nil {
		return nil, errors.New("kind: nil lookPath or logf")
	}
	if p.dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("kind: no directory for the cluster's files: %w", err)
		}
		p.dir = filepath.Join(home, ".kafkachaos", "kind", p.name)
	}
	if p.kubeconfig == "" {
		p.kubeconfig = filepath.Join(p.dir, "kubeconfig")
	}
	// e2e-framework runs kind through a command line split on spaces.
	for _, path := range []string{p.dir, p.kubeconfig} {
		if strings.ContainsAny(path, " \t\n$") {
			return nil, fmt.Errorf("kind: path %q: spaces and '$' cannot be passed to kind", path)
		}
	}
	return p, nil
}

// validName reports whether name is a DNS-label-like kind cluster name.
func validName(name string) bool {
	if name == "" || len(name) > 50 {
		return false
	}
	for i, r := range name {
		inner := i > 0 && i < len(name)-1
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || inner && (r == '-' || r == '.')) {
			return false
		}
	}
	return true
}

// KubeconfigPath is where Up writes the cluster's kubeconfig.
func (p *Provider) KubeconfigPath() string { return p.kubeconfig }

// ConfigPath is where Up writes the rendered kind config.
func (p *Provider) ConfigPath() string { return filepath.Join(p.dir, "kind-config.yaml") }

// Up checks the prerequisites, creates the kind cluster (or finds it),
// loads the agent image, deploys the Kafka layout (its Namespace opts in to
// disruption), waits until its pods are Ready, and returns the path of
// the kubeconfig it wrote. Up is idempotent.
func (p *Provider) Up(ctx context.Context) (string, error) {
	tools, err := p.Check(ctx)
	if err != nil {
		return "", err
	}
	if err := p.checkImage(ctx, tools.Docker); err != nil {
		return "", err
	}
	cfg, err := Config()
	if err != nil {
		return "", err
	}
	for _, d := range []string{p.dir, filepath.Dir(p.kubeconfig)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("kind: %w", err)
		}
	}
	if err := os.WriteFile(p.ConfigPath(), cfg, 0o600); err != nil {
		return "", fmt.Errorf("kind: %w", err)
	}
	c := e2ekind.NewCluster(p.name)
	c.WithPath(tools.Kind)
	if err := p.create(ctx, c); err != nil {
		return "", fmt.Errorf("%w (kafkachaos kind down --name %s removes what was made)", err, p.name)
	}
	if err := p.deploy(ctx); err != nil {
		return "", fmt.Errorf("%w (the cluster stays up: kubectl --kubeconfig %s; kafkachaos kind down --name %s removes it)", err, p.kubeconfig, p.name)
	}
	return p.kubeconfig, nil
}

// create creates the cluster, copies its kubeconfig to p.kubeconfig and
// loads the agent image.
func (p *Provider) create(ctx context.Context, c *e2ekind.Cluster) error {
	start := time.Now()
	p.logf("creating kind cluster %q from %s: 1 control-plane node, 3 workers in %s (a few minutes)", p.name, p.ConfigPath(), strings.Join(Zones(), ", "))
	var tmp string
	err := p.heartbeat(ctx, "creating the cluster", func() error {
		var err error
		// --kubeconfig keeps kind away from ~/.kube/config.
		tmp, err = c.Create(ctx, "--config", p.ConfigPath(), "--kubeconfig", p.kubeconfig)
		return err
	})
	if err != nil {
		return fmt.Errorf("kind: create cluster %q: %w", p.name, err)
	}
	raw, err := os.ReadFile(tmp)
	if err != nil {
		return fmt.Errorf("kind: read kubeconfig: %w", err)
	}
	_ = os.Remove(tmp) // e2e-framework's temporary copy; ours is p.kubeconfig
	if err := os.WriteFile(p.kubeconfig, raw, 0o600); err != nil {
		return fmt.Errorf("kind: write kubeconfig: %w", err)
	}
	p.logf("cluster %q up in %s; kubeconfig %s", p.name, time.Since(start).Round(time.Second), p.kubeconfig)
	if p.image == "" {
		return nil
	}
	p.logf("loading %s into the nodes", p.image)
	if err := p.heartbeat(ctx, "loading the image", func() error { return c.LoadImage(ctx, p.image) }); err != nil {
		return fmt.Errorf("kind: load %s: %w", p.image, err)
	}
	return nil
}

// deploy applies the Kafka layout and waits until its pods are Ready.
func (p *Provider) deploy(ctx context.Context) error {
	rc, err := clientcmd.BuildConfigFromFlags("", p.kubeconfig)
	if err != nil {
		return fmt.Errorf("kind: kubeconfig %s: %w", p.kubeconfig, err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("kind: %w", err)
	}
	objs, err := p.layout.Apply(ctx, rc)
	if err != nil {
		return fmt.Errorf("kind: deploy Kafka (%s): %w", p.layout.Name, err)
	}
	// The manifest's Namespace carries the opt-in label; server-side apply
	// restores it if someone removed it.
	p.logf("applied %s: %d objects; waiting for %d Ready pods", p.layout.File, len(objs), p.layout.Pods)
	return p.waitReady(ctx, cs)
}

// waitReady waits until the layout's pods are Ready, saying what it sees
// every progressEvery.
func (p *Provider) waitReady(ctx context.Context, cs kubernetes.Interface) error {
	start := time.Now()
	err := p.layout.WaitReady(ctx, cs, kube.Wait{Timeout: p.readyTimeout, Poll: readyPoll, ProgressEvery: progressEvery,
		Progress: func(seen string) { p.logf("  %s", seen) }})
	switch {
	case errors.Is(err, kube.ErrNotReady):
		return fmt.Errorf("kind: %w (look with: kubectl --kubeconfig %s -n %s describe pods)", err, p.kubeconfig, p.layout.Namespace)
	case err != nil:
		return fmt.Errorf("kind: %w", err)
	}
	p.logf("Kafka (%s) ready in namespace %s after %s", p.layout.Name, p.layout.Namespace, time.Since(start).Round(time.Second))
	return nil
}

// heartbeat runs fn, which says nothing while it works, and logs that it is
// still at it every progressEvery.
func (p *Provider) heartbeat(ctx context.Context, what string, fn func() error) error {
	done, exited := make(chan struct{}), make(chan struct{})
	defer func() { close(done); <-exited }()
	go func() {
		defer close(exited)
		start := time.Now()
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				p.logf("  still %s (%s)", what, time.Since(start).Round(time.Second))
			}
		}
	}()
	return fn()
}

// Down checks the prerequisites, deletes the kind cluster (deleting one
// that does not exist succeeds) and removes the kubeconfig and config Up
// wrote.
func (p *Provider) Down(ctx context.Context) error {
	tools, err := p.Check(ctx)
	if err != nil {
		return err
	}
	c := e2ekind.NewCluster(p.name)
	c.WithPath(tools.Kind)
	p.logf("deleting kind cluster %q", p.name)
	if err := c.Destroy(ctx); err != nil {
		return fmt.Errorf("kind: delete cluster %q: %w", p.name, err)
	}
	for _, f := range []string{p.kubeconfig, p.ConfigPath()} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("kind: %w", err)
		}
	}
	_ = os.Remove(p.dir) // only if empty
	return nil
}
