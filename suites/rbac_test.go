package suites

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kafkachaos/kafkachaos/manifests"
)

// The gate specs show that manifests/rbac lets the suite do its job: on
// the local cluster they act as its ServiceAccount. This spec shows the
// other half: that identity can do nothing more. Every mutating call is a
// server-side dry run, so nothing changes even if RBAC were to allow it.
var _ = Describe("The suite's ServiceAccount", Label("rbac"), func() {
	It("is allowed what the faults need and refused the rest", func(ctx SpecContext) {
		if suite.cfg.DryRun || suite.Kube == suite.Admin {
			Skip("the suite acts as manifests/rbac's ServiceAccount only on the embedded local cluster")
		}
		cs, ns := suite.Kube, suite.Namespace
		dry := []string{metav1.DryRunAll}

		By("checking who the suite is")
		who, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(who.Status.UserInfo.Username).To(Equal(fmt.Sprintf("system:serviceaccount:%s:%s", ns, manifests.ServiceAccount)))

		By("asking the API server what the faults need: each must be allowed")
		for _, a := range []authorizationv1.ResourceAttributes{
			{Namespace: ns, Verb: "delete", Resource: "pods"},
			{Namespace: ns, Verb: "create", Resource: "pods", Subresource: "eviction"},
			{Namespace: ns, Verb: "create", Resource: "pods", Subresource: "portforward"},
			{Namespace: ns, Verb: "create", Resource: "pods", Subresource: "exec"},
			{Namespace: ns, Verb: "patch", Resource: "pods"},
			{Namespace: ns, Verb: "watch", Resource: "pods"},
			{Verb: "watch", Resource: "nodes"},
			{Namespace: ns, Verb: "patch", Group: "apps", Resource: "statefulsets"},
			{Namespace: ns, Verb: "delete", Resource: "persistentvolumeclaims"},
			{Namespace: ns, Verb: "list", Group: "policy", Resource: "poddisruptionbudgets"},
			{Namespace: ns, Verb: "create", Group: "networking.k8s.io", Resource: "networkpolicies"},
			{Namespace: ns, Verb: "list", Group: "networking.k8s.io", Resource: "networkpolicies"},
			{Namespace: ns, Verb: "delete", Group: "networking.k8s.io", Resource: "networkpolicies"},
			{Verb: "patch", Resource: "nodes"},
			{Verb: "get", Resource: "persistentvolumes"},
			{Verb: "get", Resource: "namespaces", Name: ns},
		} {
			Expect(allowed(ctx, suite, a)).To(BeTrue(), "%s %s/%s in %q", a.Verb, a.Resource, a.Subresource, a.Namespace)
		}

		By("making calls it must not make: each must be refused with 403 Forbidden")
		node := anyNode(ctx)
		for _, c := range []struct {
			what string
			call func(context.Context) error
		}{
			{"read secrets in " + ns, func(ctx context.Context) error {
				_, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
				return err
			}},
			{"reach a pod through the API server's proxy", func(ctx context.Context) error {
				_, err := cs.CoreV1().Pods(ns).ProxyGet("http", "kafka-0", "9092", "/", nil).DoRaw(ctx)
				return err
			}},
			{"list pods in kube-system", func(ctx context.Context) error {
				_, err := cs.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
				return err
			}},
			{"delete a node", func(ctx context.Context) error {
				return cs.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{DryRun: dry})
			}},
			{"delete a PersistentVolume", func(ctx context.Context) error {
				return cs.CoreV1().PersistentVolumes().DeleteCollection(ctx, metav1.DeleteOptions{DryRun: dry}, metav1.ListOptions{})
			}},
			{"opt a namespace in to disruption itself", func(ctx context.Context) error {
				_, err := cs.CoreV1().Namespaces().Patch(ctx, metav1.NamespaceDefault, types.MergePatchType,
					[]byte(`{"metadata":{"labels":{"kafkachaos.io/allow-disruption":"true"}}}`), metav1.PatchOptions{DryRun: dry})
				return err
			}},
			{"delete the Kafka namespace", func(ctx context.Context) error {
				return cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{DryRun: dry})
			}},
			{"create a pod in " + ns, func(ctx context.Context) error {
				_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: "kafkachaos-rbac-probe"},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "apache/kafka:4.4.0"}}},
				}, metav1.CreateOptions{DryRun: dry})
				return err
			}},
			{"delete a StatefulSet in " + ns, func(ctx context.Context) error {
				return cs.AppsV1().StatefulSets(ns).Delete(ctx, suite.cfg.Target.StatefulSet, metav1.DeleteOptions{DryRun: dry})
			}},
			{"widen its own ClusterRole", func(ctx context.Context) error {
				_, err := cs.RbacV1().ClusterRoles().Update(ctx, &rbacv1.ClusterRole{
					ObjectMeta: metav1.ObjectMeta{Name: manifests.ServiceAccount + "-" + ns},
					Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
				}, metav1.UpdateOptions{DryRun: dry})
				return err
			}},
		} {
			err := c.call(ctx)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: want 403 Forbidden, got %v", c.what, err)
		}
	}, SpecTimeout(storyTimeout))
})

// allowed asks the API server whether the suite's identity may do a.
func allowed(ctx context.Context, e *env, a authorizationv1.ResourceAttributes) (bool, error) {
	r, err := e.Kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
		&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &a}}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

// anyNode names one node of the cluster.
func anyNode(ctx context.Context) string {
	nodes, err := suite.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(nodes.Items).NotTo(BeEmpty())
	return nodes.Items[0].Name
}
