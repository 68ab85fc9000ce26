package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// AllowLabel is the label, with value "true", by which a namespace opts in
// to disruption. Faults against the Kubernetes API refuse to run in any
// other namespace.
const AllowLabel = "kafkachaos.io/allow-disruption"

// ErrNotAllowed is wrapped by every refusal to disrupt a namespace that has
// not opted in (or does not exist).
var ErrNotAllowed = errors.New("chaos: disruption not allowed")

// Scope is what every Kubernetes fault needs: the client, the one
// namespace it may disrupt, the run ID its ledger entries carry, and
// whether it is a dry run. (A "target", elsewhere, is the cluster and
// Kafka the suite runs against.)
type Scope struct {
	Client kubernetes.Interface
	// Namespace is the Kafka namespace; it must carry AllowLabel=true.
	Namespace string
	// RunID is written into ledger entries, so that `kafkachaos recover
	// --run-id` can restore what one run touched.
	RunID string
	// DryRun prints the plan to Out and makes no mutating call (reads are
	// still made). It applies to Recover too.
	DryRun bool
	// Out receives narration and plans; nil discards them.
	Out io.Writer
}

// CheckNamespace returns nil when namespace ns carries AllowLabel=true.
// Otherwise it returns an error wrapping ErrNotAllowed that names the
// namespace, the missing label and the kubectl command that opts in. A
// namespace that does not exist is refused too (the error also wraps the
// API's NotFound).
func CheckNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	if cs == nil {
		return errors.New("chaos: no Kubernetes client")
	}
	if ns == "" {
		return fmt.Errorf("%w: no namespace given; faults run only in a namespace labelled %s=true", ErrNotAllowed, AllowLabel)
	}
	n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: namespace %q does not exist: %w", ErrNotAllowed, ns, err)
	}
	if err != nil {
		return fmt.Errorf("chaos: check namespace %q: %w", ns, err)
	}
	v, ok := n.Labels[AllowLabel]
	switch {
	case v == "true":
		return nil
	case ok:
		return fmt.Errorf("%w: namespace %q has %s=%q, not \"true\"; opt in with: kubectl label namespace %s %s=true --overwrite",
			ErrNotAllowed, ns, AllowLabel, v, ns, AllowLabel)
	default:
		return fmt.Errorf("%w: namespace %q lacks the label %s=true; opt in with: kubectl label namespace %s %s=true",
			ErrNotAllowed, ns, AllowLabel, ns, AllowLabel)
	}
}

func (t Scope) out() io.Writer {
	if t.Out == nil {
		return io.Discard
	}
	return t.Out
}

func (t Scope) say(format string, a ...any) {
	fmt.Fprintf(t.out(), format+"\n", a...)
}

// check is the guard: inject runs it before anything else, and so does
// Sequence.Inject.
func (t Scope) check(ctx context.Context) error {
	if t.Client == nil {
		return errors.New("chaos: scope has no Kubernetes client")
	}
	return CheckNamespace(ctx, t.Client, t.Namespace)
}

// isDryRun reports whether t is a dry run's. Every fault that embeds a
// Scope has it, which is how a Sequence tells a dry-run fault.
func (t Scope) isDryRun() bool { return t.DryRun }

// lookFunc is a fault's side of Inject: it reads what the fault needs and
// checks it, and returns the plan a dry run prints and the change itself. It
// must not write: inject calls it in a dry run too.
type lookFunc func(ctx context.Context) (plan string, change func(ctx context.Context) error, err error)

// inject is every fault's Inject, the one place where the guard and the
// dry run are applied: it returns invalid (the fault's own fields checked,
// without a call) if not nil, then runs the guard (check), then look. In a
// dry run it prints "dry-run: " and the plan to Out and returns without
// calling the change, so a dry run reads but never writes; otherwise it
// makes the change.
func (t Scope) inject(ctx context.Context, invalid error, look lookFunc) error {
	if invalid != nil {
		return invalid
	}
	if err := t.check(ctx); err != nil {
		return err
	}
	plan, change, err := look(ctx)
	if err != nil {
		return err
	}
	if t.DryRun {
		t.say("dry-run: %s", plan)
		return nil
	}
	return change(ctx)
}
