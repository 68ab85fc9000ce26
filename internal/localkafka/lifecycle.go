package localkafka

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/kafkachaos/kafkachaos/internal/kafkaconfig"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
)

// Limits of starting and stopping nodes.
const (
	// killWait bounds the wait for a SIGKILLed process to be reaped.
	killWait = 10 * time.Second
	// failureLogLines is how much of a node's log an error about it quotes.
	failureLogLines = 20
)

// Start creates the nodes' directories and configs, formats each node's
// storage unless it already holds meta.properties, and starts every node.
// It returns once the JVMs are running; WaitHealthy waits for the cluster
// to be ready. If Start fails, Close still cleans up what it started.
func (c *Cluster) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.closed || c.started {
		c.mu.Unlock()
		return errors.New("localkafka: Start called on a cluster that was already started or closed")
	}
	c.started = true
	c.mu.Unlock()

	if err := c.prepare(); err != nil {
		return err
	}
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() { errs[i] = c.format(ctx, n) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, n := range c.nodes {
		if err := c.startNode(n); err != nil {
			return err
		}
	}
	return nil
}

// format formats n's storage with the cluster ID, unless it already holds
// meta.properties.
func (c *Cluster) format(ctx context.Context, n *node) error {
	if _, err := os.Stat(filepath.Join(n.dataDir(), "meta.properties")); err == nil {
		return nil
	}
	clusterID, err := kafkaconfig.ClusterID(n.env)
	if err != nil {
		return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}
	logf, err := openLog(n, "formatting storage")
	if err != nil {
		return err
	}
	defer logf.Close()
	// A short-lived tool: the C1 compiler alone and the shared archive
	// make it start faster.
	args := []string{"-Xmx256m", "-XX:TieredStopAtLevel=1", n.env["KAFKA_LOG4J_OPTS"]}
	if jsa := c.dist.SharedArchive(); jsa != "" {
		args = append(args, "-XX:SharedArchiveFile="+jsa)
	}
	args = append(args, "-cp", c.dist.Classpath(),
		kafkadist.StorageToolClass, "format", "--cluster-id="+clusterID, "-c", n.propsPath())
	cmd := exec.CommandContext(ctx, c.cfg.java, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = n.Dir, logf, logf
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("localkafka: node %d: formatting storage: %w\n%s", n.ID, err, tailOrErr(n.logPath(), failureLogLines))
	}
	return nil
}

// startNode starts n's JVM.
func (c *Cluster) startNode(n *node) error {
	logf, err := openLog(n, "starting")
	if err != nil {
		return err
	}
	// The JVM's temporary files (snappy-java's native library) stay in
	// the node's dir, which Close removes, even when the node is killed.
	tmp := filepath.Join(n.Dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}
	args := append(kafkaconfig.JVMOptions(n.env), "-Djava.io.tmpdir="+tmp, "-cp", c.dist.Classpath(), kafkadist.ServerClass, n.propsPath())
	pidPath := n.pidPath()
	p, err := startProcess(c.cfg.java, args, n.Dir, logf, func() { _ = os.Remove(pidPath) })
	if err != nil {
		return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}
	// The pid (also the process group ID) for whoever must clean up after
	// a Go process that could not: see Close.
	if err := os.WriteFile(pidPath, []byte(strconv.Itoa(p.pid())+"\n"), 0o644); err != nil {
		p.kill()
		return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		p.kill()
		return errors.New("localkafka: cluster closed while starting")
	}
	n.proc = p
	return nil
}

// openLog opens n's log for appending and writes a line that says what
// starts.
func openLog(n *node, what string) (*os.File, error) {
	f, err := os.OpenFile(n.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("localkafka: node %d: %w", n.ID, err)
	}
	fmt.Fprintf(f, "=== localkafka: node %d: %s at %s ===\n", n.ID, what, time.Now().Format(time.RFC3339Nano))
	return f, nil
}

// running returns n's process, nil if it is not running.
func (c *Cluster) running(n *node) *process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return n.proc
}

// forget clears n's process if it is still p.
func (c *Cluster) forget(n *node, p *process) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n.proc == p {
		n.proc = nil
	}
}

// withNode runs op on node id, alone among Stop, Kill and Restart of it.
func (c *Cluster) withNode(id int32, op func(*node) error) error {
	n, err := c.node(id)
	if err != nil {
		return err
	}
	n.opMu.Lock()
	defer n.opMu.Unlock()
	return op(n)
}

// errEscalated is returned by stop when SIGTERM was not enough.
var errEscalated = errors.New("did not exit in time after SIGTERM, so it was killed")

// Stop stops node id gracefully: SIGTERM to its process group, which makes
// Kafka shut down in a controlled way, then SIGKILL if it has not exited
// after the stop timeout (WithStopTimeout; an error then says so) or when
// ctx ends. Stopping a node that is not running does nothing.
func (c *Cluster) Stop(ctx context.Context, id int32) error {
	return c.withNode(id, func(n *node) error { return c.stop(ctx, n) })
}

func (c *Cluster) stop(ctx context.Context, n *node) error {
	p := c.running(n)
	if p == nil {
		return nil
	}
	defer c.forget(n, p)
	p.signal(syscall.SIGTERM)
	timer := time.NewTimer(c.cfg.stopTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
		if err := p.killAndWait(ctx); err != nil {
			return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
		}
		return fmt.Errorf("localkafka: node %d %w (stop timeout %v)", n.ID, errEscalated, c.cfg.stopTimeout)
	case <-ctx.Done():
		err := p.killAndWait(context.WithoutCancel(ctx))
		return fmt.Errorf("localkafka: node %d: stop cut short, node killed: %w", n.ID, errors.Join(ctx.Err(), err))
	}
}

// Kill sends SIGKILL to node id's process group, as a crash or a forced pod
// deletion would end it, and waits until the process is gone. Killing a node
// that is not running does nothing.
func (c *Cluster) Kill(ctx context.Context, id int32) error {
	return c.withNode(id, func(n *node) error {
		p := c.running(n)
		if p == nil {
			return nil
		}
		defer c.forget(n, p)
		if err := p.killAndWait(ctx); err != nil {
			return fmt.Errorf("localkafka: node %d: %w", n.ID, err)
		}
		return nil
	})
}

// Restart stops node id as Stop does, if it is running, and starts it again
// with the same node ID, ports, config and data directory. A node that
// needed SIGKILL to stop is started all the same; its log says so.
func (c *Cluster) Restart(ctx context.Context, id int32) error {
	return c.withNode(id, func(n *node) error {
		err := c.stop(ctx, n)
		switch {
		case errors.Is(err, errEscalated):
			if f, lerr := openLog(n, err.Error()); lerr == nil {
				_ = f.Close()
			}
		case err != nil:
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("localkafka: node %d: restart: %w", n.ID, err)
		}
		return c.startNode(n)
	})
}

// Close kills every process the cluster started (SIGKILL to each process
// group), waits for them, and removes the cluster's directory if it made it
// (not one given by WithDir). It is safe to call more than once, and after a
// failed Start.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	var procs []*process
	for _, n := range c.nodes {
		if n.proc != nil {
			procs = append(procs, n.proc)
			n.proc = nil
		}
	}
	client, dir, ownDir := c.client, c.dir, c.ownDir
	c.mu.Unlock()

	var errs []error
	for _, p := range procs {
		p.signal(syscall.SIGKILL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), killWait)
	defer cancel()
	for _, p := range procs {
		if err := p.killAndWait(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if client != nil {
		client.Close()
	}
	if ownDir && dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("localkafka: close: %w", err)
	}
	return nil
}
