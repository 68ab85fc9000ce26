package suites

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/scenario"
)

// Metadata snapshots, as Kafka's own snapshot_test.py tests them: the
// metadata log is tuned so that the controllers snapshot it and delete its
// first segment within seconds, so that a node that catches up from
// nothing must load a snapshot and then the records after it. KIP-630
// predicts that a follower whose fetch falls before the leader's log start
// is sent to a snapshot (FetchSnapshot) and goes on from its end. Then a
// broker-only node loses its disk while topics are created: back on an
// empty volume it must load the snapshot, know every topic created while
// it was away, and serve a topic of its own.
var _ = Describe("Metadata snapshots", Label("snapshot", "kafkatest"), Serial, func() {
	It("a broker-only node's disk lost while topics are created: it catches up from the controllers' snapshot, knows every new topic, serves one of its own, nothing acknowledged is lost", Label("snapshot-broker"), func(ctx SpecContext) {
		e := layoutKafka(ctx, "separate-controllers", "kafka-snapshot",
			"the snapshot spec loses a broker's disk: it runs on a Kafka of its own, with separate controllers, on the local cluster",
			"a disk loss cannot be undone, and the metadata log is tuned for snapshots: layout separate-controllers, for this spec alone", snapshotSettings())
		By(fmt.Sprintf("creating %d topics, then waiting until every controller's metadata log starts from a snapshot (within %s each, as Kafka's test)", snapshotTopics, snapshotTimeout))
		Expect(plantTopics(ctx, e, "kafkachaos-snapshot-before", nil)).To(Succeed())
		Expect(controllersSnapshotted(ctx, e)).To(Succeed())
		By(fmt.Sprintf("writing %d MiB of ballast into %s: what the new volume must fetch back", snapshotBallastMiB, ballastTopic))
		Expect(writeBallast(ctx, e, ballastTopic, snapshotBallastMiB<<20)).To(Succeed())
		expectPassed(tell(ctx, e, snapshotBrokerStory("snapshot-broker")))
	}, SpecTimeout(storyTimeout))
})

// snapshotSettings are snapshot_test.py's metadata log settings, on every
// node: a segment rolled every 10 s, 2,048 bytes of retention, and a
// snapshot every 2,048 bytes of records.
func snapshotSettings() map[string]string {
	return map[string]string{
		"KAFKA_METADATA_LOG_SEGMENT_MS":                         "10000",
		"KAFKA_METADATA_MAX_RETENTION_BYTES":                    "2048",
		"KAFKA_METADATA_LOG_MAX_RECORD_BYTES_BETWEEN_SNAPSHOTS": "2048",
	}
}

const (
	// snapshotTopics is how many topics are created before the snapshots,
	// and again while the broker is away (Kafka's test: 10).
	snapshotTopics = 10
	// snapshotTimeout bounds the wait for each controller's snapshot and
	// deleted first segment (Kafka's test: 100 s).
	snapshotTimeout = 100 * time.Second
	// snapshotBallastMiB is the data the broker fetches back: the spec is
	// about the metadata, so less than the disk-loss spec's.
	snapshotBallastMiB = 32
	// metadataDir is the metadata log's directory under the layouts'
	// first log dir.
	metadataDir = "/var/lib/kafka/data/__cluster_metadata-0"
	// firstSegment is the metadata log's first segment, gone once the log
	// starts from a snapshot.
	firstSegment = "00000000000000000000.log"
)

// plantTopics creates snapshotTopics topics named prefix-N with 10
// records each, on replicas (nil: where Kafka places them).
func plantTopics(ctx context.Context, e *env, prefix string, replicas []int32) error {
	for _, name := range topicNames(prefix) {
		s := sentinel{topic: name, partitions: 1, replicas: replicas, records: 10}
		if err := s.plant(ctx, e, -1); err != nil {
			return err
		}
	}
	return nil
}

// createTopics creates topics of one partition on replicas, in one
// CreateTopics request (quicker than a broker's return), through a client
// that does not dial pod away first.
func createTopics(ctx context.Context, e *env, topics []string, replicas []int32, away string) error {
	seeds := slices.DeleteFunc(slices.Clone(e.Bootstrap), func(addr string) bool { return strings.HasPrefix(addr, away+".") })
	cl, err := e.KafkaClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	for _, name := range topics {
		req.Topics = append(req.Topics, newTopic(name, 1, replicas))
	}
	// Retried, and a topic an earlier try created counts.
	return scenario.Poll(ctx, time.Second, createTimeout, fmt.Sprintf("%d topics created", len(topics)), func(ctx context.Context) error {
		rctx, cancel := context.WithTimeout(ctx, createTry)
		defer cancel()
		resp, err := req.RequestWith(rctx, cl)
		if err != nil {
			return fmt.Errorf("create %v: %w", topics, err)
		}
		var errs []error
		for _, t := range resp.Topics {
			if err := kerr.ErrorForCode(t.ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
				errs = append(errs, fmt.Errorf("create %s: %w", t.Topic, err))
			}
		}
		return errors.Join(errs...)
	})
}

// newTopic is a CreateTopics entry for topic: partitions partitions,
// each on replicas, or where Kafka places them (with the cluster's default
// replication factor) when replicas is nil.
func newTopic(topic string, partitions int32, replicas []int32) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, partitions, -1
	if replicas != nil {
		t.NumPartitions = -1
		for p := range partitions {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = p, replicas
			t.ReplicaAssignment = append(t.ReplicaAssignment, a)
		}
	}
	return t
}

// topicNames are the names plantTopics gives.
func topicNames(prefix string) []string {
	var out []string
	for i := range snapshotTopics {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

// controllersSnapshotted waits until the metadata log of each controller
// pod starts from a snapshot.
func controllersSnapshotted(ctx context.Context, e *env) error {
	pods, err := e.Kube.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "kafkachaos.io/role=controller"})
	if err != nil {
		return err
	}
	if len(pods.Items) == 0 {
		return fmt.Errorf("no controller pods in %s", e.Namespace)
	}
	for _, p := range pods.Items {
		err := scenario.Poll(ctx, time.Second, snapshotTimeout, p.Name+"'s metadata log from a snapshot", func(ctx context.Context) error {
			_, err := startsFromSnapshot(ctx, e, p.Name)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// startsFromSnapshot lists pod's metadata log directory and checks it
// with fromSnapshot; it returns the files it saw.
func startsFromSnapshot(ctx context.Context, e *env, pod string) ([]string, error) {
	out, err := e.Exec(ctx, e.Namespace, pod, "", []string{"ls", metadataDir})
	if err != nil {
		return nil, err
	}
	files := strings.Fields(out)
	return files, fromSnapshot(files)
}

// fromSnapshot returns nil when the files of a metadata log directory
// hold a snapshot (a .checkpoint file) and no first segment: the log
// starts from a snapshot, and a node that catches up must load one.
func fromSnapshot(files []string) error {
	snap := slices.ContainsFunc(files, func(f string) bool { return path.Ext(f) == ".checkpoint" })
	switch {
	case !snap:
		return fmt.Errorf("no snapshot (.checkpoint) among %v", files)
	case slices.Contains(files, firstSegment):
		return fmt.Errorf("the first segment %s is still there: the log does not start from the snapshot", firstSegment)
	}
	return nil
}

// snapshotBrokerStory is snapshot_test.py's broker scenario on the broker
// disk-loss story: the victim is stopped cleanly and kept down (so that
// it is out and fenced for sure), topics are created on the other brokers,
// and only then are its claim and pod deleted, so that it comes back on an
// empty volume and must catch up on them. Once it is back in every ISR
// its metadata log must start from a snapshot, it must know every topic
// created while it was away, and a topic on it alone must take and give
// back 100 records.
func snapshotBrokerStory(label string) story {
	st := brokerDiskLossStory(label)
	prefix := "kafkachaos-snapshot-away"
	st.Fault = func(e *env, v []brokers.Server) chaos.Fault {
		stop := &chaos.Stop{Scope: e.FaultScope(), Pods: []string{v[0].Pod}, PauseImage: e.cfg.Target.PauseImage}
		return &chaos.Sequence{Scope: e.FaultScope(), Say: func(m string) { By(m) },
			What: fmt.Sprintf("broker %d stopped, %d topics created, its claim and pod deleted", v[0].ID, snapshotTopics),
			Steps: []chaos.Step{
				{What: fmt.Sprintf("stopping broker %d cleanly (pod %s)", v[0].ID, v[0].Pod), Fault: func(context.Context) (chaos.Fault, error) { return stop, nil }},
				{What: fmt.Sprintf("waiting until broker %d is down and out of every ISR (within %s)", v[0].ID, stopLeftTimeout), Do: func(ctx context.Context) error {
					return waitStoppedOut(ctx, e, stop, v[0], scenario.Topic(label))
				}},
				{What: fmt.Sprintf("creating %d topics on the other brokers, in one request, while broker %d is down", snapshotTopics, v[0].ID), Do: func(ctx context.Context) error {
					snap, err := e.Snapshot(ctx)
					if err != nil {
						return err
					}
					others := slices.DeleteFunc(scenario.BrokerIDs(snap), func(id int32) bool { return id == v[0].ID })
					return createTopics(ctx, e, topicNames(prefix), others, v[0].Pod)
				}},
				{What: fmt.Sprintf("deleting broker %d's claim and pod: it comes back on an empty volume", v[0].ID), Fault: func(context.Context) (chaos.Fault, error) {
					return diskLoss(e, v[0].Pod, chaos.DiskLossClaim), nil
				}},
			}}
	}
	caughtUp := st.During
	st.During = func(ctx context.Context, e *env, v []brokers.Server) error {
		if err := caughtUp(ctx, e, v); err != nil {
			return err
		}
		return servesAfterSnapshot(ctx, e, v[0], prefix)
	}
	return st
}

// servesAfterSnapshot checks a broker back on an empty volume: its
// metadata log starts from a snapshot, it knows every topic named prefix-N,
// and a topic on it alone takes and gives back 100 records.
func servesAfterSnapshot(ctx context.Context, e *env, v brokers.Server, prefix string) error {
	By(fmt.Sprintf("checking that broker %d's metadata log starts from a snapshot", v.ID))
	files, err := startsFromSnapshot(ctx, e, v.Pod)
	if err != nil {
		return fmt.Errorf("broker %d: %w", v.ID, err)
	}
	By(fmt.Sprintf("broker %d's %s: %s", v.ID, metadataDir, strings.Join(files, " ")))
	By(fmt.Sprintf("asking broker %d alone for the topics created while it was away", v.ID))
	err = scenario.Poll(ctx, time.Second, createTimeout, fmt.Sprintf("broker %d knows every topic", v.ID), func(ctx context.Context) error {
		return e.WithKafka(func(cl *kafkaadmin.Client) error {
			unknown, err := cl.TopicsKnownTo(ctx, v.ID, topicNames(prefix)...)
			if err == nil && len(unknown) > 0 {
				err = fmt.Errorf("broker %d does not know %v", v.ID, unknown)
			}
			return err
		})
	})
	if err != nil {
		return err
	}
	own := sentinel{topic: "kafkachaos-snapshot-own", partitions: 1, replicas: []int32{v.ID}, records: 100}
	By(fmt.Sprintf("creating %s on broker %d alone, writing %d records with acks=all and reading them back", own.topic, v.ID, own.records))
	if err := own.plant(ctx, e, -1); err != nil {
		return err
	}
	if p := own.problems(ctx, e); len(p) > 0 {
		return fmt.Errorf("broker %d: %s", v.ID, strings.Join(p, "; "))
	}
	return nil
}

func TestFromSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name       string
		files      []string
		wantFailed bool
	}{
		{"snapshot and later segments", []string{"00000000000000000123.log", "00000000000000000120-0000000001.checkpoint", "leader-epoch-checkpoint", "partition.metadata", "quorum-state"}, false},
		{"no snapshot yet", []string{"00000000000000000000.log", "00000000000000000000.index", "quorum-state"}, true},
		{"a snapshot, the first segment still there", []string{"00000000000000000000.log", "00000000000000000120-0000000001.checkpoint"}, true},
		{"leader-epoch-checkpoint is no snapshot", []string{"00000000000000000123.log", "leader-epoch-checkpoint"}, true},
		{"empty", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := fromSnapshot(tc.files); (err != nil) != tc.wantFailed {
				t.Fatalf("err = %v, want failed %v", err, tc.wantFailed)
			}
		})
	}
}
