package chaos

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"
)

func TestPodDelete(t *testing.T) {
	tests := []struct {
		name      string
		pod       string
		force     bool
		wantGrace *int64 // nil: the pod's own
		wantErr   bool
		wantName  string
	}{
		{name: "force", pod: "kafka-1", force: true, wantGrace: new(int64), wantName: "force-delete pod kafka/kafka-1"},
		{name: "graceful", pod: "kafka-1", wantName: "delete pod kafka/kafka-1"},
		{name: "missing pod", pod: "kafka-9", force: true, wantGrace: new(int64), wantErr: true, wantName: "force-delete pod kafka/kafka-9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newClient(cluster(allowedNS("kafka"))...)
			f := &PodDelete{Scope: Scope{Client: cs, Namespace: "kafka"}, Pod: tt.pod, Force: tt.force}
			if f.Name() != tt.wantName {
				t.Errorf("Name %q, want %q", f.Name(), tt.wantName)
			}
			err := f.Inject(t.Context())
			if (err != nil) != tt.wantErr || (tt.wantErr && !apierrors.IsNotFound(err)) {
				t.Fatalf("Inject = %v, want error %t (NotFound)", err, tt.wantErr)
			}
			var del []k8stesting.DeleteAction
			for _, a := range cs.Actions() {
				if d, ok := a.(k8stesting.DeleteAction); ok {
					del = append(del, d)
				}
			}
			if tt.wantErr {
				// The pod is read first: one that is not there is not deleted.
				if len(del) != 0 {
					t.Errorf("delete actions %v, want none", del)
				}
				return
			}
			if len(del) != 1 || del[0].GetName() != tt.pod {
				t.Fatalf("delete actions %v, want one for %s", del, tt.pod)
			}
			got := del[0].GetDeleteOptions().GracePeriodSeconds
			if (got == nil) != (tt.wantGrace == nil) || (got != nil && *got != *tt.wantGrace) {
				t.Errorf("GracePeriodSeconds %v, want %v", got, tt.wantGrace)
			}
			if _, err := cs.CoreV1().Pods("kafka").Get(t.Context(), tt.pod, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("pod still there: %v", err)
			}
			n := len(cs.Actions())
			if err := f.Recover(t.Context()); err != nil {
				t.Errorf("Recover: %v", err)
			}
			if len(cs.Actions()) != n {
				t.Errorf("Recover made calls: %v", cs.Actions()[n:])
			}
		})
	}
}
