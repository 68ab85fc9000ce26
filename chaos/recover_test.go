package chaos

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// injectAll injects, in namespace kafka: a drain of node-1 (run r1), a
// config change of statefulset kafka (run r2) and a rolling restart of
// statefulset zk (run r1). Then the process "crashes": the fault values are
// dropped.
func injectAll(t *testing.T) fakeClient {
	t.Helper()
	cs := newClient(allowedNS("kafka"), testNode("node-1", false), testNode("node-2", true),
		testPod("kafka", "kafka-0", "node-1"),
		testSTS("kafka", "kafka", corev1.EnvVar{Name: "KAFKA_X", Value: "false"}), testSTS("kafka", "zk"))
	r1 := Scope{Client: cs, Namespace: "kafka", RunID: "r1"}
	r2 := Scope{Client: cs, Namespace: "kafka", RunID: "r2"}
	for _, f := range []Fault{
		&NodeDrain{Scope: r1, Node: "node-1"},
		&ConfigChange{Scope: r2, StatefulSet: "kafka", Env: "KAFKA_X", Value: "true"},
		&RollingRestart{Scope: r1, StatefulSet: "zk"},
	} {
		if err := f.Inject(t.Context()); err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
	}
	return cs
}

func TestRecoverAll(t *testing.T) {
	tests := []struct {
		name       string
		namespaces []string
		runID      string
		dryRun     bool
		wantLines  []string // prefixes, in order
		wantNode   bool     // node-1 still cordoned
		wantX      string   // KAFKA_X after
		wantLedger []string // entries left on kafka, zk and node-1
	}{
		{name: "everything", wantX: "false",
			wantLines: []string{"recovered node node-1: uncordon", `recovered statefulset kafka/kafka: restore env KAFKA_X="false"`, "recovered statefulset kafka/zk: drop restart entry"}},
		{name: "everything in namespace kafka", namespaces: []string{"kafka"}, wantX: "false",
			wantLines: []string{"recovered node node-1", "recovered statefulset kafka/kafka", "recovered statefulset kafka/zk"}},
		{name: "run r1 only", runID: "r1", wantX: "true", wantLedger: []string{"config-change@r2"},
			wantLines: []string{"recovered node node-1", "recovered statefulset kafka/zk"}},
		{name: "run r2 only", runID: "r2", wantX: "false", wantNode: true, wantLedger: []string{"node-drain@r1", "rolling-restart@r1"},
			wantLines: []string{"recovered statefulset kafka/kafka"}},
		{name: "unknown run", runID: "nope", wantX: "true", wantNode: true,
			wantLedger: []string{"config-change@r2", "node-drain@r1", "rolling-restart@r1"}},
		{name: "another namespace: only nodes", namespaces: []string{"other"}, wantX: "true",
			wantLedger: []string{"config-change@r2", "rolling-restart@r1"},
			wantLines:  []string{"recovered node node-1"}},
		{name: "dry run", dryRun: true, wantX: "true", wantNode: true,
			wantLedger: []string{"config-change@r2", "node-drain@r1", "rolling-restart@r1"},
			wantLines:  []string{"would recover node node-1", "would recover statefulset kafka/kafka", "would recover statefulset kafka/zk"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := injectAll(t)
			cs.ClearActions()
			recoverAll(t, cs, tt.namespaces, tt.runID, tt.dryRun, tt.wantLines)
			if tt.dryRun {
				if m := mutations(cs); len(m) > 0 {
					t.Errorf("dry run made calls %v", m)
				}
			}
			n1 := getNode(t, cs, "node-1")
			if n1.Spec.Unschedulable != tt.wantNode {
				t.Errorf("node-1 unschedulable %t, want %t", n1.Spec.Unschedulable, tt.wantNode)
			}
			if !getNode(t, cs, "node-2").Spec.Unschedulable {
				t.Error("node-2, cordoned by someone else, was uncordoned")
			}
			kafka := getSTS(t, cs, "kafka", "kafka")
			if v := envVar(&kafka.Spec.Template.Spec.Containers[0], "KAFKA_X"); v == nil || v.Value != tt.wantX {
				t.Errorf("KAFKA_X %+v, want %q", v, tt.wantX)
			}
			var left []Entry
			left = append(left, ledger(t, n1)...)
			left = append(left, ledger(t, kafka)...)
			left = append(left, ledger(t, getSTS(t, cs, "kafka", "zk"))...)
			if got := kinds(left); !slices.Equal(got, tt.wantLedger) {
				t.Errorf("entries left %v, want %v", got, tt.wantLedger)
			}

			// A second pass finds nothing more for the same filter.
			if !tt.dryRun {
				again, err := RecoverAll(t.Context(), cs, Access{}, tt.namespaces, tt.runID, false)
				if err != nil || len(again) != 0 {
					t.Errorf("second RecoverAll: %q, %v", again, err)
				}
			}
		})
	}
}

func TestRecoverAfterCrashWithFreshFaults(t *testing.T) {
	cs := injectAll(t)
	// A new process knows only what the faults were, not what they saw.
	target := Scope{Client: cs, Namespace: "kafka"}
	for _, f := range []Fault{
		&NodeDrain{Scope: target, Node: "node-1"},
		&ConfigChange{Scope: target, StatefulSet: "kafka", Env: "KAFKA_X", Value: "true"},
		&RollingRestart{Scope: target, StatefulSet: "zk"},
	} {
		if err := f.Recover(t.Context()); err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
	}
	lines, err := RecoverAll(t.Context(), cs, Access{}, nil, "", false)
	if err != nil || len(lines) != 0 {
		t.Errorf("RecoverAll after the faults recovered: %q, %v", lines, err)
	}
	if getNode(t, cs, "node-1").Spec.Unschedulable {
		t.Error("node-1 still cordoned")
	}
	if v := envVar(&getSTS(t, cs, "kafka", "kafka").Spec.Template.Spec.Containers[0], "KAFKA_X"); !isValue(v, "false") {
		t.Errorf("KAFKA_X %+v, want false", v)
	}
}

func TestRecoverAllKeepsUnknownAndReportsBadLedgers(t *testing.T) {
	bad := testSTS("kafka", "bad")
	bad.Annotations = map[string]string{LedgerAnnotation: "not json"}
	cs := newClient(
		withLedger(t, testSTS("kafka", "kafka"), entry("future-fault", "r1"), entry(KindRollingRestart, "r1")),
		bad, testSTS("kafka", "fine"))
	lines, err := RecoverAll(t.Context(), cs, Access{}, []string{"kafka"}, "", false)
	if err == nil || !strings.Contains(err.Error(), "statefulset kafka/bad") {
		t.Errorf("err = %v, want one naming kafka/bad", err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "keep entry of unknown kind (future-fault") {
		t.Errorf("lines %q", lines)
	}
	if got := kinds(ledger(t, getSTS(t, cs, "kafka", "kafka"))); !slices.Equal(got, []string{"future-fault@r1"}) {
		t.Errorf("entries left %v", got)
	}
}
