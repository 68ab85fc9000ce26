package report

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// fixturePath is the run report the HTML tests render.
const fixturePath = "testdata/report.json"

// The timeline of a fixture run, as scenario.Run tells it.
const (
	fixtureRate       = 1000
	fixturePartitions = 3
	fixtureBaseline   = 15 * time.Second
	fixtureHold       = 10 * time.Second
	fixtureRecover    = 5 * time.Second
	fixtureAfter      = 15 * time.Second
	fixtureStall      = 4 * time.Second // how long the victim answers no produce
)

// TestWriteFixture rewrites testdata/report.json from real steady-state
// runs against kfake: a broker that stops answering produce requests for a
// while (pod kill, passed), a broker that acks and drops (negative spec,
// caught), and a spec that failed before its load began. The specs'
// faults, checks and recovery times and the run's environment are the
// local cluster's, as the suite records them there. It takes about 90 s,
// so it runs only with KAFKACHAOS_WRITE_FIXTURE=1:
//
//	KAFKACHAOS_WRITE_FIXTURE=1 go test -run WriteFixture ./report/
func TestWriteFixture(t *testing.T) {
	if os.Getenv("KAFKACHAOS_WRITE_FIXTURE") != "1" {
		t.Skip("set KAFKACHAOS_WRITE_FIXTURE=1 to rewrite " + fixturePath)
	}
	h := steadystate.Hypothesis{
		All:    steadystate.Bounds{MaxUnavailable: 10 * time.Second, MaxP99Ack: 5 * time.Second},
		Phases: map[steadystate.Phase]steadystate.Bounds{steadystate.PhaseAfter: {MinThroughputRatio: 0.9}},
	}
	// Throughput is back at the after phase's bound, as in scenario.Run.
	backRatio := h.Phases[steadystate.PhaseAfter].MinThroughputRatio

	podKill := Spec{
		Spec:    "A broker pod is force-deleted loses no acknowledged record, and the leader of partition 0 comes back with its ID and its volume",
		Fault:   "force-delete pod kafka/kafka-1",
		Victims: []int32{1},
		Passed:  true,
		Recovery: Recovery{
			ToPodsReady: Reached(3412 * time.Millisecond), ToHealthy: Reached(4871 * time.Millisecond), InjectToHealthy: Reached(14903 * time.Millisecond),
		},
	}
	rep, recoveredAt := fixtureRun(t, h, false, stallProduce)
	podKill.SteadyState = rep
	podKill.Recovery.ThroughputBack = ThroughputBack(rep, recoveredAt, backRatio)
	podKill.Add(CheckAudit)
	podKill.Add(CheckPodsBack)
	podKill.Add(CheckHealth)
	podKill.Add(CheckRecords)
	podKill.Add(CheckBounds, violations(rep)...)
	podKill.Add(CheckIdentity)
	podKill.Add(CheckLogDirs)
	podKill.Add(CheckCluster)

	negative := Spec{
		Spec:           "The suite against an unsafe Kafka fails a broker pod kill, naming the broker without a persistent volume, the missing PDB and the low replication",
		Fault:          "force-delete pod kafka-unsafe/kafka-1",
		Victims:        []int32{1},
		Passed:         true,
		ExpectFailures: true,
		Recovery: Recovery{
			ToPodsReady: Reached(2208 * time.Millisecond), ToHealthy: Reached(6044 * time.Millisecond), InjectToHealthy: Reached(16101 * time.Millisecond),
		},
	}
	// A broker that acks and drops only loses records silently without
	// idempotence (an idempotent producer would see the sequence gap).
	rep, recoveredAt = fixtureRun(t, h, true, dropProduce)
	negative.SteadyState = rep
	negative.Recovery.ThroughputBack = ThroughputBack(rep, recoveredAt, backRatio)
	negative.Add(CheckAudit,
		"broker kafka-1: data dir /var/lib/kafka/data is an emptyDir, not a PersistentVolumeClaim",
		"no PodDisruptionBudget selects the broker pods of kafka-unsafe",
		"default.replication.factor=1: a single broker's loss loses partitions")
	negative.Add(CheckPodsBack)
	negative.Add(CheckHealth)
	negative.Add(CheckRecords, recordProblems(rep)...)
	negative.Add(CheckBounds, violations(rep)...)
	negative.Add(CheckIdentity,
		"broker 1: no persistent volume (emptyDir): its log was lost with the pod")
	negative.Add(CheckCluster)

	early := Spec{
		Spec:          "A broker pod is deleted gracefully loses no acknowledged record, and the broker comes back with its ID and its volume",
		FailureReason: "Kafka was not healthy before the fault: the fault would be charged with an earlier one's damage\nUnexpected error:\n    partition kafkachaos-pod-delete/2: ISR [0 2] of replicas [0 1 2]",
	}
	early.Add(CheckAudit)

	env := &Environment{
		RunID: "20261204T180000Z-6b616663", Kafkachaos: ReadBuild(), Kubernetes: "v1.37.2",
		Flavor: "statefulset", Layout: "combined", Namespace: "kafka",
		Load: Load{Rate: fixtureRate, Partitions: fixturePartitions, RecordSize: steadystate.DefaultRecordSize, Producers: 1,
			Acks: steadystate.AcksAll, Idempotent: true},
	}
	for id := range int32(3) {
		env.Nodes = append(env.Nodes, Node{ID: id, Pod: fmt.Sprintf("kafka-%d", id), Image: "apache/kafka:4.4.0", Kafka: "v4.4"})
	}
	if err := Write(fixturePath, Run{Environment: env, Specs: []Spec{podKill, negative, early}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", fixturePath)
}

// TestFixtureNamesChecksAsTheSuite: the fixture's checks carry the names
// the suite gives them (checks.go), so the page the tests render is the
// page of a real run. After a rename, rewrite the fixture (TestWriteFixture).
func TestFixtureNamesChecksAsTheSuite(t *testing.T) {
	var names []CheckName
	for _, s := range loadFixture(t).Specs {
		for _, c := range s.Checks {
			names = append(names, c.Name)
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s holds no check", fixturePath)
	}
	for _, n := range names {
		if !slices.Contains(Checks(), n) {
			t.Errorf("%s names check %q, which the suite does not make: rewrite it (KAFKACHAOS_WRITE_FIXTURE=1)", fixturePath, n)
		}
	}
}

// fault misbehaves the fake cluster's produce handling on the leader of
// partition 0 while until has not passed.
type fault func(c *kfake.Cluster, victim int32, until time.Time)

// stallProduce holds the victim's produce requests until the stall is over,
// as a killed leader does until its partitions have a new one.
func stallProduce(c *kfake.Cluster, victim int32, until time.Time) {
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if c.CurrentNode() == victim && time.Now().Before(until) {
			c.SleepControl(func() { time.Sleep(time.Until(until)) })
		}
		return nil, nil, false
	})
}

// dropProduce acks the victim's produce requests without storing them, as a
// broker that restarts with an empty disk has lost what it acked.
func dropProduce(c *kfake.Cluster, victim int32, until time.Time) {
	c.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		if c.CurrentNode() != victim || time.Now().After(until) {
			return nil, nil, false
		}
		c.KeepControl()
		req := kr.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

// fixtureRun runs the load against a fresh fake with the suite's phases,
// applying f for fixtureStall from the start of the fault phase. It returns
// the report and when the recovery phase began.
func fixtureRun(t *testing.T, h steadystate.Hypothesis, noIdempotence bool, f fault) (*steadystate.Report, time.Time) {
	t.Helper()
	const topic = "kafkachaos-pod-kill"
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := steadystate.New(steadystate.Config{
		Bootstrap:     c.ListenAddrs(),
		Topic:         topic,
		Rate:          fixtureRate,
		Partitions:    fixturePartitions,
		NoIdempotence: noIdempotence,
		DrainTimeout:  30 * time.Second,
		Hypothesis:    &h,
		RunID:         0x6b6166636861,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var recoveredAt time.Time
	go func() {
		time.Sleep(fixtureBaseline)
		r.Mark(steadystate.PhaseFault)
		f(c, c.LeaderFor(topic, 0), time.Now().Add(fixtureStall))
		time.Sleep(fixtureHold)
		recoveredAt = time.Now()
		r.Mark(steadystate.PhaseRecovery)
		time.Sleep(fixtureRecover)
		r.Mark(steadystate.PhaseAfter)
		time.Sleep(fixtureAfter)
		r.Stop()
	}()
	rep, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; %+v", rep.SummaryLine, rep.Records)
	return rep, recoveredAt
}

func violations(rep *steadystate.Report) []string {
	var out []string
	for _, v := range rep.Violations {
		out = append(out, v.String())
	}
	return out
}

func recordProblems(rep *steadystate.Report) []string {
	var out []string
	if n := rep.Records.Lost; n > 0 {
		out = append(out, fmt.Sprintf("%d acknowledged records lost", n))
	}
	return out
}
