package chaos

import "context"

// Fault is one injected fault aimed at one target. Selection of the target
// belongs to the caller.
type Fault interface {
	// Name says what the fault does to what, for narration and reports.
	Name() string
	// Inject causes the fault.
	Inject(ctx context.Context) error
	// Recover undoes the fault. It is idempotent: recovering a fault that
	// was never injected, or was already recovered, succeeds and does
	// nothing. Register it with DeferCleanup right after Inject.
	Recover(ctx context.Context) error
}

// Planner is a Fault that says beforehand what its Inject does: a dry run
// prints the plan ("dry-run: " and Plan) and makes no change. Every fault of
// this package is one. Plan is not part of Fault yet because faults defined
// outside this package may lack it.
type Planner interface {
	Fault
	// Plan says what Inject does, in one sentence.
	Plan() string
}
