package brokers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ErrNoStatefulSet is BrokerStatefulSet's error when no broker pod is
// owned by a StatefulSet (an operator's own pods, for example).
var ErrNoStatefulSet = errors.New("brokers: no StatefulSet owns the broker pods")

// BrokerStatefulSet returns the StatefulSet that owns the broker pods of
// snap (those with the broker role), from their owner references: what the
// rolling-restart, config-change and scale faults change. When the brokers
// belong to several StatefulSets it returns an error naming them.
func BrokerStatefulSet(ctx context.Context, cs kubernetes.Interface, namespace string, snap []Server) (string, error) {
	var owners []string
	for _, b := range snap {
		if !b.Broker {
			continue
		}
		p, err := cs.CoreV1().Pods(namespace).Get(ctx, b.Pod, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("brokers: owner of pod %s: %w", b.Pod, err)
		}
		for _, o := range p.OwnerReferences {
			if o.Kind == "StatefulSet" && o.Controller != nil && *o.Controller && !slices.Contains(owners, o.Name) {
				owners = append(owners, o.Name)
			}
		}
	}
	switch len(owners) {
	case 0:
		return "", ErrNoStatefulSet
	case 1:
		return owners[0], nil
	}
	slices.Sort(owners)
	return "", fmt.Errorf("brokers: the broker pods belong to %d StatefulSets (%s): name one", len(owners), strings.Join(owners, ", "))
}
