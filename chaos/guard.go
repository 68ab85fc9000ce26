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

// Target is what every Kubernetes fault needs.
type Target struct {
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

func (t Target) out() io.Writer {
	if t.Out == nil {
		return io.Discard
	}
	return t.Out
}

func (t Target) say(format string, a ...any) {
	fmt.Fprintf(t.out(), format+"\n", a...)
}

// check is the guard every Inject passes first.
func (t Target) check(ctx context.Context) error {
	if t.Client == nil {
		return errors.New("chaos: target has no Kubernetes client")
	}
	return CheckNamespace(ctx, t.Client, t.Namespace)
}
