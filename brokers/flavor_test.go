package brokers

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

const testNS = "kafka"

// podOpt changes a test pod.
type podOpt func(*corev1.Pod)

// pod returns a pod in testNS with container "kafka" (image apache/kafka)
// changed by opts.
func pod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: types.UID("uid-" + name), Labels: map[string]string{}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "kafka", Image: "apache/kafka:4.4.0"}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func withLabels(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

// withStartScript makes the pod's first container run
// kafka-server-start.sh with args.
func withStartScript(args ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Command = []string{"/opt/kafka/bin/kafka-server-start.sh"}
		p.Spec.Containers[0].Args = args
	}
}

func withoutLabel(k string) podOpt { return func(p *corev1.Pod) { delete(p.Labels, k) } }

// withEnv appends literal name=value pairs to the kafka container's env.
func withEnv(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		for i := 0; i+1 < len(kv); i += 2 {
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
		}
	}
}

// withFieldEnv appends an env entry from the downward API.
func withFieldEnv(name, fieldPath string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: name,
			ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: fieldPath}}})
	}
}

// withVolume adds volume name from src, mounted in the kafka container at
// path unless path is "".
func withVolume(name, path string, src corev1.VolumeSource) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: src})
		if path != "" {
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: name, MountPath: path})
		}
	}
}

func claimSrc(claim string) corev1.VolumeSource {
	return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}
}

func emptyDirSrc() corev1.VolumeSource {
	return corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
}

func configMapSrc() corev1.VolumeSource {
	return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}
}

func ready(p *corev1.Pod) {
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
}

func ownedBy(kind, name string) podOpt {
	return func(p *corev1.Pod) {
		p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name})
	}
}

// stsPod is pod index of a StatefulSet like manifests/kafka/kafka.yaml:
// KAFKA_NODE_ID from the pod-index label, and roles.
func stsPod(set string, index, roles string, opts ...podOpt) *corev1.Pod {
	name := set + "-" + index
	base := []podOpt{
		withLabels("app.kubernetes.io/name", set, labelPodIndex, index, labelSTSPodName, name),
		ownedBy("StatefulSet", set),
		withFieldEnv("POD_NAME", "metadata.name"),
		withFieldEnv("KAFKA_NODE_ID", "metadata.labels['apps.kubernetes.io/pod-index']"),
		withEnv("KAFKA_PROCESS_ROLES", roles, "KAFKA_LOG_DIRS", "/var/lib/kafka/data"),
		withVolume("data", "/var/lib/kafka/data", claimSrc("data-"+name)),
	}
	return pod(name, append(base, opts...)...)
}

// splitControllerPod is a controller of manifests/kafka/separate-controllers:
// node ID 10<pod index>.
func splitControllerPod(index string) *corev1.Pod {
	name := "kafka-controller-" + index
	return pod(name,
		withLabels("app.kubernetes.io/name", "kafka-controller", labelPodIndex, index),
		ownedBy("StatefulSet", "kafka-controller"),
		withFieldEnv("POD_INDEX", "metadata.labels['apps.kubernetes.io/pod-index']"),
		withEnv("KAFKA_NODE_ID", "10$(POD_INDEX)", "KAFKA_PROCESS_ROLES", "controller", "KAFKA_LOG_DIRS", "/var/lib/kafka/data"),
		withVolume("data", "/var/lib/kafka/data", claimSrc("data-"+name)))
}

// strimziPod is a node of a Strimzi node pool with the given roles.
func strimziPod(name string, broker, controller bool, opts ...podOpt) *corev1.Pod {
	base := []podOpt{
		withLabels(labelStrimziClust, "my-cluster", labelStrimziKind, "Kafka", labelStrimziName, "my-cluster-kafka",
			labelStrimziComp, "kafka", labelStrimziPool, "pool-a",
			labelStrimziBroker, boolLabel(broker), labelStrimziCtrl, boolLabel(controller)),
		ownedBy("StrimziPodSet", "my-cluster-pool-a"),
	}
	return pod(name, append(base, opts...)...)
}

// koperatorPod is a Koperator broker pod.
func koperatorPod(id string, opts ...podOpt) *corev1.Pod {
	base := []podOpt{
		withLabels(labelKopApp, "kafka", labelKopCR, "my-kafka", labelKopBrokerID, id,
			labelKopBroker, "true", labelKopCtrl, "false"),
		ownedBy("KafkaCluster", "my-kafka"),
	}
	return pod("my-kafka-"+id+"-x7k2p", append(base, opts...)...)
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// otherPods are pods that are not Kafka nodes of any flavor.
func otherPods() []runtime.Object {
	zk := pod("zookeeper-0", withLabels("app", "zookeeper", labelPodIndex, "0"), ownedBy("StatefulSet", "zookeeper"))
	zk.Spec.Containers[0] = corev1.Container{Name: "zookeeper", Image: "zookeeper:3.9", Env: []corev1.EnvVar{{Name: "ZOO_MY_ID", Value: "1"}}}
	client := pod("producer-5d9c7-abcde", withLabels("app", "producer"), ownedBy("ReplicaSet", "producer-5d9c7"))
	eo := pod("my-cluster-entity-operator-6f7d8-xyz", withLabels(labelStrimziClust, "my-cluster", labelStrimziKind, "Kafka",
		labelStrimziName, "my-cluster-entity-operator", labelStrimziComp, "entity-operator"))
	connect := pod("my-connect-connect-0", withLabels(labelStrimziClust, "my-connect", labelStrimziKind, "KafkaConnect",
		labelStrimziComp, "kafka-connect", labelStrimziPool, "x"))
	cc := pod("my-kafka-cruisecontrol-7c9-abc", withLabels(labelKopApp, "cruisecontrol", labelKopCR, "my-kafka"))
	return []runtime.Object{zk, client, eo, connect, cc}
}

func TestParseFlavor(t *testing.T) {
	tests := []struct {
		in      string
		want    Flavor
		wantErr bool
	}{
		{"", "", false},
		{"auto", "", false},
		{" Auto ", "", false},
		{"statefulset", FlavorStatefulSet, false},
		{"Strimzi", FlavorStrimzi, false},
		{"koperator", FlavorKoperator, false},
		{"helm", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFlavor(tt.in)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Fatalf("ParseFlavor(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestDetectFlavor(t *testing.T) {
	sts := []runtime.Object{stsPod("kafka", "0", "broker,controller"), stsPod("kafka", "1", "broker,controller")}
	split := []runtime.Object{splitControllerPod("0"), stsPod("kafka-broker", "0", "broker")}
	strimzi := []runtime.Object{strimziPod("my-cluster-pool-a-0", true, true), strimziPod("my-cluster-pool-a-1", true, true)}
	kop := []runtime.Object{koperatorPod("0"), koperatorPod("1")}
	with := func(groups ...[]runtime.Object) []runtime.Object {
		var out []runtime.Object
		for _, g := range groups {
			out = append(out, g...)
		}
		return out
	}
	tests := []struct {
		name     string
		pods     []runtime.Object
		selector string
		want     Flavor
		wantErr  []string // substrings of the error
	}{
		{name: "statefulset", pods: with(sts, otherPods()), want: FlavorStatefulSet},
		{name: "separate controllers", pods: split, want: FlavorStatefulSet},
		{name: "strimzi", pods: with(strimzi, otherPods()), want: FlavorStrimzi},
		{name: "koperator", pods: with(kop, otherPods()), want: FlavorKoperator},
		{
			name:    "mixed",
			pods:    with(sts, strimzi, otherPods()),
			wantErr: []string{"several flavors in namespace kafka", "statefulset (kafka-0, kafka-1)", "strimzi (my-cluster-pool-a-0, my-cluster-pool-a-1)"},
		},
		{name: "mixed narrowed by selector", pods: with(sts, strimzi), selector: "strimzi.io/cluster=my-cluster", want: FlavorStrimzi},
		{
			name:    "none",
			pods:    otherPods(),
			wantErr: []string{"none of the 5 pods in namespace kafka looks like a Kafka broker", "producer-5d9c7-abcde", "zookeeper-0"},
		},
		{name: "no pods", selector: "app=kafka", wantErr: []string{`no pods in namespace kafka (selector "app=kafka")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DetectFlavor(t.Context(), fake.NewClientset(tt.pods...), testNS, tt.selector)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("DetectFlavor() = %q; want an error", got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("DetectFlavor() error = %q; want it to contain %q", err, s)
					}
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("DetectFlavor() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestBrokerID(t *testing.T) {
	tests := []struct {
		name   string
		flavor Flavor
		pod    *corev1.Pod
		want   int32
		wantOK bool
	}{
		{"statefulset: KAFKA_NODE_ID from pod-index label", FlavorStatefulSet, stsPod("kafka", "2", "broker,controller"), 2, true},
		{"statefulset: pod-index label alone", FlavorStatefulSet, pod("kafka-2", withLabels(labelPodIndex, "2")), 2, true},
		{"statefulset: ordinal of pod name", FlavorStatefulSet, pod("kafka-12"), 12, true},
		{"statefulset: KAFKA_NODE_ID with $(VAR)", FlavorStatefulSet, splitControllerPod("1"), 101, true},
		{"statefulset: literal KAFKA_NODE_ID", FlavorStatefulSet, pod("kafka-0", withEnv("KAFKA_NODE_ID", "7")), 7, true},
		{"statefulset: literal KAFKA_BROKER_ID (ZooKeeper mode)", FlavorStatefulSet, pod("kafka-0", withEnv("KAFKA_BROKER_ID", "8")), 8, true},
		{"statefulset: $$ escapes", FlavorStatefulSet, pod("kafka-3", withEnv("KAFKA_NODE_ID", "$$(X)")), 3, true},
		{
			"statefulset: KAFKA_NODE_ID from a config map falls back to the label",
			FlavorStatefulSet,
			pod("kafka-4", withLabels(labelPodIndex, "4"), func(p *corev1.Pod) {
				p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "KAFKA_NODE_ID",
					ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{Key: "id"}}})
			}),
			4, true,
		},
		{"statefulset: unresolved reference falls back", FlavorStatefulSet, pod("kafka-5", withEnv("KAFKA_NODE_ID", "$(NOPE)")), 5, true},
		{"statefulset: no ordinal", FlavorStatefulSet, pod("kafka"), 0, false},
		{"statefulset: no number", FlavorStatefulSet, pod("kafka-abc"), 0, false},
		{"strimzi: node pool pod", FlavorStrimzi, strimziPod("my-cluster-pool-a-3", true, false), 3, true},
		{"strimzi: large node ID", FlavorStrimzi, strimziPod("my-cluster-controllers-1000", false, true), 1000, true},
		{"strimzi: pod-index label is not used", FlavorStrimzi, strimziPod("my-cluster-pool-a-3", true, false, withLabels(labelPodIndex, "9")), 3, true},
		{"koperator: brokerId label", FlavorKoperator, koperatorPod("7"), 7, true},
		{"koperator: no label", FlavorKoperator, koperatorPod("7", withoutLabel(labelKopBrokerID)), 0, false},
		{"koperator: label not a number", FlavorKoperator, koperatorPod("x"), 0, false},
		{"no flavor", "", stsPod("kafka", "0", "broker"), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.flavor.BrokerID(tt.pod)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("%q.BrokerID(%s) = %d, %v; want %d, %v", tt.flavor, tt.pod.Name, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRoles(t *testing.T) {
	tests := []struct {
		name                   string
		flavor                 Flavor
		pod                    *corev1.Pod
		wantController, wantBr bool
	}{
		{"statefulset combined", FlavorStatefulSet, stsPod("kafka", "0", "broker,controller"), true, true},
		{"statefulset controller", FlavorStatefulSet, splitControllerPod("0"), true, false},
		{"statefulset broker", FlavorStatefulSet, stsPod("kafka-broker", "0", " broker "), false, true},
		{"statefulset roles unset", FlavorStatefulSet, pod("kafka-0", withEnv("KAFKA_BROKER_ID", "0")), false, true},
		{"statefulset roles from a start script's override", FlavorStatefulSet, pod("kafka-0", withStartScript("/etc/kafka/node-0.properties", "--override", "process.roles=$(ROLES)"), withEnv("ROLES", "controller,broker")), true, true},
		{"strimzi combined", FlavorStrimzi, strimziPod("c-p-0", true, true), true, true},
		{"strimzi controller", FlavorStrimzi, strimziPod("c-p-0", false, true), true, false},
		{"strimzi without role labels", FlavorStrimzi, strimziPod("c-p-0", true, true, withoutLabel(labelStrimziBroker), withoutLabel(labelStrimziCtrl)), false, true},
		{"koperator broker", FlavorKoperator, koperatorPod("0"), false, true},
		{"koperator controller", FlavorKoperator, koperatorPod("0", withLabels(labelKopBroker, "false", labelKopCtrl, "true")), true, false},
		{"koperator without role labels", FlavorKoperator, koperatorPod("0", withoutLabel(labelKopBroker), withoutLabel(labelKopCtrl)), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, b := tt.flavor.roles(tt.pod)
			if c != tt.wantController || b != tt.wantBr {
				t.Fatalf("roles() = controller %v, broker %v; want %v, %v", c, b, tt.wantController, tt.wantBr)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	vals := map[string]string{"A": "1", "B": "two"}
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"10$(A)", "101"},
		{"$(A)$(B)", "1two"},
		{"$(C)", "$(C)"},
		{"$$(A)", "$(A)"},
		{"$(A", "$(A"},
		{"cost $", "cost $"},
	}
	for _, tt := range tests {
		if got := kube.Expand(tt.in, vals); got != tt.want {
			t.Errorf("Expand(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestKafkaImage(t *testing.T) {
	sidecar := corev1.Container{Name: "exporter", Image: "kafka-exporter:1.9"}
	tests := []struct {
		name       string
		containers []corev1.Container
		want       string
	}{
		{"the container named kafka", []corev1.Container{sidecar, {Name: "kafka", Image: "apache/kafka:4.4.0"}}, "apache/kafka:4.4.0"},
		{"the container with Kafka env", []corev1.Container{sidecar, {Name: "broker", Image: "bitnami/kafka:4.0", Env: []corev1.EnvVar{{Name: "KAFKA_CFG_NODE_ID", Value: "0"}}}}, "bitnami/kafka:4.0"},
		{"else the first", []corev1.Container{sidecar}, "kafka-exporter:1.9"},
		{"no container", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pod("kafka-0", func(p *corev1.Pod) { p.Spec.Containers = tt.containers })
			if got := KafkaImage(p); got != tt.want {
				t.Errorf("KafkaImage = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestZooKeeperConnect(t *testing.T) {
	const zk = "zookeeper-0.zookeeper-headless.kafka-zk.svc.cluster.local:2181,zookeeper-1.zookeeper-headless.kafka-zk.svc.cluster.local:2181"
	tests := []struct {
		name        string
		pod         *corev1.Pod
		wantConnect string
		wantServers []string
	}{
		{"KRaft: none", stsPod("kafka", "0", "broker,controller"), "", nil},
		{"apache/kafka env", pod("kafka-0", withEnv("KAFKA_ZOOKEEPER_CONNECT", zk)), zk,
			[]string{"zookeeper-0.zookeeper-headless.kafka-zk.svc.cluster.local:2181", "zookeeper-1.zookeeper-headless.kafka-zk.svc.cluster.local:2181"}},
		{"the start script's --override, expanded", pod("kafka-0", withEnv("NS", "kafka-zk"), func(p *corev1.Pod) {
			p.Spec.Containers[0].Command = []string{"/opt/kafka/bin/kafka-server-start.sh"}
			p.Spec.Containers[0].Args = []string{"/etc/kafka/zk/server.properties", "--override", "broker.id=0", "--override", "zookeeper.connect=zk-0.$(NS):2181"}
		}), "zk-0.kafka-zk:2181", []string{"zk-0.kafka-zk:2181"}},
		{"bitnami env, a chroot and a host without a port", pod("kafka-0", withEnv("KAFKA_CFG_ZOOKEEPER_CONNECT", "zk-a:2182, zk-b/kafka")), "zk-a:2182, zk-b/kafka",
			[]string{"zk-a:2182", "zk-b:2181"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := zooKeeperConnect(tt.pod)
			if got != tt.wantConnect {
				t.Fatalf("zooKeeperConnect = %q, want %q", got, tt.wantConnect)
			}
			if servers := ZooKeeperServers(got); !slices.Equal(servers, tt.wantServers) {
				t.Errorf("ZooKeeperServers(%q) = %q, want %q", got, servers, tt.wantServers)
			}
		})
	}
}
