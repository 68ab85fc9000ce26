package manifests

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

func TestRBAC(t *testing.T) {
	tests := []struct {
		name        string
		saNamespace string
		namespaces  []string
		wantErr     bool
		want        []string // kind/namespace/name
		wantNames   []any    // the ClusterRole's namespaces rule
	}{
		{
			name: "the committed file", saNamespace: "kafka", namespaces: []string{"kafka"},
			want: []string{"ServiceAccount/kafka/kafkachaos", "Role/kafka/kafkachaos", "RoleBinding/kafka/kafkachaos",
				"ClusterRole//kafkachaos-kafka", "ClusterRoleBinding//kafkachaos-kafka"},
			wantNames: []any{"kafka"},
		},
		{
			name: "two namespaces, the account elsewhere", saNamespace: "chaos", namespaces: []string{"kafka-a", "kafka-b"},
			want: []string{"ServiceAccount/chaos/kafkachaos", "Role/kafka-a/kafkachaos", "Role/kafka-b/kafkachaos",
				"RoleBinding/kafka-a/kafkachaos", "RoleBinding/kafka-b/kafkachaos",
				"ClusterRole//kafkachaos-chaos", "ClusterRoleBinding//kafkachaos-chaos"},
			wantNames: []any{"kafka-a", "kafka-b"},
		},
		{name: "no namespace", saNamespace: "kafka", wantErr: true},
		{name: "bad namespace", saNamespace: "kafka", namespaces: []string{"Kafka_1"}, wantErr: true},
		{name: "bad account namespace", saNamespace: "", namespaces: []string{"kafka"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := RBAC(tt.saNamespace, tt.namespaces...)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("RBAC(%q, %q): no error", tt.saNamespace, tt.namespaces)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			objs, err := kube.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
				switch o.GetKind() {
				case "RoleBinding", "ClusterRoleBinding":
					subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
					want := []any{map[string]any{"kind": "ServiceAccount", "name": ServiceAccount, "namespace": tt.saNamespace}}
					if !reflect.DeepEqual(subjects, want) {
						t.Errorf("%s %s subjects %v, want %v", o.GetKind(), o.GetName(), subjects, want)
					}
					ref, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
					if o.GetKind() == "ClusterRoleBinding" && ref != "kafkachaos-"+tt.saNamespace {
						t.Errorf("ClusterRoleBinding refers to %q", ref)
					}
				case "ClusterRole":
					rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
					var names []any
					for _, r := range rules {
						if n, ok := r.(map[string]any)["resourceNames"]; ok {
							names = n.([]any)
						}
					}
					if !reflect.DeepEqual(names, tt.wantNames) {
						t.Errorf("ClusterRole namespaces %v, want %v", names, tt.wantNames)
					}
				}
			}
			slices.Sort(got)
			slices.Sort(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("objects %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRBACCommittedFile: for namespace kafka, RBAC gives back the
// committed file's objects unchanged, so the file people kubectl apply
// is the one the suite tests.
func TestRBACCommittedFile(t *testing.T) {
	raw, err := RBAC("kafka", "kafka")
	if err != nil {
		t.Fatal(err)
	}
	got, err := kube.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	want, err := kube.Decode(rbacYAML)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d objects, want %d", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i].Object, want[i].Object) {
			t.Errorf("object %d differs:\n got %v\nwant %v", i, got[i].Object, want[i].Object)
		}
	}
}
