package brokers

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func ownedPod(name, kind, owner string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: name}}
	if owner != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner, Controller: &yes}}
	}
	return p
}

func TestBrokerStatefulSet(t *testing.T) {
	snap := []Server{{ID: 0, Pod: "b-0", Broker: true}, {ID: 1, Pod: "b-1", Broker: true}, {ID: 100, Pod: "c-0", Controller: true}}
	tests := []struct {
		name    string
		pods    []runtime.Object
		want    string
		wantErr string
	}{
		{name: "one StatefulSet; controllers' own is not asked", pods: []runtime.Object{ownedPod("b-0", "StatefulSet", "brokers"), ownedPod("b-1", "StatefulSet", "brokers"), ownedPod("c-0", "StatefulSet", "controllers")}, want: "brokers"},
		{name: "two", pods: []runtime.Object{ownedPod("b-0", "StatefulSet", "zone-a"), ownedPod("b-1", "StatefulSet", "zone-b")}, wantErr: "2 StatefulSets (zone-a, zone-b)"},
		{name: "an operator's pods", pods: []runtime.Object{ownedPod("b-0", "KafkaNodePool", "pool"), ownedPod("b-1", "", "")}, wantErr: ErrNoStatefulSet.Error()},
		{name: "a pod gone", pods: []runtime.Object{ownedPod("b-0", "StatefulSet", "brokers")}, wantErr: "owner of pod b-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BrokerStatefulSet(t.Context(), fake.NewClientset(tt.pods...), "kafka", snap)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("BrokerStatefulSet = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := BrokerStatefulSet(t.Context(), fake.NewClientset(), "kafka", nil); !errors.Is(err, ErrNoStatefulSet) {
		t.Errorf("no brokers: %v, want ErrNoStatefulSet", err)
	}
}
