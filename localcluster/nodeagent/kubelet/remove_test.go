package kubelet

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A stopped pod's object whose delete the API server refuses (it is
// restarting) is deleted once the API answers again, as the kubelet's
// status manager keeps trying.
func TestRemovePodObjectRetries(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "kafka-2", UID: "u1"}}
	cs := fake.NewClientset(pod)
	var refused atomic.Int32
	cs.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, kruntime.Object, error) {
		// Tries at about 0, 0.5, 1.5, 3.5 and 7.5 s are refused; the one
		// at 12.5 s, past the 7.5 s where a capped wait.Backoff would have
		// stopped, succeeds.
		if refused.Add(1) <= 5 {
			return true, nil, errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
		}
		return false, nil, nil
	})
	p := &provider{client: cs}
	p.removePodObject(t.Context(), pod)
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods("kafka").Get(ctx, "kafka-2", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("pod still there after %d deletes: %v", refused.Load(), err)
	}
	if n := refused.Load(); n != 6 {
		t.Errorf("%d deletes, want 5 refused and the sixth done", n)
	}
}
