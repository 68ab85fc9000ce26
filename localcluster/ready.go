package localcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Timeouts of bringing the control plane up.
const (
	etcdReadyTimeout      = 60 * time.Second
	apiserverReadyTimeout = 3 * time.Minute
	componentReadyTimeout = 2 * time.Minute
	readyPoll             = 250 * time.Millisecond
)

// waitHTTP polls url until it answers 200, failing early if the daemon
// died, and saying what it saw last.
func (c *Cluster) waitHTTP(ctx context.Context, name, url string, tlsCfg *tls.Config, timeout time.Duration) error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	defer client.CloseIdleConnections()
	last := "no answer yet"
	d := daemon{name, c.dir}
	err := wait.PollUntilContextTimeout(ctx, readyPoll, timeout, true, func(ctx context.Context) (bool, error) {
		seen, ok := getOK(ctx, client, url)
		if ok {
			return true, nil
		}
		if ctx.Err() == nil { // a request cut short by the wait's end says nothing new
			last = seen
		}
		return false, d.checkAlive(name)
	})
	return notReady(err, name, timeout, last, d.logFile())
}

// getOK reports whether a GET of url answers 200, and if not, what it
// answered.
func getOK(ctx context.Context, client *http.Client, url string) (string, bool) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := client.Do(req)
	if err != nil {
		return err.Error(), false
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	resp.Body.Close()
	return fmt.Sprintf("HTTP %d: %s", resp.StatusCode, body), resp.StatusCode == http.StatusOK
}

// notReady returns err, the end of a wait for what, as it is, unless the
// wait ran out of time or was cancelled: then it wraps err and says what
// the wait saw last and where the log is.
func notReady(err error, what string, timeout time.Duration, last, log string) error {
	if !wait.Interrupted(err) {
		return err
	}
	return fmt.Errorf("localcluster: %s not ready after %s (%w); last seen: %s; log: %s", what, timeout, err, last, log)
}

// waitNodesReady waits until every node is registered and Ready, failing
// early if the node agent died, and saying what it saw last.
func (c *Cluster) waitNodesReady(ctx context.Context) error {
	cs, err := c.Clientset()
	if err != nil {
		return err
	}
	last := "no nodes yet"
	err = wait.PollUntilContextTimeout(ctx, readyPoll, componentReadyTimeout, true, func(ctx context.Context) (bool, error) {
		seen, ok := c.nodesReady(ctx, cs)
		if ok {
			return true, nil
		}
		if ctx.Err() == nil { // a check cut short by the wait's end says nothing new
			last = seen
		}
		return false, c.agent().checkAlive("the node agent")
	})
	return notReady(err, "nodes", componentReadyTimeout, last, c.agent().logFile())
}

// nodesReady reports whether every node is registered and Ready, and if not,
// what it saw.
func (c *Cluster) nodesReady(ctx context.Context, cs kubernetes.Interface) (string, bool) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kafkachaos.io/local-node=true"})
	if err != nil {
		return err.Error(), false
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return fmt.Sprintf("%d of %d nodes Ready", ready, c.nodes), ready >= c.nodes
}
