package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

func TestRBACCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want []string // "kind/namespace/name" of the printed objects, or a message
	}{
		{"default namespace", nil, exitOK, []string{"ServiceAccount/kafka/kafkachaos", "Role/kafka/kafkachaos", "ClusterRoleBinding//kafkachaos-kafka"}},
		{"two namespaces", []string{"-n", "kafka-a,kafka-b", "--service-account-namespace", "chaos"}, exitOK,
			[]string{"ServiceAccount/chaos/kafkachaos", "Role/kafka-a/kafkachaos", "RoleBinding/kafka-b/kafkachaos", "ClusterRole//kafkachaos-chaos"}},
		{"bad namespace", []string{"-n", "Not_A_Namespace"}, exitBadInput, []string{"Not_A_Namespace"}},
		{"arguments", []string{"kafka"}, exitBadInput, []string{"takes no arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"rbac"}, tt.args...), &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, stderr.String())
			}
			got := stderr.String()
			if code == exitOK {
				objs, err := kube.Decode(stdout.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range objs {
					got += o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName() + "\n"
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
		})
	}
}
