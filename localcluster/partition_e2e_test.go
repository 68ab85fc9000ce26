package localcluster

import (
	"context"
	"fmt"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/localcluster/netpol"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// checkPartition isolates one broker with the partition fault's
// NetworkPolicy and checks, from inside the pods through pods/exec, that
// the local cluster drops the cut connections and keeps the others; then
// that Recover opens them again.
func checkPartition(t *testing.T, ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, l manifests.Layout, state string) {
	t.Helper()
	exec, err := chaos.NewExec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods(l.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kafka []string
	for _, p := range pods.Items {
		kafka = append(kafka, p.Name)
	}
	victim := l.StatefulSet + "-2"
	f := &chaos.Partition{Scope: chaos.Scope{Client: cs, Namespace: l.Namespace, RunID: "e2e"}, Exec: exec,
		Mode: chaos.PartitionIsolate, Pod: victim, KafkaPods: kafka}
	if err := f.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Recover(context.Background()) }) // a failure below must not leave the policy
	if ok, err := netpol.Exists(netpol.Tag(state)); !ok || err != nil {
		t.Errorf("no nftables table %s during the partition (err %v)", netpol.TableName(netpol.Tag(state)), err)
	}
	policy := chaos.PartitionPolicyName(victim)
	waitFor(t, ctx, "the "+netpol.ReasonEnforced+" event of "+policy, func() (string, bool) {
		evs, err := cs.CoreV1().Events(l.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", policy).String()})
		if err != nil {
			return err.Error(), false
		}
		var seen []string
		for _, e := range evs.Items {
			if e.Reason == netpol.ReasonEnforced {
				return "", true
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return fmt.Sprint(seen), false
	})
	reach, err := f.Probe(ctx)
	if err == nil {
		err = chaos.Held(reach)
	}
	if err != nil {
		t.Errorf("isolate %s: %v\n%v", victim, err, reach)
	}
	for range 2 { // idempotent
		if err := f.Recover(ctx); err != nil {
			t.Fatal(err)
		}
	}
	reach, err = f.Probe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reach {
		if !r.Got {
			t.Errorf("after Recover: %s, want every connection open", r)
		}
	}
}

// checkHostLeftClean fails unless the cluster's nftables table and pod
// cgroups are gone.
func checkHostLeftClean(t *testing.T, state string) {
	t.Helper()
	tag := netpol.Tag(state)
	if ok, err := netpol.Exists(tag); ok || err != nil {
		t.Errorf("nftables table %s left on the host (err %v)", netpol.TableName(tag), err)
	}
	if dir, err := netpol.ClusterCgroupDir(tag); err == nil {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left on the host (stat: %v)", dir, err)
		}
	}
}
