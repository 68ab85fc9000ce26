package resources

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// SummaryFunc reads one node's stats summary.
type SummaryFunc func(ctx context.Context, node string) (*statsv1alpha1.Summary, error)

// NodeProxySummary reads a node's /stats/summary through the API server's
// node proxy, as kubectl get --raw /api/v1/nodes/NODE/proxy/stats/summary.
func NodeProxySummary(cs kubernetes.Interface) SummaryFunc {
	return func(ctx context.Context, node string) (*statsv1alpha1.Summary, error) {
		raw, err := cs.CoreV1().RESTClient().Get().Resource("nodes").Name(node).SubResource("proxy").Suffix("stats/summary").DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("stats summary of node %s: %w", node, err)
		}
		var s statsv1alpha1.Summary
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("stats summary of node %s: %w", node, err)
		}
		return &s, nil
	}
}

// summaryIdle closes a summary connection unused that long: longer than
// the sampling interval, so a story's samples share one.
const summaryIdle = 3 * DefaultEvery

// LocalKubeletSummary reads a node's /stats/summary from the local
// cluster's node agent directly, at the node's InternalIP and the kubelet
// port it reports. It serves where the API server's node proxy refuses the
// node's address (the local cluster's nodes are on loopback). It sends no
// credentials, as the node agent's kubelet API asks for none, does not
// verify the agent's self-signed certificate, and refuses a node whose
// address is not a loopback one: it is no way to reach a real kubelet.
func LocalKubeletSummary(cs kubernetes.Interface) SummaryFunc {
	// Idle connections close after a while: a story makes a client of its
	// own, and one connection per node kept open by each would pile up
	// (the soak found 3 more goroutine pairs a story).
	hc := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // #nosec G402 -- loopback only, no credentials sent
		IdleConnTimeout: summaryIdle,
	}}
	return func(ctx context.Context, node string) (*statsv1alpha1.Summary, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("stats summary of node %s: %w", node, err)
		}
		var ip string
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				ip = a.Address
			}
		}
		port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
		if ip == "" || port == 0 {
			return nil, fmt.Errorf("stats summary of node %s: it reports no InternalIP or kubelet port", node)
		}
		if a := net.ParseIP(ip); a == nil || !a.IsLoopback() {
			return nil, fmt.Errorf("stats summary of node %s: its address %s is not a loopback one, and only the local cluster's node agents are read directly", node, ip)
		}
		url := "https://" + net.JoinHostPort(ip, strconv.Itoa(int(port))) + "/stats/summary"
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("stats summary of node %s: %w", node, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("stats summary of node %s: %s from %s", node, resp.Status, url)
		}
		var s statsv1alpha1.Summary
		if err := json.NewDecoder(io.LimitReader(resp.Body, maxSummary)).Decode(&s); err != nil {
			return nil, fmt.Errorf("stats summary of node %s: %w", node, err)
		}
		return &s, nil
	}
}

// maxSummary bounds what is read of one summary.
const maxSummary = 64 << 20
