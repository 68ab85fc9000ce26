package chaos

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
)

func TestRollingRestart(t *testing.T) {
	cs := newClient(cluster(allowedNS("kafka"))...)
	f := &RollingRestart{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, StatefulSet: "kafka"}
	before := time.Now().Add(-time.Second)
	if err := f.Inject(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := getSTS(t, cs, "kafka", "kafka")
	at, err := time.Parse(time.RFC3339, s.Spec.Template.Annotations[RestartedAtAnnotation])
	if err != nil || at.Before(before) {
		t.Errorf("restartedAt %q (%v), want RFC3339 now", s.Spec.Template.Annotations[RestartedAtAnnotation], err)
	}
	if got := kinds(ledger(t, s)); !slices.Equal(got, []string{"rolling-restart@r1"}) {
		t.Errorf("ledger %v", got)
	}
	for i := range 2 {
		if err := f.Recover(t.Context()); err != nil {
			t.Fatalf("Recover #%d: %v", i+1, err)
		}
		s := getSTS(t, cs, "kafka", "kafka")
		if _, ok := s.Annotations[LedgerAnnotation]; ok {
			t.Errorf("after Recover #%d the ledger annotation is still there: %v", i+1, s.Annotations)
		}
		if s.Spec.Template.Annotations[RestartedAtAnnotation] == "" {
			t.Errorf("Recover #%d removed restartedAt; a restart has nothing to revert", i+1)
		}
	}
}

func TestRolloutDone(t *testing.T) {
	three := int32(3)
	done := appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3,
		CurrentRevision: "kafka-b", UpdateRevision: "kafka-b"}
	tests := []struct {
		name   string
		mutate func(*appsv1.StatefulSetStatus)
		want   bool
	}{
		{name: "rolled out", mutate: func(*appsv1.StatefulSetStatus) {}, want: true},
		{name: "generation not observed", mutate: func(s *appsv1.StatefulSetStatus) { s.ObservedGeneration = 1 }},
		{name: "one pod not updated", mutate: func(s *appsv1.StatefulSetStatus) { s.UpdatedReplicas = 2 }},
		{name: "one pod not ready", mutate: func(s *appsv1.StatefulSetStatus) { s.ReadyReplicas = 2 }},
		{name: "revision not switched", mutate: func(s *appsv1.StatefulSetStatus) { s.CurrentRevision = "kafka-a" }},
		{name: "scaling", mutate: func(s *appsv1.StatefulSetStatus) { s.Replicas = 4 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testSTS("kafka", "kafka")
			s.Generation = 2
			s.Spec.Replicas = &three
			s.Status = done
			tt.mutate(&s.Status)
			desc, ok, err := RolloutDone(t.Context(), newClient(s), "kafka", "kafka")
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.want {
				t.Errorf("done %t, want %t: %s", ok, tt.want, desc)
			}
			if !strings.Contains(desc, "statefulset kafka/kafka") || !strings.Contains(desc, "revision") {
				t.Errorf("description %q", desc)
			}
		})
	}
	if _, _, err := RolloutDone(t.Context(), newClient(), "kafka", "nope"); err == nil {
		t.Error("no error for a missing statefulset")
	}
}
