package timeline

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// The recorder against client-go's fake clientset and a scripted Kafka:
// the pods' changes and the looks' changes both become events.
func TestRecorder(t *testing.T) {
	p := pod("1", "n", true, true, false)
	p.Namespace = "kafka"
	cs := fake.NewClientset(p)
	// The fake's watch replays nothing: a delete between the informer's
	// list and its watch would be lost. So the pod is deleted only once
	// the pods' watch exists.
	watching := make(chan struct{})
	var once sync.Once
	cs.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := cs.Tracker().Watch(a.GetResource(), a.GetNamespace())
		once.Do(func() { close(watching) })
		return true, w, err
	})
	full := [2][]int32{{0, 1, 2}, {0, 1, 2}}
	up := map[int32]bool{0: false, 1: false, 2: false}
	looks := []kafkaadmin.State{
		look(0, [2]int32{0, 1}, full, up, 0),
		{Controller: -1}, // a failed look
		look(1, [2]int32{1, 1}, full, up, 0),
	}
	var n atomic.Int32
	rec, err := Start(context.Background(), Config{
		Poll:      10 * time.Millisecond,
		Client:    cs,
		Namespace: "kafka",
		Look: func(context.Context) (kafkaadmin.State, error) {
			i := int(n.Add(1)) - 1
			if i >= len(looks) {
				i = len(looks) - 1
			}
			if i == 1 {
				return kafkaadmin.State{}, errors.New("timed out")
			}
			return looks[i], nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-watching:
	case <-time.After(10 * time.Second):
		t.Fatal("the recorder never watched the pods")
	}
	if err := cs.CoreV1().Pods("kafka").Delete(context.Background(), p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var tl Timeline
	err = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return n.Load() > 4, nil
	})
	tl = rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[Kind]int{}
	for _, e := range tl.Events {
		kinds[e.Kind]++
	}
	if kinds[PodGone] != 1 || kinds[LeaderChanged] != 1 || len(tl.Events) != 2 {
		t.Errorf("events %v, want one pod-gone and one leader-changed", tl.Events)
	}
}
