package resources

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// TestLocalKubeletSummary: the summary is read at the node's InternalIP
// and kubelet port, over TLS with a self-signed certificate, without
// credentials, and only from a loopback address.
func TestLocalKubeletSummary(t *testing.T) {
	var auth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		if r.URL.Path != "/stats/summary" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(statsv1alpha1.Summary{Pods: []statsv1alpha1.PodStats{pod("kafka", "kafka-0", "u", ctr("kafka", t0, 3, 64))}})
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	node := func(name, ip string, port int) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if ip != "" {
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: ip}}
		}
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
		return n
	}
	cs := fake.NewClientset(node("good", host, p), node("no-address", "", p), node("wrong-port", host, 1), node("remote", "10.0.0.7", p))
	read := LocalKubeletSummary(cs)
	tests := []struct {
		node, err string
	}{
		{"good", ""},
		{"no-address", "reports no InternalIP or kubelet port"},
		{"wrong-port", "stats summary of node wrong-port"},
		{"absent", "not found"},
		{"remote", "10.0.0.7 is not a loopback one"},
	}
	for _, tt := range tests {
		t.Run(tt.node, func(t *testing.T) {
			s, err := read(context.Background(), tt.node)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Pods) != 1 || s.Pods[0].PodRef.Name != "kafka-0" {
				t.Errorf("summary %+v", s)
			}
			if auth != "" {
				t.Errorf("Authorization %q, want none", auth)
			}
		})
	}
}
