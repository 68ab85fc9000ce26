package chaos

import "context"

// Fault is one injected fault aimed at one target. Selection of the target
// belongs to the caller.
type Fault interface {
	// Name says what the fault does to what, for narration and reports.
	Name() string
	// Plan says what Inject does, in one sentence: a dry run prints it
	// ("dry-run: " and the plan) and makes no change.
	Plan() string
	// Inject causes the fault.
	Inject(ctx context.Context) error
	// Recover undoes the fault. It is idempotent: recovering a fault that
	// was never injected, or was already recovered, succeeds and does
	// nothing. Register it with DeferCleanup right after Inject.
	Recover(ctx context.Context) error
}
