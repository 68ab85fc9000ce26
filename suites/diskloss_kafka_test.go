package suites

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// What the disk-loss specs write and wait on.
const (
	// dataDir is where every layout of manifests/kafka mounts its claim
	// and keeps its log dir (and a combined node's metadata log).
	dataDir          = "/var/lib/kafka/data"
	ballastRecord    = 64 << 10
	catchUpTimeout   = 10 * time.Minute
	catchUpPoll      = 500 * time.Millisecond
	electionTimeout  = 3 * time.Minute
	electionPoll     = 500 * time.Millisecond
	restartTimeout   = 3 * time.Minute
	sentinelReadTime = 30 * time.Second
	createTry        = 15 * time.Second
	createTimeout    = 2 * time.Minute
)

// writeBallast creates topic (6 partitions, replication factor 3) and
// writes size bytes of incompressible records into it with acks=all, so
// that a broker that lost its disk has that much to fetch back.
func writeBallast(ctx context.Context, e *env, topic string, size int64) error {
	cl, err := e.KafkaClient(kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.MaxBufferedBytes(32<<20), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 6, 3, nil, topic); err != nil {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	value := make([]byte, ballastRecord)
	_, _ = rand.Read(value)
	var failed atomic.Pointer[error]
	for written := int64(0); written < size && failed.Load() == nil; written += ballastRecord {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, &err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if p := failed.Load(); p != nil {
		return fmt.Errorf("write %s: %w", topic, *p)
	}
	return nil
}

// catchUp is what a broker did as it fetched its replicas back onto an
// empty volume.
type catchUp struct {
	// took is from since until the broker was in every ISR of the topics,
	// with every ballast partition as large as on the reference broker.
	took time.Duration
	// bytes are the ballast's bytes on the broker's volume then.
	bytes int64
	// early are the ballast partitions whose ISR held the broker while it
	// held fewer of their bytes than the reference (KIP-903 says it may not
	// rejoin before it has caught up).
	early []string
}

// watchCatchUp polls the ISRs of ballast and topics, then broker id's log
// dirs, until it has caught up (see catchUp); ballast is written before
// and not after, so the reference broker ref's sizes are final. On timeout
// the error says what it was still missing.
func watchCatchUp(ctx context.Context, e *env, id, ref int32, since time.Time, ballast string, topics ...string) (catchUp, error) {
	var c catchUp
	cl, err := e.KafkaClient()
	if err != nil {
		return c, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	want, err := partitionBytes(ctx, adm, ref, ballast)
	if err != nil {
		return c, fmt.Errorf("ballast on reference broker %d: %w", ref, err)
	}
	var wantTotal int64
	for _, n := range want {
		wantTotal += n
	}
	if wantTotal == 0 {
		return c, fmt.Errorf("reference broker %d holds none of %s: nothing to compare the victim with", ref, ballast)
	}
	early := map[int32]bool{}
	err = InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			td, err := adm.ListTopics(ctx, append([]string{ballast}, topics...)...)
			if err != nil {
				return err
			}
			has, err := partitionBytes(ctx, adm, id, ballast)
			if err != nil {
				return fmt.Errorf("broker %d's log dirs: %w", id, err)
			}
			var missing []string
			var total int64
			for _, t := range td.Sorted() {
				if t.Err != nil {
					return fmt.Errorf("topic %s: %w", t.Topic, t.Err)
				}
				for _, p := range t.Partitions.Sorted() {
					in := slices.Contains(p.ISR, id)
					if slices.Contains(p.Replicas, id) && !in {
						missing = append(missing, fmt.Sprintf("%s/%d (ISR %v)", t.Topic, p.Partition, p.ISR))
					}
					if t.Topic != ballast {
						continue
					}
					got, w := has[p.Partition], want[p.Partition]
					total += got
					if got >= w {
						continue
					}
					missing = append(missing, fmt.Sprintf("%s/%d bytes (%d of %d)", t.Topic, p.Partition, got, w))
					if in && !early[p.Partition] {
						early[p.Partition] = true
						c.early = append(c.early, fmt.Sprintf("%s/%d at %s with %d of %d bytes", t.Topic, p.Partition, time.Since(since).Round(100*time.Millisecond), got, w))
					}
				}
			}
			if len(missing) > 0 {
				return fmt.Errorf("broker %d has not caught up: %s", id, strings.Join(missing, ", "))
			}
			c.took, c.bytes = time.Since(since), total
			return nil
		}).WithTimeout(catchUpTimeout).WithPolling(catchUpPoll).Should(Succeed())
	})
	return c, err
}

// partitionBytes is the size of each of topic's partitions in broker id's
// log dirs. (Every dir is described: a set naming the topic without
// partitions would describe none of them.)
func partitionBytes(ctx context.Context, adm *kadm.Client, id int32, topic string) (map[int32]int64, error) {
	dirs, err := adm.DescribeBrokerLogDirs(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for _, d := range dirs {
		if d.Err != nil {
			return nil, fmt.Errorf("log dir %s: %w", d.Dir, d.Err)
		}
		for p, dp := range d.Topics[topic] {
			out[p] += dp.Size
		}
	}
	return out, nil
}

// metaProperties reads the meta.properties of pod's log dir through
// pods/exec: node.id, cluster.id and directory.id, which a format writes.
func metaProperties(ctx context.Context, e *env, pod string) (map[string]string, error) {
	return e.MetaProperties(ctx, pod, "", dataDir)
}

// containerRestarted waits until pod's first container has restarted since
// it had restarts restarts, and runs again.
func containerRestarted(ctx context.Context, e *env, pod string, restarts int32) error {
	return InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			p, err := e.Kube.CoreV1().Pods(e.Namespace).Get(ctx, pod, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(p.Status.ContainerStatuses) == 0 {
				return errors.New("no container status yet")
			}
			c := p.Status.ContainerStatuses[0]
			if c.RestartCount <= restarts || c.State.Running == nil {
				return fmt.Errorf("container %s: restarts %d (was %d), running %t", c.Name, c.RestartCount, restarts, c.State.Running != nil)
			}
			return nil
		}).WithTimeout(restartTimeout).WithPolling(electionPoll).Should(Succeed(), pod+" restarted")
	})
}

// restartsOf is the restart count of pod's first container.
func restartsOf(ctx context.Context, e *env, pod string) (int32, error) {
	p, err := e.Kube.CoreV1().Pods(e.Namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	if len(p.Status.ContainerStatuses) == 0 {
		return 0, nil
	}
	return p.Status.ContainerStatuses[0].RestartCount, nil
}

// quorumLeaderAfter waits until the KRaft quorum has a leader at an epoch
// past epoch, other than node not (-1: any node), and returns what it saw
// and how long since that took.
func quorumLeaderAfter(ctx context.Context, e *env, epoch, not int32, since time.Time) (kafkaadmin.Quorum, time.Duration, error) {
	var q kafkaadmin.Quorum
	var took time.Duration
	err := InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			return e.WithKafka(func(cl *kafkaadmin.Client) error {
				rctx, cancel := context.WithTimeout(ctx, leaderTimeout)
				defer cancel()
				got := cl.DescribeQuorum(rctx)
				switch {
				case got.Err != nil:
					return got.Err
				case got.LeaderID < 0 || got.LeaderEpoch <= epoch:
					return fmt.Errorf("quorum leader %d at epoch %d, want a leader past epoch %d", got.LeaderID, got.LeaderEpoch, epoch)
				case got.LeaderID == not:
					return fmt.Errorf("node %d leads the quorum at epoch %d", got.LeaderID, got.LeaderEpoch)
				}
				q, took = got, time.Since(since)
				return nil
			})
		}).WithTimeout(electionTimeout).WithPolling(electionPoll).Should(Succeed(), fmt.Sprintf("a quorum leader past epoch %d", epoch))
	})
	return q, took, err
}

// quorumNow is the quorum as its leader describes it now.
func quorumNow(ctx context.Context, e *env) (kafkaadmin.Quorum, error) {
	var q kafkaadmin.Quorum
	err := e.WithKafka(func(cl *kafkaadmin.Client) error {
		q = cl.DescribeQuorum(ctx)
		return q.Err
	})
	return q, err
}

// quorumHighWatermark is the metadata log's high watermark, asked until
// answered: a question that lands on a frozen broker gets no answer.
func quorumHighWatermark(ctx context.Context, e *env) (int64, error) {
	var hw int64
	err := InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			qctx, cancel := context.WithTimeout(ctx, leaderTimeout)
			defer cancel()
			q, err := quorumNow(qctx, e)
			hw = q.HighWatermark
			return err
		}).WithTimeout(electionTimeout).WithPolling(electionPoll).Should(Succeed(), "the metadata log's high watermark")
	})
	return hw, err
}

// voterReached waits until voter id's metadata log ends at or past offset.
func voterReached(ctx context.Context, e *env, id int32, offset int64) error {
	return InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			qctx, cancel := context.WithTimeout(ctx, leaderTimeout)
			defer cancel()
			q, err := quorumNow(qctx, e)
			if err != nil {
				return err
			}
			for _, r := range q.Voters {
				if r.ID == id && r.LogEndOffset >= offset {
					return nil
				}
			}
			return fmt.Errorf("voter %d has not reached offset %d: voters %+v", id, offset, q.Voters)
		}).WithTimeout(restartTimeout).WithPolling(electionPoll).Should(Succeed(), fmt.Sprintf("voter %d at offset %d", id, offset))
	})
}

// sentinel is metadata and data a spec commits before its faults, to see
// whether they survive them: a topic with its partitions, one topic config
// and some records.
type sentinel struct {
	topic      string
	partitions int32
	// replicas places every partition on these brokers; nil: Kafka places
	// them, with the cluster's default replication factor.
	replicas []int32
	records  int
}

// sentinelConfig is the topic config a sentinel is created with; its value
// is no default, so it cannot survive by chance.
const sentinelConfig, sentinelValue = "retention.ms", "86400123"

// plant creates the topic and writes the records with acks=all. With via
// >= 0 the creation is sent to that broker (which forwards it to the
// controller), so that it cannot land on a frozen one; it is retried until
// createTimeout, and a topic that an earlier try created counts.
func (s sentinel) plant(ctx context.Context, e *env, via int32) error {
	cl, err := e.KafkaClient(kgo.DefaultProduceTopic(s.topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	t := newTopic(s.topic, s.partitions, s.replicas)
	c := kmsg.NewCreateTopicsRequestTopicConfig()
	c.Name, c.Value = sentinelConfig, kmsg.StringPtr(sentinelValue)
	t.Configs = append(t.Configs, c)
	req.Topics, req.TimeoutMillis = append(req.Topics, t), 10000
	err = InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			rctx, cancel := context.WithTimeout(ctx, createTry)
			defer cancel()
			var resp kmsg.Response
			var err error
			if via >= 0 {
				resp, err = cl.Broker(int(via)).Request(rctx, req)
			} else {
				resp, err = cl.Request(rctx, req)
			}
			if err != nil {
				return err
			}
			err = kerr.ErrorForCode(resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode)
			if errors.Is(err, kerr.TopicAlreadyExists) {
				return nil
			}
			return err
		}).WithTimeout(createTimeout).WithPolling(time.Second).Should(Succeed(), "topic "+s.topic+" created")
	})
	if err != nil {
		return fmt.Errorf("create %s: %w", s.topic, err)
	}
	var rs []*kgo.Record
	for i := range s.records {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "sentinel-%d", i)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("write %s: %w", s.topic, err)
	}
	return nil
}

// problems says what of the sentinel is gone: the topic, partitions, the
// config, records.
func (s sentinel) problems(ctx context.Context, e *env) []string {
	cl, err := e.KafkaClient(kgo.ConsumeTopics(s.topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return []string{err.Error()}
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	td, err := adm.ListTopics(ctx, s.topic)
	if err != nil {
		return []string{fmt.Sprintf("topic %s: metadata: %v", s.topic, err)}
	}
	t, ok := td[s.topic]
	if !ok || t.Err != nil {
		return []string{fmt.Sprintf("topic %s, created and written with acks=all before the faults, is gone: %v", s.topic, t.Err)}
	}
	var p []string
	if got := int32(len(t.Partitions)); got != s.partitions {
		p = append(p, fmt.Sprintf("topic %s: %d partitions, want %d", s.topic, got, s.partitions))
	}
	rc, err := adm.DescribeTopicConfigs(ctx, s.topic)
	switch v, cerr := rc.On(s.topic, nil); {
	case err != nil || cerr != nil:
		p = append(p, fmt.Sprintf("topic %s: configs: %v", s.topic, errors.Join(err, cerr)))
	default:
		if got := configValue(v.Configs, sentinelConfig); got != sentinelValue {
			p = append(p, fmt.Sprintf("topic %s: %s=%s, want %s", s.topic, sentinelConfig, got, sentinelValue))
		}
	}
	rctx, cancel := context.WithTimeout(ctx, sentinelReadTime)
	defer cancel()
	read := 0
	for read < s.records && rctx.Err() == nil {
		cl.PollFetches(rctx).EachRecord(func(*kgo.Record) { read++ })
	}
	if read < s.records {
		p = append(p, fmt.Sprintf("topic %s: read %d of the %d records written with acks=all before the faults", s.topic, read, s.records))
	}
	return p
}

func configValue(cs []kadm.Config, key string) string {
	for _, c := range cs {
		if c.Key == key {
			return c.MaybeValue()
		}
	}
	return "(none)"
}
