package chaos

import (
	"context"
	"fmt"
	"sync"
)

// Nodes controls broker processes by node ID, as localkafka.Cluster does.
type Nodes interface {
	Kill(ctx context.Context, id int32) error
	Stop(ctx context.Context, id int32) error
	Restart(ctx context.Context, id int32) error
}

// ProcessKill SIGKILLs one broker process, like a crash or a forced pod
// delete. Recover starts it again with the same node ID and data dir.
type ProcessKill struct {
	Nodes Nodes
	ID    int32
	// Graceful stops the broker with SIGTERM (a controlled shutdown)
	// instead of SIGKILL.
	Graceful bool

	mu       sync.Mutex
	injected bool
}

var _ Fault = (*ProcessKill)(nil)

// Name implements Fault.
func (f *ProcessKill) Name() string {
	if f.Graceful {
		return fmt.Sprintf("graceful stop of broker %d", f.ID)
	}
	return fmt.Sprintf("SIGKILL of broker %d", f.ID)
}

// Inject implements Fault.
func (f *ProcessKill) Inject(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if f.Graceful {
		err = f.Nodes.Stop(ctx, f.ID)
	} else {
		err = f.Nodes.Kill(ctx, f.ID)
	}
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	f.injected = true
	return nil
}

// Recover implements Fault: it restarts the broker if this fault stopped it.
func (f *ProcessKill) Recover(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.injected {
		return nil
	}
	if err := f.Nodes.Restart(ctx, f.ID); err != nil {
		return fmt.Errorf("chaos: recover from %s: %w", f.Name(), err)
	}
	f.injected = false
	return nil
}
