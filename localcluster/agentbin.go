package localcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// AgentBinaryName is the file name of the binary that runs the node agent
// and its pods' containers (cmd/kafkachaos-node); make build puts it in
// bin/, next to kafkachaos.
const AgentBinaryName = "kafkachaos-node"

// cliName is the file name of the kafkachaos CLI.
const cliName = "kafkachaos"

// ErrNoAgentBinary is returned, wrapped, by Up (before it touches
// anything) and by AgentBinary when there is no kafkachaos-node binary
// to run the node agent with.
var ErrNoAgentBinary = errors.New("no " + AgentBinaryName + " binary (the local cluster's node agent): run `make build`, which builds it and kafkachaos into bin/")

// purgeTimeout bounds `kafkachaos-node purge`.
const purgeTimeout = time.Minute

// AgentBinary returns the kafkachaos-node binary the node agent runs: the
// one given with WithAgentBinary, else the one next to this program's
// executable, else the one on PATH. The error wraps ErrNoAgentBinary.
func (c *Cluster) AgentBinary() (string, error) {
	if c.agentBin != "" {
		if filepath.Base(c.agentBin) == cliName {
			// What the node agent ran before it had a binary of its own.
			return "", fmt.Errorf("localcluster: %s is the kafkachaos CLI, and the node agent runs as %s now: %w", c.agentBin, AgentBinaryName, ErrNoAgentBinary)
		}
		p, err := exec.LookPath(c.agentBin)
		if err != nil {
			return "", fmt.Errorf("localcluster: %w: %w", err, ErrNoAgentBinary)
		}
		// Absolute: the agent runs in the state dir.
		return filepath.Abs(p)
	}
	p, looked := besideExecutable(AgentBinaryName)
	if p != "" {
		return p, nil
	}
	if p, err := exec.LookPath(AgentBinaryName); err == nil {
		return filepath.Abs(p)
	}
	looked = append(looked, "$PATH")
	return "", fmt.Errorf("localcluster: looked in %s: %w", strings.Join(looked, ", "), ErrNoAgentBinary)
}

// purgeAgent runs `kafkachaos-node purge`, which kills the pod processes
// an agent that crashed left behind and removes its nftables table and pod
// cgroups. A state dir where no agent ever ran has nothing to purge.
func (c *Cluster) purgeAgent(ctx context.Context) error {
	if !exists(c.agent().logFile()) {
		return nil
	}
	bin, err := c.AgentBinary()
	if err != nil {
		return fmt.Errorf("localcluster: cannot clean up after the node agent (its pods' processes, nftables table, cgroups): %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, purgeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "purge", "--state-dir", c.dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("localcluster: %s purge: %w: %s", bin, err, bytes.TrimSpace(out))
	}
	return nil
}

// BesideExecutable says whether the node binary lies next to this
// program's executable (or the file it links to), as make build and make
// dist lay out bin/: AgentBinary takes that one when none is given.
func BesideExecutable() bool {
	p, _ := besideExecutable(AgentBinaryName)
	return p != ""
}

// besideExecutable returns the executable file name next to this program's
// executable, or next to the file it links to, and the dirs it looked in.
func besideExecutable(name string) (string, []string) {
	self, err := os.Executable()
	if err != nil {
		return "", nil
	}
	dirs := []string{filepath.Dir(self)}
	if real, err := filepath.EvalSymlinks(self); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if _, err := exec.LookPath(p); err == nil {
			return p, dirs
		}
	}
	return "", dirs
}
