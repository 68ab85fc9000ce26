package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/clusters/clusterstest"
)

func TestRecoverMissingKubeconfigExitsTwo(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"recover"}, &stdout, &stderr); code != exitBadInput {
		t.Errorf("exit %d, want %d; stderr %s", code, exitBadInput, stderr.String())
	}
	if !strings.Contains(stderr.String(), "no kubeconfig") {
		t.Errorf("stderr %q does not say there is no kubeconfig", stderr.String())
	}
}

// apiServer serves a node list, empty StatefulSet and Pod lists and a
// NetworkPolicy list of policy in namespace kafka, and records the patches
// and deletes it receives. Its first unavailable requests get 503.
type apiServer struct {
	mu          sync.Mutex
	unavailable int
	node        *corev1.Node
	policy      *networkingv1.NetworkPolicy
	patches     []string
	deletes     []string
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	var out any
	if s.unavailable > 0 {
		s.unavailable--
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "ServiceUnavailable", "code": 503})
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1/nodes":
		list := &corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}}
		if s.node != nil {
			list.Items = append(list.Items, *s.node)
		}
		out = list
	case r.Method == http.MethodGet && s.node != nil && r.URL.Path == "/api/v1/nodes/"+s.node.Name:
		out = s.node
	case r.Method == http.MethodPatch && s.node != nil && r.URL.Path == "/api/v1/nodes/"+s.node.Name:
		b, _ := io.ReadAll(r.Body)
		s.patches = append(s.patches, r.Header.Get("Content-Type")+" "+string(b))
		out = s.node
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/statefulsets"):
		out = map[string]any{"kind": "StatefulSetList", "apiVersion": "apps/v1", "items": []any{}}
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pods"):
		out = map[string]any{"kind": "PodList", "apiVersion": "v1", "items": []any{}}
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/networkpolicies"):
		list := &networkingv1.NetworkPolicyList{TypeMeta: metav1.TypeMeta{Kind: "NetworkPolicyList", APIVersion: "networking.k8s.io/v1"}}
		if s.policy != nil && r.URL.Query().Get("labelSelector") != "" && !strings.Contains(r.URL.Path, "/namespaces/other/") {
			list.Items = append(list.Items, *s.policy)
		}
		out = list
	case r.Method == http.MethodGet && s.policy != nil && r.URL.Path == policyPath:
		out = s.policy
	case r.Method == http.MethodDelete && s.policy != nil && r.URL.Path == policyPath:
		s.deletes = append(s.deletes, r.URL.Path)
		out = map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Success"}
	default:
		w.WriteHeader(http.StatusNotFound)
		out = map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}
	}
	_ = json.NewEncoder(w).Encode(out)
}

// policyPath is the leftover partition's NetworkPolicy the apiServer serves.
const policyPath = "/apis/networking.k8s.io/v1/namespaces/kafka/networkpolicies/kafkachaos-partition-kafka-1"

// A recover while the API server cannot serve retries until it can.
func TestRecoverRetriesAnUnavailableAPI(t *testing.T) {
	api := &apiServer{unavailable: 3, node: &corev1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", ResourceVersion: "7", Annotations: map[string]string{
			chaos.LedgerAnnotation: `[{"fault":"node-drain","runID":"r1","at":"2026-01-02T03:04:05Z","undo":"uncordon node node-1"}]`,
		}},
		Spec: corev1.NodeSpec{Unschedulable: true},
	}}
	ts := httptest.NewServer(api)
	defer ts.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	clusterstest.WriteKubeconfig(t, kc, ts.URL)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"recover", "--kubeconfig", kc}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "recovered node node-1: uncordon") {
		t.Errorf("stdout %q, want the uncordon", stdout.String())
	}
	if !strings.Contains(stderr.String(), "trying again") {
		t.Errorf("stderr %q does not say it retried", stderr.String())
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.patches) != 1 {
		t.Errorf("patches %q, want the one uncordon", api.patches)
	}
}

func TestRecoverCommand(t *testing.T) {
	cordoned := &corev1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", ResourceVersion: "7", Annotations: map[string]string{
			chaos.LedgerAnnotation: `[{"fault":"node-drain","runID":"r1","at":"2026-01-02T03:04:05Z","undo":"uncordon node node-1"}]`,
		}},
		Spec: corev1.NodeSpec{Unschedulable: true},
	}
	partition := &networkingv1.NetworkPolicy{
		TypeMeta: metav1.TypeMeta{Kind: "NetworkPolicy", APIVersion: "networking.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "kafkachaos-partition-kafka-1", UID: "u1",
			Labels: map[string]string{"app.kubernetes.io/managed-by": "kafkachaos", "kafkachaos.io/fault": "partition"},
			Annotations: map[string]string{
				chaos.LedgerAnnotation: `[{"fault":"partition","runID":"r1","at":"2026-01-02T03:04:05Z","undo":"delete NetworkPolicy kafka/kafkachaos-partition-kafka-1","data":{"mode":"isolate","pod":"kafka-1"}}]`,
			}},
	}
	tests := []struct {
		name        string
		node        *corev1.Node
		policy      *networkingv1.NetworkPolicy
		args        []string
		wantOut     string
		wantPatches int
		wantDeletes int
	}{
		{name: "nothing", wantOut: "nothing to recover\n"},
		{name: "uncordon", node: cordoned, args: []string{"--namespace", "kafka"}, wantOut: "recovered node node-1: uncordon (node-drain of run r1", wantPatches: 1},
		{name: "dry run", node: cordoned, args: []string{"--dry-run"}, wantOut: "would recover node node-1: uncordon"},
		{name: "other run", node: cordoned, args: []string{"--run-id", "r2"}, wantOut: "nothing to recover\n"},
		{name: "partition", policy: partition, args: []string{"--namespace", "kafka", "--run-id", "r1"}, wantDeletes: 1,
			wantOut: "recovered networkpolicy kafka/kafkachaos-partition-kafka-1: delete, ending the isolate partition of pod kafka-1 (partition of run r1"},
		{name: "partition, dry run", policy: partition, args: []string{"--dry-run"},
			wantOut: "would recover networkpolicy kafka/kafkachaos-partition-kafka-1: delete"},
		{name: "partition in another namespace", policy: partition, args: []string{"--namespace", "other"}, wantOut: "nothing to recover\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &apiServer{node: tt.node, policy: tt.policy}
			ts := httptest.NewServer(api)
			defer ts.Close()
			kc := filepath.Join(t.TempDir(), "kubeconfig")
			clusterstest.WriteKubeconfig(t, kc, ts.URL)
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"recover", "--kubeconfig", kc}, tt.args...), &stdout, &stderr)
			if code != exitOK {
				t.Fatalf("exit %d; stderr %s", code, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tt.wantOut) {
				t.Errorf("stdout %q, want prefix %q", stdout.String(), tt.wantOut)
			}
			api.mu.Lock()
			defer api.mu.Unlock()
			if len(api.patches) != tt.wantPatches || len(api.deletes) != tt.wantDeletes {
				t.Fatalf("patches %q, want %d; deletes %q, want %d", api.patches, tt.wantPatches, api.deletes, tt.wantDeletes)
			}
			for _, p := range api.patches {
				for _, want := range []string{"application/strategic-merge-patch+json", `"resourceVersion":"7"`, `"unschedulable":false`, `"kafkachaos.io/ledger":null`} {
					if !strings.Contains(p, want) {
						t.Errorf("patch %s lacks %s", p, want)
					}
				}
			}
		})
	}
}
