package suites

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/loadagent"
	"github.com/kafkachaos/kafkachaos/manifests"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

func TestConfigLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kubeconfig := write("kubeconfig", "apiVersion: v1\nkind: Config\n")
	good := write("good.yaml", "steadyState: {rate: 500}\ntiming: {hold: 30s}\nbounds: {maxUnavailable: 5s}\n")
	existing := write("existing.yaml", "target:\n  kubeconfig: "+kubeconfig+"\n  namespace: prod-kafka\n  bootstrap: [kafka:9092]\n")
	tests := []struct {
		name    string
		flags   flagValues
		check   func(t *testing.T, c Config)
		wantErr string
	}{
		{name: "defaults run on the local cluster", check: func(t *testing.T, c Config) {
			if !c.Local() || c.Target.Namespace != "kafka" || c.Target.StatefulSet != "kafka" || c.SteadyState.Rate != DefaultRate ||
				c.Timing.Hold.Duration != DefaultHold || c.Timing.Soak.Duration != DefaultSoak || c.Bounds.MaxUnavailable.Duration != 0 ||
				c.Bounds.GracefulP99AckRatio != DefaultGracefulP99AckRatio || c.Bounds.GracefulP99AckFloor.Duration != DefaultGracefulP99AckFloor {
				t.Errorf("defaults: %+v", c)
			}
		}},
		{name: "file values", flags: flagValues{config: good}, check: func(t *testing.T, c Config) {
			if c.SteadyState.Rate != 500 || c.Timing.Hold.Duration != 30*time.Second || c.Bounds.MaxUnavailable.Duration != 5*time.Second {
				t.Errorf("file: %+v", c)
			}
		}},
		{name: "flags win over the file", flags: flagValues{config: good, rate: 2000, soak: 7 * time.Minute, dryRun: true, allowDataLoss: true}, check: func(t *testing.T, c Config) {
			if c.SteadyState.Rate != 2000 || !c.DryRun || !c.Target.AllowDataLoss || c.Timing.Soak.Duration != 7*time.Minute {
				t.Errorf("flags: %+v", c)
			}
		}},
		{name: "your own Kafka: a kept cluster and a namespace no layout uses", flags: flagValues{stateDir: dir, namespace: "events"}, check: func(t *testing.T, c Config) {
			if !c.UsersKafka() || c.Target.Layout != LayoutNone || c.Target.Namespace != "events" || c.Target.StatefulSet != "" || len(c.Target.Bootstrap) != 0 {
				t.Errorf("your own Kafka: %+v", c.Target)
			}
			if l, err := c.SpecLayout(); err != nil || l.Name != "combined" {
				t.Errorf("the specs' own Kafka: %v %v, want the combined layout", l.Name, err)
			}
		}},
		{name: "a layout's namespace on a kept cluster deploys the layout", flags: flagValues{stateDir: dir, namespace: "kafka"}, check: func(t *testing.T, c Config) {
			if c.UsersKafka() || c.Target.Layout != "combined" {
				t.Errorf("layout: %+v", c.Target)
			}
		}},
		{name: "a layout's other namespace on a kept cluster deploys that layout", flags: flagValues{stateDir: dir, namespace: "kafka-split"}, check: func(t *testing.T, c Config) {
			if c.Target.Layout != "separate-controllers" || c.Target.StatefulSet != "kafka-broker" {
				t.Errorf("layout: %+v", c.Target)
			}
		}},
		{name: "layout none needs a kept cluster", flags: flagValues{layout: LayoutNone, namespace: "events"}, wantErr: "target.stateDir"},
		{name: "layout none needs a namespace", flags: flagValues{layout: LayoutNone, stateDir: dir}, wantErr: "target.namespace"},
		{name: "an unknown layout names none", flags: flagValues{layout: "raft-on-mars"}, wantErr: "or none"},
		{name: "zookeeper layout", flags: flagValues{layout: "zookeeper"}, check: func(t *testing.T, c Config) {
			if c.Target.Namespace != "kafka-zk" || c.Target.StatefulSet != "kafka" || c.Target.KafkaVersion != "3.9.2" {
				t.Errorf("layout: %+v", c.Target)
			}
		}},
		{name: "zookeeper layout on Kafka 4", flags: flagValues{layout: "zookeeper", kafkaVersion: "4.4.0"}, wantErr: "which Kafka 4 removed"},
		{name: "separate controllers layout", flags: flagValues{layout: "separate-controllers"}, check: func(t *testing.T, c Config) {
			if c.Target.Namespace != "kafka-split" || c.Target.StatefulSet != "kafka-broker" {
				t.Errorf("layout: %+v", c.Target)
			}
		}},
		{name: "existing cluster", flags: flagValues{config: existing, bootstrap: "a:9092, b:9092"}, check: func(t *testing.T, c Config) {
			if c.Local() || c.Target.Namespace != "prod-kafka" || strings.Join(c.Target.Bootstrap, ",") != "a:9092,b:9092" {
				t.Errorf("existing: %+v", c.Target)
			}
		}},
		{name: "security from the file and a properties file", flags: flagValues{
			config:        write("sec.yaml", "target:\n  kubeconfig: "+kubeconfig+"\n  namespace: k\n  bootstrap: [a:9093]\n  security: {securityProtocol: SASL_SSL, saslMechanism: SCRAM-SHA-512}\n"),
			commandConfig: write("client.properties", "sasl.jaas.config=x required username=\"alice\" password=\"p\";\n"),
		}, check: func(t *testing.T, c Config) {
			r, err := c.Target.Security.Resolve()
			if err != nil || r.TLS == nil || r.SASL.Mechanism != "SCRAM-SHA-512" || r.SASL.Username != "alice" {
				t.Errorf("security %+v: %+v, %v", c.Target.Security, r.SASL, err)
			}
		}},
		{name: "security on the local cluster", flags: flagValues{commandConfig: write("ssl.properties", "security.protocol=SSL\n")}, wantErr: "PLAINTEXT"},
		{name: "bad security", flags: flagValues{config: write("badsec.yaml", "target:\n  kubeconfig: "+kubeconfig+"\n  namespace: k\n  bootstrap: [a:9093]\n  security: {securityProtocol: TLS}\n")}, wantErr: "target.security"},
		{name: "agents", flags: flagValues{config: write("agents.yaml", "steadyState: {agents: 3}\n")}, check: func(t *testing.T, c Config) {
			if c.SteadyState.Agents != 3 {
				t.Errorf("agents %d", c.SteadyState.Agents)
			}
		}},
		{name: "too many agents", flags: flagValues{config: write("agents101.yaml", "steadyState: {agents: 101}\n")}, wantErr: "steadyState.agents"},
		{name: "agents with TLS", flags: flagValues{config: write("agentsTLS.yaml", "target:\n  kubeconfig: "+kubeconfig+"\n  namespace: k\n  bootstrap: [a:9093]\n  security: {securityProtocol: SSL}\nsteadyState: {agents: 2}\n")}, wantErr: "PLAINTEXT brokers only"},
		{name: "missing file", flags: flagValues{config: filepath.Join(dir, "nope.yaml")}, wantErr: "nope.yaml"},
		{name: "unknown field", flags: flagValues{config: write("typo.yaml", "steadyStat: {rate: 5}\n")}, wantErr: "steadyStat"},
		{name: "unknown layout", flags: flagValues{layout: "kraft2"}, wantErr: "target.layout"},
		{name: "versions default to the manifest's", check: func(t *testing.T, c Config) {
			if c.Target.KafkaVersion != kafkadist.DefaultVersion || c.Upgrade.From != DefaultUpgradeFrom || c.Upgrade.To != kafkadist.DefaultVersion {
				t.Errorf("versions: %s, upgrade %+v", c.Target.KafkaVersion, c.Upgrade)
			}
		}},
		{name: "Kafka version flag", flags: flagValues{kafkaVersion: "4.1.0", upgradeFrom: "3.9.2"}, check: func(t *testing.T, c Config) {
			if c.Target.KafkaVersion != "4.1.0" || c.Upgrade.From != "3.9.2" || c.Upgrade.To != "4.1.0" {
				t.Errorf("versions: %s, upgrade %+v", c.Target.KafkaVersion, c.Upgrade)
			}
		}},
		{name: "unknown Kafka line", flags: flagValues{kafkaVersion: "3.6.0"}, wantErr: "target.kafkaVersion"},
		{name: "upgrade backwards", flags: flagValues{kafkaVersion: "3.9.2", upgradeFrom: "4.3.2"}, wantErr: "upgrade.from 4.3.2 is newer than upgrade.to 3.9.2"},
		{name: "an older target with the default upgrade.from", flags: flagValues{kafkaVersion: "3.9.2"}, check: func(t *testing.T, c Config) {
			if c.Upgrade.From != DefaultUpgradeFrom || c.Upgrade.To != "3.9.2" {
				t.Errorf("upgrade %+v", c.Upgrade)
			}
		}},
		{name: "not a Kafka version", flags: flagValues{upgradeFrom: "latest"}, wantErr: "upgrade.from"},
		{name: "Kafka version on an existing cluster", flags: flagValues{config: existing, kafkaVersion: "4.4.0"}, wantErr: "need the local cluster"},
		{name: "unknown flavor", flags: flagValues{flavor: "confluent"}, wantErr: "target.flavor"},
		{name: "kubeconfig without namespace", flags: flagValues{kubeconfig: kubeconfig, bootstrap: "a:9092"}, wantErr: "target.namespace is required"},
		{name: "in-cluster", flags: flagValues{inCluster: true, namespace: "k", bootstrap: "a:9092"}, check: func(t *testing.T, c Config) {
			if c.Local() || !c.Target.InCluster {
				t.Errorf("in-cluster: %+v", c.Target)
			}
		}},
		{name: "in-cluster and a kubeconfig", flags: flagValues{inCluster: true, kubeconfig: kubeconfig, namespace: "k", bootstrap: "a:1"}, wantErr: "exclude each other"},
		{name: "in-cluster without bootstrap", flags: flagValues{inCluster: true, namespace: "k"}, wantErr: "target.bootstrap is required"},
		{name: "kubeconfig without bootstrap", flags: flagValues{kubeconfig: kubeconfig, namespace: "k"}, wantErr: "target.bootstrap is required"},
		{name: "missing kubeconfig", flags: flagValues{kubeconfig: filepath.Join(dir, "none"), namespace: "k", bootstrap: "a:1"}, wantErr: "target.kubeconfig"},
		{name: "state dir with a kubeconfig", flags: flagValues{kubeconfig: kubeconfig, namespace: "k", bootstrap: "a:1", stateDir: dir}, wantErr: "exclude each other"},
		{name: "unbounded rate from the suite's process", flags: flagValues{rate: -1}, wantErr: "needs steadyState.agents"},
		{name: "negative rate", flags: flagValues{rate: -3}, wantErr: "want records/s > 0"},
		{name: "unbounded rate from agents", flags: flagValues{config: write("fast.yaml", "steadyState: {rate: -1, agents: 3}\n")}, check: func(t *testing.T, c Config) {
			if c.SteadyState.Rate != steadystate.RateUnlimited || c.SteadyState.Agents != 3 {
				t.Errorf("steadyState %+v", c.SteadyState)
			}
		}},
		{name: "bootstrap with a bad port", flags: flagValues{config: existing, bootstrap: "kafka:9092,kafka:70000"}, wantErr: "kafka:70000"},
		{name: "negative partitions", flags: flagValues{config: write("negp.yaml", "steadyState: {partitions: -3}\n")}, wantErr: "steadyState: invalid steady-state config: partitions -3"},
		{name: "too many partitions", flags: flagValues{config: write("hugep.yaml", "steadyState: {partitions: 100000000}\n")}, wantErr: "partitions 100000000"},
		{name: "record too small", flags: flagValues{config: write("small.yaml", "steadyState: {recordSize: 10}\n")}, wantErr: "record size 10"},
		{name: "negative producers", flags: flagValues{config: write("negprod.yaml", "steadyState: {producers: -2}\n")}, wantErr: "producers -2"},
		{name: "negative soak", flags: flagValues{soak: -time.Minute}, wantErr: "timing.soak"},
		{name: "negative hold", flags: flagValues{config: write("neg.yaml", "timing: {hold: -1s}\n")}, wantErr: "timing.hold"},
		{name: "negative request timeout", flags: flagValues{config: write("negrt.yaml", "steadyState: {requestTimeout: -1s}\n")}, wantErr: "steadyState.requestTimeout"},
		{name: "ratio above 1", flags: flagValues{config: write("ratio.yaml", "bounds: {minThroughputRatioAfter: 1.5}\n")}, wantErr: "minThroughputRatioAfter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.flags.load()
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want ErrBadConfig mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

// TestSuiteJob: manifests/rbac/suite-job.yaml runs the suite with flags it
// has, as the ServiceAccount of manifests/rbac, from the project's image.
func TestSuiteJob(t *testing.T) {
	raw, err := os.ReadFile("../manifests/rbac/suite-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.Decode(raw)
	if err != nil || len(objs) != 2 || objs[0].GetKind() != "Namespace" || objs[1].GetKind() != "Job" {
		t.Fatalf("want a Namespace and a Job, got %d objects, %v", len(objs), err)
	}
	var job batchv1.Job
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[1].Object, &job); err != nil {
		t.Fatal(err)
	}
	if job.Namespace != objs[0].GetName() {
		t.Errorf("the Job runs in %q, not in its own namespace %q", job.Namespace, objs[0].GetName())
	}
	pod := job.Spec.Template.Spec
	if pod.ServiceAccountName != manifests.ServiceAccount {
		t.Errorf("serviceAccountName %q, want %q", pod.ServiceAccountName, manifests.ServiceAccount)
	}
	c := pod.Containers[0]
	if c.Image != loadagent.Image {
		t.Errorf("image %q, want %q", c.Image, loadagent.Image)
	}
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	f := registerFlags(fs)
	var ours []string
	for _, a := range c.Args {
		if strings.HasPrefix(a, "-kafkachaos.") {
			ours = append(ours, a)
		}
	}
	if err := fs.Parse(ours); err != nil {
		t.Fatalf("the Job's suite flags: %v", err)
	}
	cfg, err := f.load()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Target.InCluster || cfg.Target.Namespace == job.Namespace {
		t.Errorf("target %+v: want in-cluster, against a namespace other than the Job's %s (a drain would evict the suite)", cfg.Target, job.Namespace)
	}
}
