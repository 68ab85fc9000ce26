package chaos

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// Exec runs argv in a container of a pod and returns its standard output;
// a non-zero exit is an error that carries the standard error.
type Exec func(ctx context.Context, namespace, pod, container string, argv []string) (string, error)

// NewExec returns an Exec through the API server's pods/exec (SPDY), as
// kubectl exec does.
func NewExec(cfg *rest.Config) (Exec, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("chaos: exec client: %w", err)
	}
	return func(ctx context.Context, ns, pod, container string, argv []string) (string, error) {
		req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: container, Command: argv, Stdout: true, Stderr: true}, scheme.ParameterCodec)
		ex, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
		if err != nil {
			return "", fmt.Errorf("exec in %s/%s: %w", ns, pod, err)
		}
		var stdout, stderr bytes.Buffer
		if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}); err != nil {
			return stdout.String(), fmt.Errorf("exec %q in %s/%s: %w: %s", strings.Join(argv, " "), ns, pod, err, strings.TrimSpace(stderr.String()))
		}
		return stdout.String(), nil
	}, nil
}
