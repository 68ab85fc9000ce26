package timeline

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

// PodEvents returns what changed from prev to cur (nil prev: a new pod;
// nil cur: the pod is gone), seen at at.
func PodEvents(at time.Time, prev, cur *corev1.Pod) []Event {
	var out []Event
	add := func(k Kind, p *corev1.Pod, to string) {
		out = append(out, Event{At: at, Lane: LaneKubernetes, Kind: k, Subject: "pod " + p.Name, To: to})
	}
	switch {
	case cur == nil && prev == nil:
		return nil
	case cur == nil:
		add(PodGone, prev, "")
		return out
	case prev == nil || prev.UID != cur.UID:
		add(PodCreated, cur, "")
		prev = &corev1.Pod{}
	}
	if prev.DeletionTimestamp == nil && cur.DeletionTimestamp != nil {
		add(PodDeleting, cur, "")
	}
	if prev.Spec.NodeName == "" && cur.Spec.NodeName != "" {
		add(PodScheduled, cur, cur.Spec.NodeName)
	}
	if !allRunning(prev) && allRunning(cur) {
		add(PodStarted, cur, "")
	}
	switch was, is := kube.PodReady(prev), kube.PodReady(cur); {
	case !was && is:
		add(PodReady, cur, "")
	case was && !is:
		add(PodNotReady, cur, "")
	}
	return out
}

func allRunning(p *corev1.Pod) bool {
	if len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil {
			return false
		}
	}
	return true
}

// NodeEvents returns what changed from prev to cur: cordons.
func NodeEvents(at time.Time, prev, cur *corev1.Node) []Event {
	if prev == nil || cur == nil || prev.Spec.Unschedulable == cur.Spec.Unschedulable {
		return nil
	}
	k := NodeUncordoned
	if cur.Spec.Unschedulable {
		k = NodeCordoned
	}
	return []Event{{At: at, Lane: LaneKubernetes, Kind: k, Subject: "node " + cur.Name}}
}
