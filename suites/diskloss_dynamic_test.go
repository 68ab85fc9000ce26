package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/manifests"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// The dynamic-quorum layout's controller listener, which a voter added
// back is reached on, and the format flags its init container takes.
const (
	controllerListener   = "CONTROLLER"
	controllerPort       = 9093
	initialControllers   = "--initial-controllers"
	noInitialControllers = "--no-initial-controllers"
)

// dynamicLayout is the dynamic-quorum layout as deployed in e's namespace.
func dynamicLayout(e *env) (manifests.Layout, error) {
	l, err := manifests.LayoutNamed("dynamic-quorum")
	return l.In(e.Namespace), err
}

// formatWithoutInitialControllers changes the dynamic-quorum layout's
// init container from --initial-controllers to --no-initial-controllers,
// as a day-2 manifest would once the quorum is bootstrapped, and waits
// for the roll and for health: formatted volumes are kept
// (--ignore-formatted), and a new, empty one from then on gets a directory
// ID of its own, so that the quorum can tell it from the voter it
// replaces.
func formatWithoutInitialControllers(ctx context.Context, e *env) error {
	l, err := dynamicLayout(e)
	if err != nil {
		return err
	}
	sts, err := e.Kube.AppsV1().StatefulSets(e.Namespace).Get(ctx, l.StatefulSet, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if len(sts.Spec.Template.Spec.InitContainers) == 0 {
		return fmt.Errorf("StatefulSet %s has no init container that formats", l.StatefulSet)
	}
	args := slices.Clone(sts.Spec.Template.Spec.InitContainers[0].Args)
	i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, initialControllers) })
	if i < 0 {
		return fmt.Errorf("StatefulSet %s's init container has no %s argument: %q", l.StatefulSet, initialControllers, args)
	}
	args[i] = noInitialControllers
	patch, err := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec/template/spec/initContainers/0/args", "value": args}})
	if err != nil {
		return err
	}
	if _, err := e.Kube.AppsV1().StatefulSets(e.Namespace).Patch(ctx, l.StatefulSet, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	if err := waitRolledOut(ctx, e, l.StatefulSet); err != nil {
		return err
	}
	snap, err := e.Snapshot(ctx)
	if err != nil {
		return err
	}
	return e.WaitHealthy(ctx, scenario.BrokerIDs(snap))
}

// replacedVoterStory loses a following voter's disk (its claim and pod
// deleted together) on a dynamic quorum whose new volumes are formatted
// without initial controllers. What KIP-853 predicts: the node comes back
// with a new directory ID as an observer; the old voter, (id, old
// directory), stays in the voter set and falls behind, so the quorum runs
// on two of its three voters, and the suite's health check must say so.
// An operator then removes the old voter and adds the new one
// (kafka-metadata-quorum.sh remove-controller and add-controller; here
// their requests, RemoveRaftVoter and AddRaftVoter), and the quorum is
// whole again. Nothing committed before may be lost.
func replacedVoterStory(label string, s sentinel) story {
	var ids directoryIDs
	var observer kafkaadmin.Replica
	var asObserver, removed, added time.Duration
	var degraded string
	return story{
		Label: label, Kind: scenario.Hard, NewPods: true, NewVolume: "data", DataLost: true,
		Pick: func(ctx context.Context, e *env, _ string, snap []brokers.Server) ([]brokers.Server, error) {
			v, l, err := voterFollower(ctx, e, snap)
			if err != nil {
				return nil, err
			}
			if ids, err = readDirectoryIDs(ctx, e, v); err != nil {
				return nil, err
			}
			if ids.quorum == "" {
				return nil, fmt.Errorf("voter %d has no directory ID in the voter set: the quorum is static, and this story needs a dynamic one", v.ID)
			}
			By(fmt.Sprintf("voter %d (%s, directory %s) follows the quorum leader %d", v.ID, v.Pod, ids.quorum, l))
			return []brokers.Server{v}, nil
		},
		Fault: func(e *env, v []brokers.Server) chaos.Fault { return diskLoss(e, v[0].Pod, chaos.DiskLossClaim) },
		During: func(ctx context.Context, e *env, v []brokers.Server) error {
			injected := time.Now()
			By(fmt.Sprintf("waiting until node %d is back as a new Ready pod", v[0].ID))
			if err := e.WaitPodsBack(ctx, v, true); err != nil {
				return err
			}
			By(fmt.Sprintf("waiting until node %d fetches as an observer with a new directory ID, caught up", v[0].ID))
			var err error
			if observer, err = waitObserver(ctx, e, v[0].ID, ids.quorum); err != nil {
				return err
			}
			asObserver = time.Since(injected)
			By("asking the suite's health check about the quorum: the old voter falls behind, so it must not pass")
			snap, err := e.Snapshot(ctx)
			if err != nil {
				return err
			}
			// The old voter's problem, not any other: the victim may still
			// be fetching its partitions back, which fails health too.
			herr := e.HealthError(ctx, scenario.BrokerIDs(snap))
			if herr == nil || !strings.Contains(herr.Error(), fmt.Sprintf("quorum: voter %d ", v[0].ID)) {
				return fmt.Errorf("voter %d (directory %s) had no disk behind it, and the health check did not say so: %v", v[0].ID, ids.quorum, herr)
			}
			degraded = herr.Error()
			l, err := dynamicLayout(e)
			if err != nil {
				return err
			}
			host := l.PodFQDN(v[0].Pod)
			return e.WithKafka(func(cl *kafkaadmin.Client) error {
				start := time.Now()
				By(fmt.Sprintf("removing the old voter %d (directory %s), as kafka-metadata-quorum.sh remove-controller does", v[0].ID, ids.quorum))
				if err := cl.RemoveVoter(ctx, v[0].ID, ids.quorum); err != nil {
					return err
				}
				removed = time.Since(start)
				start = time.Now()
				By(fmt.Sprintf("adding node %d back as a voter with directory %s on %s:%d, as kafka-metadata-quorum.sh add-controller does", v[0].ID, observer.DirectoryID, host, controllerPort))
				if err := cl.AddVoter(ctx, v[0].ID, observer.DirectoryID, []kafkaadmin.Endpoint{{Name: controllerListener, Host: host, Port: controllerPort}}); err != nil {
					return err
				}
				added = time.Since(start)
				q := cl.DescribeQuorum(ctx)
				if q.Err != nil {
					return q.Err
				}
				if dir := voterDirectory(q, v[0].ID); dir != observer.DirectoryID {
					return fmt.Errorf("after AddRaftVoter the voter set lists node %d with directory %q, want %s: voters %+v", v[0].ID, dir, observer.DirectoryID, q.Voters)
				}
				return nil
			})
		},
		Finally: func(ctx context.Context, e *env, v []brokers.Server, o *outcome) {
			o.Observations = append(o.Observations, ids.after(ctx, e, v[0], o))
			if asObserver > 0 {
				o.Observations = append(o.Observations, fmt.Sprintf("node %d fetched as an observer with directory %s, caught up, %s after its claim and pod were deleted; meanwhile the voter set still held (%d, %s); predicted: an observer until an operator adds it (KIP-853)",
					v[0].ID, observer.DirectoryID, asObserver.Round(100*time.Millisecond), v[0].ID, ids.quorum))
			}
			if degraded != "" {
				o.Observations = append(o.Observations, "the suite's health check before the operator's fix: "+degraded)
			}
			if added > 0 {
				o.Observations = append(o.Observations, fmt.Sprintf("RemoveRaftVoter of (%d, %s) answered in %s, AddRaftVoter of (%d, %s) in %s (once committed)",
					v[0].ID, ids.quorum, removed.Round(10*time.Millisecond), v[0].ID, observer.DirectoryID, added.Round(10*time.Millisecond)))
			}
			o.Add(report.CheckMetadata, s.problems(ctx, e)...)
		},
	}
}

// waitObserver waits until the quorum lists node id as an observer with a
// directory ID other than old, caught up with the leader, and returns it.
func waitObserver(ctx context.Context, e *env, id int32, old string) (kafkaadmin.Replica, error) {
	var got kafkaadmin.Replica
	err := InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			q, err := quorumNow(ctx, e)
			if err != nil {
				return err
			}
			for _, r := range q.Observers {
				if r.ID == id && r.DirectoryID != "" && r.DirectoryID != old && r.Lag <= kafkaadmin.DefaultMaxQuorumLag {
					got = r
					return nil
				}
			}
			return fmt.Errorf("no caught-up observer %d with a new directory ID; observers %+v", id, q.Observers)
		}).WithTimeout(restartTimeout).WithPolling(electionPoll).Should(Succeed(), fmt.Sprintf("node %d as an observer", id))
	})
	return got, err
}
