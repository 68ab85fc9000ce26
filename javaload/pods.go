package javaload

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// The image's tools and where the producer's settings are mounted.
const (
	producerScript = "/opt/kafka/bin/kafka-verifiable-producer.sh"
	consumerScript = "/opt/kafka/bin/kafka-verifiable-consumer.sh"
	shareScript    = "/opt/kafka/bin/kafka-verifiable-share-consumer.sh"
	configDir      = "/etc/kafkachaos-java"
	producerConfig = configDir + "/producer.properties"
)

// Labels of every pod and ConfigMap of a run: the run's name, and the
// pod's role.
const (
	LabelName = "app.kubernetes.io/name"
	LabelRun  = "kafkachaos.io/java-run"
	LabelRole = "kafkachaos.io/java-role"
	appName   = "kafkachaos-java"
)

// Share, as a Spec's Protocol, makes its group a share group (KIP-932,
// Kafka 4.2 and later) of VerifiableShareConsumers.
const Share = javaclients.ShareProtocol

// Spec is one run of the Java clients: a producer at Rate records/s into
// Topic, and a group of Members consumers on Protocol (classic, consumer,
// or Share).
type Spec struct {
	Namespace string
	// Name prefixes the run's objects and tells runs apart (LabelRun).
	Name      string
	Image     string // apache/kafka:<version>
	Bootstrap []string
	Topic     string
	Group     string
	Protocol  string // classic or consumer (KIP-848), or Share
	Members   int
	Rate      int
	// Deadline bounds the run's pods, so that the clients of a suite that
	// died do not load Kafka for ever: the producer stops after
	// --max-messages (Rate × Deadline), and a kubelet that enforces
	// activeDeadlineSeconds ends every pod (the local cluster's node agent
	// does not: its idle consumers go with the next run's cleanup, or
	// with the cluster).
	Deadline time.Duration
}

// Validate says what is missing or wrong in s.
func (s Spec) Validate() error {
	var bad []string
	for _, f := range []struct{ name, v string }{{"namespace", s.Namespace}, {"name", s.Name}, {"image", s.Image}, {"topic", s.Topic}, {"group", s.Group}} {
		if f.v == "" {
			bad = append(bad, f.name+" is empty")
		}
	}
	if len(s.Bootstrap) == 0 {
		bad = append(bad, "no bootstrap servers")
	}
	if s.Protocol != "classic" && s.Protocol != "consumer" && s.Protocol != Share {
		bad = append(bad, fmt.Sprintf("group protocol %q: want classic, consumer or %s", s.Protocol, Share))
	}
	if s.Deadline < time.Second {
		bad = append(bad, fmt.Sprintf("deadline %s: want at least 1s", s.Deadline))
	}
	if s.Members < 1 || s.Rate < 1 {
		bad = append(bad, fmt.Sprintf("members %d and rate %d must be at least 1", s.Members, s.Rate))
	}
	if len(bad) > 0 {
		return fmt.Errorf("javaload: %s", strings.Join(bad, "; "))
	}
	return nil
}

// ConfigMap holds the producer's settings.
func (s Spec) ConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name + "-producer", Namespace: s.Namespace, Labels: s.labels("config")},
		Data:       map[string]string{"producer.properties": javaclients.ProducerSettings},
	}
}

// ProducerName is the producer pod of an incarnation: a producer that is
// replaced gets a new pod, never a restart in place.
func (s Spec) ProducerName(incarnation int) string {
	return fmt.Sprintf("%s-producer-%d", s.Name, incarnation)
}

// ConsumerName is the pod of member i's incarnation (from 0): a member
// that is replaced gets a new pod, and joins the group as a new member.
func (s Spec) ConsumerName(i, incarnation int) string {
	return fmt.Sprintf("%s-consumer-%d-%d", s.Name, i, incarnation)
}

// ProducerPod is the producer of an incarnation: its values are
// "<incarnation>.<n>" (--value-prefix), since the tool counts from 0 again
// in each process, and it sends until it is stopped. Its records have
// keys (0 to javaclients.ProducerKeys-1, over and over), as applications key theirs,
// so that every partition is written all the time and a partition's wait
// between acknowledgements is its stall: without keys the Java client's
// sticky partitioner fills one partition's batch at a time.
func (s Spec) ProducerPod(incarnation int) *corev1.Pod {
	args := javaclients.ProducerArgs(s.Bootstrap, s.Topic, s.Rate, fmt.Sprint(incarnation), producerConfig)
	p := s.pod(s.ProducerName(incarnation), "producer", producerScript,
		append(args, "--max-messages", fmt.Sprint(int64(s.Rate)*int64(s.Deadline.Seconds())))...)
	p.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: s.ConfigMap().Name}},
	}}}
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: configDir, ReadOnly: true}}
	return p
}

// ConsumerPod is member i's incarnation: --verbose, so that it reports
// each record and not per-partition summaries, committing after each poll
// (the tool's default), on the Java client's other defaults. A share
// group's member acknowledges implicitly (the tool's and the client's
// default: each poll accepts the records of the one before), and sets the
// group's share.auto.offset.reset to earliest before it subscribes, so
// that records written before its first fetch are the group's too.
func (s Spec) ConsumerPod(i, incarnation int) *corev1.Pod {
	script := consumerScript
	if s.Protocol == Share {
		script = shareScript
	}
	return s.pod(s.ConsumerName(i, incarnation), "consumer", script, javaclients.ConsumerArgs(s.Bootstrap, s.Topic, s.Group, s.Protocol)...)
}

func (s Spec) labels(role string) map[string]string {
	return map[string]string{LabelName: appName, LabelRun: s.Name, LabelRole: role}
}

// pod runs one tool, never restarted in place (what a process printed
// belongs to it alone), with 30 s to close its client on a delete. Its
// containers share one process namespace, so that the tool's JVM is not
// PID 1, which a pause (SIGSTOP from inside the pod) cannot stop.
func (s Spec) pod(name, role, script string, args ...string) *corev1.Pod {
	grace, deadline := int64(30), int64(s.Deadline.Seconds())
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: s.labels(role)},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			ShareProcessNamespace:         new(true),
			TerminationGracePeriodSeconds: &grace,
			ActiveDeadlineSeconds:         &deadline,
			AutomountServiceAccountToken:  new(false), // the tools talk to Kafka only
			Containers: []corev1.Container{{
				Name: role, Image: s.Image, Command: []string{script}, Args: args,
				Env: []corev1.EnvVar{{Name: "KAFKA_HEAP_OPTS", Value: "-Xmx256m"}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("384Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
				},
			}},
		},
	}
}
