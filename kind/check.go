package kind

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Tools are the programs a Provider runs.
type Tools struct {
	Docker string // path of the docker client
	Kind   string // path of kind
}

// Check checks the prerequisites: a docker client on the path, a Docker
// engine that answers `docker info` within the docker timeout, and kind.
// Its errors wrap ErrNoDocker or ErrNoKind.
func (p *Provider) Check(ctx context.Context) (Tools, error) {
	docker, err := p.lookPath("docker")
	if err != nil {
		return Tools{}, fmt.Errorf("%w, and this machine has none (no docker client found: %w). %s", ErrNoDocker, err, useLocal)
	}
	if _, err := p.docker(ctx, docker, "info", "--format", "{{.ServerVersion}}"); err != nil {
		if ctx.Err() != nil {
			return Tools{}, err
		}
		return Tools{}, fmt.Errorf("%w, and this machine has none (%w). %s", ErrNoDocker, err, useLocal)
	}
	kind, err := p.lookPath("kind")
	if err != nil {
		return Tools{}, fmt.Errorf("%w: no kind program found (%w); the Docker engine is fine. Install kind with `go install sigs.k8s.io/kind@%s` and put $(go env GOPATH)/bin on $PATH, then run this again; or use the local target, which needs neither: make chaos (or kafkachaos cluster up)",
			ErrNoKind, err, KindVersion)
	}
	return Tools{Docker: docker, Kind: kind}, nil
}

// checkImage fails with ErrNoImage when the agent image is not in the
// engine: kind load docker-image would fail after the cluster was made.
func (p *Provider) checkImage(ctx context.Context, docker string) error {
	if p.image == "" {
		return nil
	}
	if _, err := p.docker(ctx, docker, "image", "inspect", "--format", "{{.Id}}", p.image); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("%w: %s (%w). Build it from the repository root with: docker build -t %s .", ErrNoImage, p.image, err, p.image)
	}
	return nil
}

// docker runs the docker client with the docker timeout and returns its
// output. Its error carries docker's own message.
func (p *Provider) docker(parent context.Context, docker string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(parent, p.dockerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, docker, args...)
	// A killed client may leave children holding its output open.
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	what := docker
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			break
		}
		what += " " + a
	}
	switch {
	case parent.Err() != nil:
		return "", fmt.Errorf("kind: stopped waiting for %s: %w", what, parent.Err())
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s did not answer within %s (is the engine hung, or DOCKER_HOST unreachable?): %w", what, p.dockerTimeout, ctx.Err())
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		return "", fmt.Errorf("%s failed: %w: %s", what, err, msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}
