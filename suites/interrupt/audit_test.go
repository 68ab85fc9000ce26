package interrupt

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/localcluster"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// notOptedIn is a namespace without the opt-in label, for the guard's test.
const notOptedIn = "kafka-not-opted-in"

// auditSuiteRuns checks, from the API server's audit log, that the suite,
// acting as manifests/rbac's ServiceAccount, makes no mutating request in a
// dry run of every spec on the running cluster (the same log must show the
// suite's reads, or it would prove nothing); and that a run against a
// namespace that does not opt in to disruption refuses before it grants
// anything there, so its ServiceAccount never exists.
func auditSuiteRuns(ctx context.Context, t *testing.T, c *localcluster.Cluster, root, suite string, env []string, state, node string) {
	t.Run("a dry run of every spec makes no mutating API call (audit log)", func(t *testing.T) {
		since := time.Now()
		out := runSuite(ctx, t, root, suite, env, "-test.v", "-ginkgo.v", "-kafkachaos.dry-run",
			"-kafkachaos.state-dir="+state, "-kafkachaos.binary="+node)
		if !strings.Contains(out, "dry-run:") {
			t.Errorf("the dry run printed no plan")
		}
		expectNoMutation(t, c, "kafka", since)
	})

	t.Run("a run against a namespace that does not opt in grants nothing there", func(t *testing.T) {
		cs := clientset(t, c)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: notOptedIn}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.CoreV1().Namespaces().Delete(context.Background(), notOptedIn, metav1.DeleteOptions{})
		})
		cmd := exec.CommandContext(ctx, suite, "-test.v", "-ginkgo.v", "-ginkgo.label-filter=gate",
			"-kafkachaos.namespace="+notOptedIn, "-kafkachaos.state-dir="+state, "-kafkachaos.binary="+node)
		cmd.Dir, cmd.Env = filepath.Join(root, "suites"), env
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("the suite ran against %s, which does not opt in:\n%s", notOptedIn, out)
		}
		if !strings.Contains(string(out), "kafkachaos.io/allow-disruption") {
			t.Errorf("the suite's refusal does not name the opt-in label:\n%s", out)
		}
		// The opt-in is checked before anything is granted there.
		if _, err := cs.CoreV1().ServiceAccounts(notOptedIn).Get(ctx, manifests.ServiceAccount, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the suite granted its ServiceAccount in %s, which does not opt in (get: %v)", notOptedIn, err)
		}
	})
}

// expectNoMutation fails t unless the audit log shows requests of the
// suite's ServiceAccount in namespace ns since, and none of them mutating.
func expectNoMutation(t *testing.T, c *localcluster.Cluster, ns string, since time.Time) {
	t.Helper()
	user := "system:serviceaccount:" + ns + ":" + manifests.ServiceAccount
	es, err := localcluster.ReadAudit(c.AuditLogPath(), user, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) == 0 {
		t.Fatalf("the audit log %s holds no request of %s since %s: it proves nothing", c.AuditLogPath(), user, since.Format(time.RFC3339))
	}
	var mutating []string
	for _, e := range es {
		if e.Mutating() {
			mutating = append(mutating, e.String())
		}
	}
	t.Logf("audit log: %d requests of %s, %d mutating", len(es), user, len(mutating))
	if len(mutating) > 0 {
		t.Errorf("mutating requests of %s:\n%s", user, strings.Join(mutating, "\n"))
	}
}

// runSuite runs the suite to its end and returns its output, failing t if
// it fails.
func runSuite(ctx context.Context, t *testing.T, root, suite string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, suite, args...)
	cmd.Dir, cmd.Env = filepath.Join(root, "suites"), env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("suite %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
