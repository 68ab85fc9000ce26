// This file is long because Scale has the most paths of any fault: scale-out,
// scale-in with its claims, refusals, recovery after a crash, and the ledger;
// its table tests read best together.

package chaos

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
)

// scaleSTS is a StatefulSet with replicas pods and a volume claim template
// per name in templates.
func scaleSTS(ns, name string, replicas int32, templates ...string) *appsv1.StatefulSet {
	s := testSTS(ns, name, corev1.EnvVar{Name: "KAFKA_X", Value: "false"})
	s.Spec.Replicas = &replicas
	for _, t := range templates {
		s.Spec.VolumeClaimTemplates = append(s.Spec.VolumeClaimTemplates,
			corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: t}})
	}
	return s
}

// testClaim is a claim created at created: the fake clientset sets no
// creationTimestamp (nor UID) itself.
func testClaim(ns, name string, created time.Time) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created),
	}}
}

// addClaims creates claims, as the StatefulSet controller would.
func addClaims(t *testing.T, cs fakeClient, claims ...*corev1.PersistentVolumeClaim) {
	t.Helper()
	for _, c := range claims {
		if _, err := cs.CoreV1().PersistentVolumeClaims(c.Namespace).Create(t.Context(), c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// claimsIn lists the names of the claims in namespace ns, sorted.
func claimsIn(t *testing.T, cs fakeClient, ns string) []string {
	t.Helper()
	list, err := cs.CoreV1().PersistentVolumeClaims(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range list.Items {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

// deletedClaims lists the claims deleted, as ns/name, sorted.
func deletedClaims(cs fakeClient) []string {
	var out []string
	for _, a := range cs.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok && a.GetResource().Resource == "persistentvolumeclaims" {
			out = append(out, a.GetNamespace()+"/"+d.GetName())
		}
	}
	slices.Sort(out)
	return out
}

func scaleEntry(t *testing.T, cs fakeClient, ns, name string) Entry {
	t.Helper()
	e, ok := entryOf(ledger(t, getSTS(t, cs, ns, name)), KindScale)
	if !ok {
		t.Fatalf("statefulset %s/%s has no scale entry", ns, name)
	}
	return e
}

func TestScaleInject(t *testing.T) {
	tests := []struct {
		name     string
		objs     []runtime.Object
		replicas int32
		wantErr  string // "" = success
		notAllow bool   // the error wraps ErrNotAllowed
		wantPrev string // previousReplicas in the entry
	}{
		{name: "out from 3 to 4", objs: []runtime.Object{allowedNS("kafka"), scaleSTS("kafka", "kafka", 3, "data")},
			replicas: 4, wantPrev: "3"},
		{name: "out from the default of 1", objs: []runtime.Object{allowedNS("kafka"), testSTS("kafka", "kafka")},
			replicas: 3, wantPrev: "1"},
		{name: "equal is refused", objs: []runtime.Object{allowedNS("kafka"), scaleSTS("kafka", "kafka", 3, "data")},
			replicas: 3, wantErr: "statefulset has 3 replicas; a scale-out needs more than that, not 3"},
		{name: "scale-in is refused", objs: []runtime.Object{allowedNS("kafka"), scaleSTS("kafka", "kafka", 3, "data")},
			replicas: 2, wantErr: "not 2"},
		{name: "unlabelled namespace is refused", objs: []runtime.Object{plainNS("kafka", nil), scaleSTS("kafka", "kafka", 3, "data")},
			replicas: 4, wantErr: "lacks the label", notAllow: true},
		{name: "missing statefulset", objs: []runtime.Object{allowedNS("kafka")},
			replicas: 4, wantErr: "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, o := range tt.objs {
				if s, ok := o.(*appsv1.StatefulSet); ok {
					s.ResourceVersion = "7" // the fake tracker sets none
				}
			}
			cs := newClient(tt.objs...)
			f := &Scale{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, StatefulSet: "kafka", Replicas: tt.replicas}
			before := time.Now().UTC()
			err := f.Inject(t.Context())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Inject = %v, want an error saying %q", err, tt.wantErr)
				}
				if errors.Is(err, ErrNotAllowed) != tt.notAllow {
					t.Errorf("errors.Is(%v, ErrNotAllowed) = %t", err, !tt.notAllow)
				}
				if m := mutations(cs); len(m) > 0 {
					t.Errorf("mutating calls %v", m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m := mutations(cs); !slices.Equal(m, []string{"patch statefulsets kafka/kafka"}) {
				t.Fatalf("mutating calls %v, want one patch", m)
			}
			// The one patch carries the replicas, the entry and the
			// resourceVersion precondition.
			var p struct {
				Metadata struct {
					ResourceVersion string            `json:"resourceVersion"`
					Annotations     map[string]string `json:"annotations"`
				} `json:"metadata"`
				Spec struct {
					Replicas int32 `json:"replicas"`
				} `json:"spec"`
			}
			for _, a := range cs.Actions() {
				if pa, ok := a.(k8stesting.PatchAction); ok {
					if err := json.Unmarshal(pa.GetPatch(), &p); err != nil {
						t.Fatal(err)
					}
				}
			}
			if p.Spec.Replicas != tt.replicas || p.Metadata.Annotations[LedgerAnnotation] == "" || p.Metadata.ResourceVersion != "7" {
				t.Errorf("patch %+v, want replicas %d, the ledger and a resourceVersion", p, tt.replicas)
			}

			s := getSTS(t, cs, "kafka", "kafka")
			if replicasOf(s) != tt.replicas {
				t.Errorf("replicas %d, want %d", replicasOf(s), tt.replicas)
			}
			es := ledger(t, s)
			if got := kinds(es); !slices.Equal(got, []string{"scale@r1"}) {
				t.Fatalf("ledger %v", got)
			}
			e := es[0]
			if e.Data[dataPreviousReplicas] != tt.wantPrev || e.Data[dataReplicas] != strconv.Itoa(int(tt.replicas)) || e.At.Before(before) {
				t.Errorf("entry %+v, want previous %s, replicas %d, at or after %s", e, tt.wantPrev, tt.replicas, before)
			}
		})
	}
}

func TestScaleRefusesSecondInject(t *testing.T) {
	cs := newClient(allowedNS("kafka"), scaleSTS("kafka", "kafka", 3, "data"))
	f := &Scale{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, StatefulSet: "kafka", Replicas: 4}
	if err := f.Inject(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int32{4, 5} {
		g := &Scale{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r2"}, StatefulSet: "kafka", Replicas: n}
		err := g.Inject(t.Context())
		if err == nil || !strings.Contains(err.Error(), "already carries a scale entry (scale of run r1") {
			t.Errorf("second Inject to %d = %v, want a refusal naming the entry", n, err)
		}
	}
	s := getSTS(t, cs, "kafka", "kafka")
	if replicasOf(s) != 4 || scaleEntry(t, cs, "kafka", "kafka").Data[dataPreviousReplicas] != "3" {
		t.Errorf("replicas %d, ledger %+v", replicasOf(s), ledger(t, s))
	}
}

func TestScaleDryRun(t *testing.T) {
	old := time.Now().Add(-time.Hour)
	e := entry(KindScale, "r1")
	e.At = time.Now().Add(-time.Minute).UTC()
	e.Data = map[string]string{dataPreviousReplicas: "3", dataReplicas: "4"}
	tests := []struct {
		name    string
		objs    []runtime.Object
		step    func(t *testing.T, f *Scale) error
		wantOut string
		wantErr string
	}{
		{name: "inject", objs: []runtime.Object{scaleSTS("kafka", "kafka", 3, "data")},
			step:    func(t *testing.T, f *Scale) error { return f.Inject(t.Context()) },
			wantOut: "; it has 3 replicas now"},
		{name: "inject still refuses a scale-in", objs: []runtime.Object{scaleSTS("kafka", "kafka", 5, "data")},
			step:    func(t *testing.T, f *Scale) error { return f.Inject(t.Context()) },
			wantErr: "a scale-out needs more"},
		{name: "recover", objs: []runtime.Object{
			withLedger(t, scaleSTS("kafka", "kafka", 4, "data"), e),
			testClaim("kafka", "data-kafka-3", time.Now()), testClaim("kafka", "data-kafka-2", old)},
			step:    func(t *testing.T, f *Scale) error { return f.Recover(t.Context()) },
			wantOut: "would recover statefulset kafka/kafka: scale back from 4 to 3 replicas, delete claims data-kafka-3 (scale of run r1"},
		{name: "recover all", objs: []runtime.Object{
			withLedger(t, scaleSTS("kafka", "kafka", 4, "data"), e), testClaim("kafka", "data-kafka-3", time.Now())},
			step: func(t *testing.T, f *Scale) error {
				lines, err := RecoverAll(t.Context(), f.Client, Access{}, nil, "", true)
				f.say("%s", strings.Join(lines, "\n"))
				return err
			},
			wantOut: "would recover statefulset kafka/kafka: scale back from 4 to 3 replicas, delete claims data-kafka-3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newClient(append(tt.objs, allowedNS("kafka"))...)
			var out bytes.Buffer
			f := &Scale{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1", DryRun: true, Out: &out},
				StatefulSet: "kafka", Replicas: 4}
			before := getSTS(t, cs, "kafka", "kafka")
			claims := claimsIn(t, cs, "kafka")
			err := tt.step(t, f)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if m := mutations(cs); len(m) > 0 {
				t.Errorf("mutating calls %v", m)
			}
			if tt.name == "inject" && !strings.Contains(out.String(), "dry-run: "+f.Plan()) {
				t.Errorf("output %q does not hold the plan %q", out.String(), f.Plan())
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("output %q does not say %q", out.String(), tt.wantOut)
			}
			after := getSTS(t, cs, "kafka", "kafka")
			if replicasOf(after) != replicasOf(before) || after.Annotations[LedgerAnnotation] != before.Annotations[LedgerAnnotation] {
				t.Errorf("statefulset changed: replicas %d, ledger %q", replicasOf(after), after.Annotations[LedgerAnnotation])
			}
			if got := claimsIn(t, cs, "kafka"); !slices.Equal(got, claims) {
				t.Errorf("claims %v, want %v", got, claims)
			}
		})
	}
}

// TestScaleRecover scales kafka out from 3 to 5 with claim templates data
// and logs, lets "the controller" create claims, maybe lets someone change
// the replicas, and recovers.
//
// Claims: data-kafka-2 is an original pod's; data-kafka-4 is left from an
// earlier scale-out (created before the entry); data-kafka-3 was created in
// the same second as the entry (creationTimestamp has whole seconds);
// logs-kafka-3 and logs-kafka-4 after it; data-kafka-5 (an ordinal beyond
// the scale-out) and data-zk-3 (another StatefulSet) are not ours.
func TestScaleRecover(t *testing.T) {
	added := []string{"kafka/data-kafka-3", "kafka/logs-kafka-3", "kafka/logs-kafka-4"}
	tests := []struct {
		name        string
		setReplicas int32 // someone sets spec.replicas before Recover; 0 = nobody
		wantRep     int32
		wantDeleted []string
		wantLine    string
	}{
		{name: "as left", wantRep: 3, wantDeleted: added,
			wantLine: "recovered statefulset kafka/kafka: scale back from 5 to 3 replicas, delete claims data-kafka-3, logs-kafka-3, logs-kafka-4, keep claims older than the scale-out data-kafka-4 (created "},
		{name: "someone scaled back already", setReplicas: 3, wantRep: 3, wantDeleted: added,
			wantLine: "replicas already back at 3, delete claims data-kafka-3, logs-kafka-3, logs-kafka-4"},
		{name: "someone scaled back to 4", setReplicas: 4, wantRep: 4, wantDeleted: []string{"kafka/logs-kafka-4"},
			wantLine: "leave replicas at 4: changed since the scale-out from 3 to 5, delete claims logs-kafka-4, keep claims older"},
		{name: "someone scaled further out", setReplicas: 6, wantRep: 6,
			wantLine: "leave replicas at 6: changed since the scale-out from 3 to 5 (scale of run r1"},
		{name: "someone scaled in below", setReplicas: 2, wantRep: 2, wantDeleted: added,
			wantLine: "leave replicas at 2: changed since the scale-out from 3 to 5, delete claims data-kafka-3, logs-kafka-3, logs-kafka-4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := time.Now().Add(-time.Hour)
			cs := newClient(allowedNS("kafka"), scaleSTS("kafka", "kafka", 3, "data", "logs"), scaleSTS("kafka", "zk", 3, "data"),
				testClaim("kafka", "data-kafka-2", old), testClaim("kafka", "data-kafka-4", old))
			var out bytes.Buffer
			f := &Scale{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1", Out: &out}, StatefulSet: "kafka", Replicas: 5}
			if err := f.Inject(t.Context()); err != nil {
				t.Fatal(err)
			}
			at := scaleEntry(t, cs, "kafka", "kafka").At
			later := at.Add(time.Minute)
			addClaims(t, cs, testClaim("kafka", "data-kafka-3", at.Truncate(time.Second)),
				testClaim("kafka", "logs-kafka-3", later), testClaim("kafka", "logs-kafka-4", later),
				testClaim("kafka", "data-kafka-5", later), testClaim("kafka", "data-zk-3", later))
			if tt.setReplicas != 0 {
				s := getSTS(t, cs, "kafka", "kafka")
				s.Spec.Replicas = &tt.setReplicas
				if _, err := cs.AppsV1().StatefulSets("kafka").Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			all := claimsIn(t, cs, "kafka")
			cs.ClearActions()
			out.Reset()

			if err := f.Recover(t.Context()); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tt.wantLine) {
				t.Errorf("output %q does not say %q", out.String(), tt.wantLine)
			}
			if got := deletedClaims(cs); !slices.Equal(got, tt.wantDeleted) {
				t.Errorf("deleted claims %v, want %v", got, tt.wantDeleted)
			}
			// The claims go before the patch that removes the entry, so a
			// recovery cut short leaves the entry to finish it.
			if m := mutations(cs); len(m) == 0 || m[len(m)-1] != "patch statefulsets kafka/kafka" {
				t.Errorf("mutating calls %v, want the patch last", m)
			}
			want := slices.DeleteFunc(all, func(n string) bool { return slices.Contains(tt.wantDeleted, "kafka/"+n) })
			if got := claimsIn(t, cs, "kafka"); !slices.Equal(got, want) {
				t.Errorf("claims left %v, want %v", got, want)
			}
			s := getSTS(t, cs, "kafka", "kafka")
			if replicasOf(s) != tt.wantRep {
				t.Errorf("replicas %d, want %d", replicasOf(s), tt.wantRep)
			}
			if _, ok := s.Annotations[LedgerAnnotation]; ok {
				t.Errorf("ledger still there: %v", s.Annotations)
			}

			// Twice is fine, and does nothing.
			cs.ClearActions()
			out.Reset()
			if err := f.Recover(t.Context()); err != nil {
				t.Fatalf("second Recover: %v", err)
			}
			if m := mutations(cs); len(m) > 0 || out.Len() > 0 {
				t.Errorf("second Recover made calls %v and said %q", m, out.String())
			}
		})
	}
}

func TestScaleRecoverOrdinalStart(t *testing.T) {
	s := scaleSTS("kafka", "kafka", 3, "data")
	s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 1} // pods kafka-1, kafka-2, kafka-3
	cs := newClient(allowedNS("kafka"), s, testClaim("kafka", "data-kafka-3", time.Now().Add(-time.Hour)))
	f := &Scale{Scope: Scope{Client: cs, Namespace: "kafka"}, StatefulSet: "kafka", Replicas: 4}
	if err := f.Inject(t.Context()); err != nil {
		t.Fatal(err)
	}
	if u := scaleEntry(t, cs, "kafka", "kafka").Undo; !strings.Contains(u, "ordinals 4..4") {
		t.Errorf("undo %q", u)
	}
	addClaims(t, cs, testClaim("kafka", "data-kafka-4", time.Now().Add(time.Minute)))
	if err := f.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := deletedClaims(cs); !slices.Equal(got, []string{"kafka/data-kafka-4"}) {
		t.Errorf("deleted claims %v", got)
	}
}

// TestRecoverAllScale scales statefulset kafka out (run r1) and changes
// its env (run r2), then "crashes" and recovers from the ledger alone.
func TestRecoverAllScale(t *testing.T) {
	tests := []struct {
		name        string
		runID       string
		fresh       bool // recover with a fresh Scale value before RecoverAll
		wantRep     int32
		wantX       string
		wantDeleted []string
		wantLedger  []string
		wantLine    string
	}{
		{name: "every run", wantRep: 3, wantX: "false", wantDeleted: []string{"kafka/data-kafka-3"},
			wantLine: "recovered statefulset kafka/kafka: "},
		{name: "run r1", runID: "r1", wantRep: 3, wantX: "true", wantDeleted: []string{"kafka/data-kafka-3"},
			wantLedger: []string{"config-change@r2"}, wantLine: "recovered statefulset kafka/kafka: scale back from 4 to 3 replicas, delete claims data-kafka-3"},
		{name: "run r2", runID: "r2", wantRep: 4, wantX: "false",
			wantLedger: []string{"scale@r1"}, wantLine: `recovered statefulset kafka/kafka: restore env KAFKA_X="false"`},
		{name: "a fresh Scale value first", fresh: true, wantRep: 3, wantX: "false", wantDeleted: []string{"kafka/data-kafka-3"},
			wantLine: `recovered statefulset kafka/kafka: restore env KAFKA_X="false"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newClient(allowedNS("kafka"), scaleSTS("kafka", "kafka", 3, "data"))
			for _, f := range []Fault{
				&Scale{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r1"}, StatefulSet: "kafka", Replicas: 4},
				&ConfigChange{Scope: Scope{Client: cs, Namespace: "kafka", RunID: "r2"}, StatefulSet: "kafka", Env: "KAFKA_X", Value: "true"},
			} {
				if err := f.Inject(t.Context()); err != nil {
					t.Fatalf("%s: %v", f.Name(), err)
				}
			}
			addClaims(t, cs, testClaim("kafka", "data-kafka-3", time.Now().Add(time.Minute)))
			cs.ClearActions()

			if tt.fresh {
				// A new process knows only which StatefulSet it scaled.
				f := &Scale{Scope: Scope{Client: cs, Namespace: "kafka"}, StatefulSet: "kafka"}
				if err := f.Recover(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			lines, err := RecoverAll(t.Context(), cs, Access{}, nil, tt.runID, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], tt.wantLine) {
				t.Errorf("lines %q, want one starting %q", lines, tt.wantLine)
			}
			if tt.runID == "" && !tt.fresh {
				// Both entries are undone in one patch.
				if m := mutations(cs); !slices.Equal(m, []string{"delete persistentvolumeclaims kafka/data-kafka-3", "patch statefulsets kafka/kafka"}) {
					t.Errorf("mutating calls %v", m)
				}
			}
			if got := deletedClaims(cs); !slices.Equal(got, tt.wantDeleted) {
				t.Errorf("deleted claims %v, want %v", got, tt.wantDeleted)
			}
			s := getSTS(t, cs, "kafka", "kafka")
			if replicasOf(s) != tt.wantRep {
				t.Errorf("replicas %d, want %d", replicasOf(s), tt.wantRep)
			}
			if v := envVar(&s.Spec.Template.Spec.Containers[0], "KAFKA_X"); !isValue(v, tt.wantX) {
				t.Errorf("KAFKA_X %+v, want %q", v, tt.wantX)
			}
			if got := kinds(ledger(t, s)); !slices.Equal(got, tt.wantLedger) {
				t.Errorf("entries left %v, want %v", got, tt.wantLedger)
			}
			again, err := RecoverAll(t.Context(), cs, Access{}, nil, tt.runID, false)
			if err != nil || len(again) != 0 {
				t.Errorf("second RecoverAll: %q, %v", again, err)
			}
		})
	}
}
