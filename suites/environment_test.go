package suites

import (
	"cmp"
	"context"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// environmentEntryName names the report entry that carries the run's
// environment: BeforeSuite adds it, ReportAfterSuite writes it into
// report.json.
const environmentEntryName = "kafkachaos-environment"

// gitTimeout bounds the git calls that find the suite's revision.
const gitTimeout = 10 * time.Second

// recordEnvironment adds what the run runs against to its report, once
// Kafka is healthy: snap is the Kafka pods then. What cannot be read is
// left empty and said, never failed on.
func recordEnvironment(ctx context.Context, e *env, snap []brokers.Server) {
	By("recording the run's environment: Kubernetes and Kafka versions, the load's settings")
	AddReportEntry(environmentEntryName, environment(ctx, e, snap), ReportEntryVisibilityNever)
}

func environment(ctx context.Context, e *env, snap []brokers.Server) report.Environment {
	ss := e.cfg.SteadyState
	env := report.Environment{
		RunID: e.RunID, Kafkachaos: suiteBuild(ctx), Flavor: string(e.Flavor), Namespace: e.Namespace,
		// As the steady state runs it (scenario.StartSteadyState): acks=all, idempotent, the
		// steady state's defaults for what the config leaves out.
		Load: report.Load{
			Rate: ss.Rate, Partitions: cmp.Or(ss.Partitions, steadystate.DefaultPartitions),
			RecordSize: cmp.Or(ss.RecordSize, steadystate.DefaultRecordSize), Producers: cmp.Or(ss.Producers, 1),
			Agents: ss.Agents, Acks: steadystate.AcksAll, Idempotent: true,
		},
	}
	if d := ss.RequestTimeout.Duration; d > 0 {
		env.Load.RequestTimeout = d.String()
	}
	if e.cfg.Local() {
		env.Layout = e.cfg.Target.Layout
	}
	if v, err := discovery.ToServerVersionInterfaceWithContext(e.Kube.Discovery()).ServerVersionWithContext(ctx); err != nil {
		GinkgoWriter.Printf("the Kubernetes version is unknown: %v\n", err)
	} else {
		env.Kubernetes = v.GitVersion
	}
	var versions map[int32]string
	err := e.WithKafka(func(cl *kafkaadmin.Client) (err error) {
		versions, err = cl.KafkaVersions(ctx)
		return err
	})
	if err != nil {
		GinkgoWriter.Printf("the Kafka versions are unknown: %v\n", err)
	}
	for _, b := range snap {
		n := report.Node{ID: b.ID, Pod: b.Pod, Kafka: versions[b.ID]}
		if p, err := e.Kube.CoreV1().Pods(e.Namespace).Get(ctx, b.Pod, metav1.GetOptions{}); err != nil {
			GinkgoWriter.Printf("the image of %s is unknown: %v\n", b.Pod, err)
		} else {
			n.Image = brokers.KafkaImage(p)
		}
		env.Nodes = append(env.Nodes, n)
	}
	return env
}

// suiteBuild is the suite's build. A test binary carries no VCS stamp, so
// its revision comes from git, in the checkout the suite runs in; it stays
// empty where there is none (the suite's image).
func suiteBuild(ctx context.Context) report.Build {
	b := report.ReadBuild()
	if b.Revision != "" {
		return b
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	rev, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		GinkgoWriter.Printf("the suite's revision is unknown: git rev-parse: %v\n", err)
		return b
	}
	b.Revision = strings.TrimSpace(string(rev))
	// Modified as Go's vcs.modified: any change, untracked files too.
	status, err := exec.CommandContext(ctx, "git", "status", "--porcelain").Output()
	b.Modified = err == nil && len(strings.TrimSpace(string(status))) > 0
	return b
}
