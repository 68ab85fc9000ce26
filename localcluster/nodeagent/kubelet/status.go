package kubelet

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// statusOnly is the client the node library writes pods through. The
// library sends a pod's status as an update of pods/status carrying the
// provider's whole copy of the pod, and the API server takes labels and
// annotations from a status update too: a copy made when the pod was
// created would put back the metadata it had then, and drop a fault's
// ledger entry written on the pod since (a stopped broker's, which
// changes the pod's status). A kubelet patches the status alone; so does
// this client: UpdateStatus becomes a JSON merge patch of the status
// (its lists, the container statuses and conditions, replaced whole),
// guarded by the pod's UID and the resourceVersion the library read, so
// it never lands on a pod recreated under the same name.
type statusOnly struct{ kubernetes.Interface }

func (c statusOnly) CoreV1() corev1client.CoreV1Interface {
	return statusOnlyCore{c.Interface.CoreV1()}
}

type statusOnlyCore struct{ corev1client.CoreV1Interface }

func (c statusOnlyCore) Pods(ns string) corev1client.PodInterface {
	return statusOnlyPods{c.CoreV1Interface.Pods(ns)}
}

type statusOnlyPods struct{ corev1client.PodInterface }

// UpdateStatus patches pod's status, and nothing else of it.
func (p statusOnlyPods) UpdateStatus(ctx context.Context, pod *corev1.Pod, _ metav1.UpdateOptions) (*corev1.Pod, error) {
	body, err := statusPatch(pod)
	if err != nil {
		return nil, err
	}
	return p.Patch(ctx, pod.Name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
}

// statusPatch is the merge patch that sets pod's status, preconditioned on
// its UID and, when set, its resourceVersion. A merge patch keeps what it
// does not name: the status's own fields that this one leaves empty are
// named with null, so that they are cleared as an update would clear them.
func statusPatch(pod *corev1.Pod) ([]byte, error) {
	meta := map[string]any{"uid": pod.UID}
	if pod.ResourceVersion != "" {
		meta["resourceVersion"] = pod.ResourceVersion
	}
	raw, err := json.Marshal(pod.Status)
	if err != nil {
		return nil, fmt.Errorf("agent: pod %s/%s's status patch: %w", pod.Namespace, pod.Name, err)
	}
	var status map[string]any
	if err := json.Unmarshal(raw, &status); err != nil {
		return nil, fmt.Errorf("agent: pod %s/%s's status patch: %w", pod.Namespace, pod.Name, err)
	}
	// The status's scalar fields that an empty value clears (the node
	// library sets reason and message on a provider's error, and leaves
	// them empty once it is gone); its lists are replaced whole anyway.
	for _, k := range [...]string{"reason", "message", "nominatedNodeName"} {
		if _, ok := status[k]; !ok {
			status[k] = nil
		}
	}
	b, err := json.Marshal(map[string]any{"metadata": meta, "status": status})
	if err != nil {
		return nil, fmt.Errorf("agent: pod %s/%s's status patch: %w", pod.Namespace, pod.Name, err)
	}
	return b, nil
}
