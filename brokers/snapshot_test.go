package brokers

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// claim returns a claim in testNS bound to pv ("" for unbound), and pv
// itself unless pv is "".
func claim(name, pv string) []runtime.Object {
	sc := "standard"
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: types.UID("uid-" + name)},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: pv, StorageClassName: &sc},
	}
	if pv == "" {
		return []runtime.Object{c}
	}
	return []runtime.Object{c, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pv, UID: types.UID("uid-" + pv)},
		Spec:       corev1.PersistentVolumeSpec{StorageClassName: "standard"},
	}}
}

func objects(groups ...[]runtime.Object) []runtime.Object {
	var out []runtime.Object
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func TestSnapshot(t *testing.T) {
	withNode := func(node, ip string) podOpt {
		return func(p *corev1.Pod) { p.Spec.NodeName, p.Status.PodIP = node, ip }
	}
	terminating := func(p *corev1.Pod) {
		now := metav1.Now()
		p.DeletionTimestamp = &now
		p.UID += "-old"
	}
	vol := func(c, pv string) Volume {
		v := Volume{Claim: c, ClaimUID: types.UID("uid-" + c), PV: pv, StorageClass: "standard"}
		if pv != "" {
			v.PVUID = types.UID("uid-" + pv)
		}
		return v
	}

	tests := []struct {
		name     string
		objects  []runtime.Object
		selector string
		flavor   Flavor
		want     []Server
		wantErr  string
	}{
		{
			name: "statefulset: claims resolved to volumes, unbound and missing claims",
			objects: objects(
				[]runtime.Object{
					stsPod("kafka", "2", "broker,controller", withNode("node-c", "10.0.0.12"), ready),
					stsPod("kafka", "0", "broker,controller", withNode("node-a", "10.0.0.10"), ready,
						withVolume("logs", "/var/log/kafka", emptyDirSrc())),
					stsPod("kafka", "1", "broker,controller", withNode("node-b", "10.0.0.11")),
				},
				claim("data-kafka-0", "pvc-aaa"), claim("data-kafka-1", ""), otherPods()),
			flavor: FlavorStatefulSet,
			want: []Server{
				{ID: 0, Pod: "kafka-0", PodUID: "uid-kafka-0", Node: "node-a", PodIP: "10.0.0.10", Ready: true,
					Volumes: []Volume{vol("data-kafka-0", "pvc-aaa")}, Controller: true, Broker: true},
				{ID: 1, Pod: "kafka-1", PodUID: "uid-kafka-1", Node: "node-b", PodIP: "10.0.0.11",
					Volumes: []Volume{vol("data-kafka-1", "")}, Controller: true, Broker: true},
				{ID: 2, Pod: "kafka-2", PodUID: "uid-kafka-2", Node: "node-c", PodIP: "10.0.0.12", Ready: true,
					Volumes: []Volume{{Claim: "data-kafka-2"}}, Controller: true, Broker: true},
			},
		},
		{
			name: "separate controllers: controller IDs do not collide with broker IDs",
			objects: objects(
				[]runtime.Object{splitControllerPod("0"), stsPod("kafka-broker", "0", "broker")},
				claim("data-kafka-controller-0", "pvc-c0"), claim("data-kafka-broker-0", "pvc-b0")),
			flavor: FlavorStatefulSet,
			want: []Server{
				{ID: 0, Pod: "kafka-broker-0", PodUID: "uid-kafka-broker-0", Volumes: []Volume{vol("data-kafka-broker-0", "pvc-b0")}, Broker: true},
				{ID: 100, Pod: "kafka-controller-0", PodUID: "uid-kafka-controller-0", Volumes: []Volume{vol("data-kafka-controller-0", "pvc-c0")}, Controller: true},
			},
		},
		{
			name: "strimzi detected: JBOD claims and an ephemeral pool",
			objects: objects(
				[]runtime.Object{
					strimziPod("my-cluster-pool-a-3", true, false,
						withVolume("data-1", "/var/lib/kafka/data-1", claimSrc("data-1-my-cluster-pool-a-3")),
						withVolume("data-0", "/var/lib/kafka/data-0", claimSrc("data-0-my-cluster-pool-a-3")),
						withVolume("strimzi-tmp", "/tmp", emptyDirSrc()),
						withVolume("kafka-metrics-and-logging", "/opt/kafka/custom-config/", configMapSrc())),
					strimziPod("my-cluster-controllers-7", false, true,
						withVolume("data", "/var/lib/kafka/data", emptyDirSrc()),
						withVolume("strimzi-tmp", "/tmp", emptyDirSrc())),
				},
				claim("data-0-my-cluster-pool-a-3", "pvc-0"), claim("data-1-my-cluster-pool-a-3", "pvc-1"), otherPods()),
			want: []Server{
				{ID: 3, Pod: "my-cluster-pool-a-3", PodUID: "uid-my-cluster-pool-a-3", Broker: true,
					Volumes: []Volume{vol("data-0-my-cluster-pool-a-3", "pvc-0"), vol("data-1-my-cluster-pool-a-3", "pvc-1")}},
				{ID: 7, Pod: "my-cluster-controllers-7", PodUID: "uid-my-cluster-controllers-7", Controller: true, Ephemeral: []string{"data"}},
			},
		},
		{
			name: "koperator",
			objects: objects(
				[]runtime.Object{koperatorPod("5", withEnv("LOG_DIRS", "/kafka-logs"),
					withVolume("kafka-data-0", "/kafka-logs", claimSrc("my-kafka-5-storage-0-abcde")))},
				claim("my-kafka-5-storage-0-abcde", "pvc-k5"), otherPods()),
			flavor: FlavorKoperator,
			want: []Server{{ID: 5, Pod: "my-kafka-5-x7k2p", PodUID: "uid-my-kafka-5-x7k2p", Broker: true,
				Volumes: []Volume{vol("my-kafka-5-storage-0-abcde", "pvc-k5")}}},
		},
		{
			name: "a live pod supersedes a terminating one with the same ID",
			objects: objects(
				[]runtime.Object{koperatorPod("5", terminating), func() runtime.Object {
					p := koperatorPod("5")
					p.Name, p.UID = "my-kafka-5-newpd", "uid-new"
					return p
				}()}),
			flavor: FlavorKoperator,
			want:   []Server{{ID: 5, Pod: "my-kafka-5-newpd", PodUID: "uid-new", Broker: true, Ephemeral: []string{ContainerFilesystem}}},
		},
		{
			name:     "selector narrows",
			objects:  []runtime.Object{stsPod("kafka", "0", "broker"), stsPod("other", "1", "broker")},
			selector: "app.kubernetes.io/name=other",
			flavor:   FlavorStatefulSet,
			want:     []Server{{ID: 1, Pod: "other-1", PodUID: "uid-other-1", Volumes: []Volume{{Claim: "data-other-1"}}, Broker: true}},
		},
		{
			name:    "no pods of the flavor",
			objects: otherPods(),
			flavor:  FlavorStatefulSet,
			want:    []Server{},
		},
		{
			name: "two pods with one ID",
			objects: []runtime.Object{koperatorPod("5"), func() runtime.Object {
				p := koperatorPod("5")
				p.Name = "my-kafka-5-other"
				return p
			}()},
			flavor:  FlavorKoperator,
			wantErr: "pods my-kafka-5-other and my-kafka-5-x7k2p both carry broker ID 5",
		},
		{
			name:    "unknown flavor",
			objects: []runtime.Object{stsPod("kafka", "0", "broker")},
			flavor:  "helm",
			wantErr: `unknown flavor "helm"`,
		},
		{
			name:    "undetectable",
			objects: otherPods(),
			wantErr: "none of the 5 pods",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Snapshot(t.Context(), fake.NewClientset(tt.objects...), testNS, tt.selector, tt.flavor)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Snapshot() error = %v; want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Snapshot() error = %v", err)
			}
			for i := range tt.want { // every pod of these cases names its Kafka container "kafka"
				tt.want[i].Container = "kafka"
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Snapshot() =\n  %+v\nwant\n  %+v", got, tt.want)
			}
		})
	}
}

func TestSnapshotVolumeForbidden(t *testing.T) {
	cs := fake.NewClientset(objects([]runtime.Object{stsPod("kafka", "0", "broker")}, claim("data-kafka-0", "pvc-aaa"))...)
	forbidden := errors.New(`persistentvolumes "pvc-aaa" is forbidden`)
	cs.PrependReactor("get", "persistentvolumes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, forbidden
	})
	_, err := Snapshot(t.Context(), cs, testNS, "", FlavorStatefulSet)
	if !errors.Is(err, forbidden) || !strings.Contains(err.Error(), "broker 0 (pod kafka-0): getting persistent volume pvc-aaa of claim data-kafka-0") {
		t.Fatalf("Snapshot() error = %v; want it to wrap %v and say where", err, forbidden)
	}
}

func TestByID(t *testing.T) {
	bs := []Server{{ID: 0, Pod: "kafka-0"}, {ID: 2, Pod: "kafka-2"}}
	tests := []struct {
		id     int32
		want   string
		wantOK bool
	}{{0, "kafka-0", true}, {2, "kafka-2", true}, {1, "", false}}
	for _, tt := range tests {
		if b, ok := ByID(bs, tt.id); b.Pod != tt.want || ok != tt.wantOK {
			t.Errorf("ByID(%d) = %q, %v; want %q, %v", tt.id, b.Pod, ok, tt.want, tt.wantOK)
		}
	}
}

func TestEphemeralDataDirs(t *testing.T) {
	generic := corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}
	hostPath := corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/kafka"}}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []string
	}{
		{"log dir on a claim", stsPod("kafka", "0", "broker"), nil},
		{
			"log dir on an emptyDir",
			pod("kafka-0", withEnv("KAFKA_LOG_DIRS", "/var/lib/kafka/data"), withVolume("data", "/var/lib/kafka/data/", emptyDirSrc())),
			[]string{"data"},
		},
		{
			"log dir under an emptyDir mount",
			pod("kafka-0", withEnv("KAFKA_LOG_DIRS", "/var/lib/kafka/data/logs"), withVolume("scratch", "/var/lib/kafka", emptyDirSrc())),
			[]string{"scratch"},
		},
		{
			"emptyDir mounted under the log dir",
			pod("kafka-0", withEnv("KAFKA_LOG_DIR", "/data"), withVolume("data", "/data", claimSrc("c")), withVolume("sub", "/data/sub", emptyDirSrc())),
			[]string{"sub"},
		},
		{
			"one of two log dirs on a generic ephemeral volume",
			pod("kafka-0", withEnv("KAFKA_LOG_DIRS", "/d0, /d1"), withVolume("d0", "/d0", claimSrc("c")), withVolume("d1", "/d1", generic)),
			[]string{"d1"},
		},
		{
			"metadata log dir on an emptyDir",
			stsPod("kafka", "0", "controller", withEnv("KAFKA_METADATA_LOG_DIR", "/var/lib/kafka/meta"), withVolume("meta", "/var/lib/kafka/meta", emptyDirSrc())),
			[]string{"meta"},
		},
		{
			"log dir mounted nowhere",
			pod("kafka-0", withEnv("KAFKA_LOG_DIRS", "/tmp/kraft-combined-logs"), withVolume("data", "/var/lib/kafka/data", claimSrc("c"))),
			[]string{ContainerFilesystem},
		},
		{
			"log dir from $(VAR)",
			pod("kafka-0", withEnv("BASE", "/scratch", "KAFKA_LOG_DIRS", "$(BASE)/kafka"), withVolume("s", "/scratch", emptyDirSrc())),
			[]string{"s"},
		},
		{
			"log dir on hostPath is not ephemeral",
			pod("kafka-0", withEnv("KAFKA_LOG_DIRS", "/var/lib/kafka/data"), withVolume("data", "/var/lib/kafka/data", hostPath)),
			nil,
		},
		{
			"app logs on an emptyDir are not the data dir",
			stsPod("kafka", "0", "broker", withVolume("app-logs", "/opt/kafka/logs", emptyDirSrc())),
			nil,
		},
		{
			"no env: kafka data path on an emptyDir",
			pod("c-p-0", withVolume("data-0", "/var/lib/kafka/data-0", emptyDirSrc()), withVolume("tmp", "/tmp", emptyDirSrc())),
			[]string{"data-0"},
		},
		{
			"no env: kafka-logs on a claim",
			pod("k-0", withVolume("storage", "/kafka-logs", claimSrc("c")), withVolume("exitfile", "/var/run/wait", emptyDirSrc())),
			nil,
		},
		{
			"no env: config volumes and read-only mounts never hold data",
			pod("k-0", withVolume("log4j", "/opt/kafka/log4j", configMapSrc()), withVolume("claim", "/data", claimSrc("c")), func(p *corev1.Pod) {
				p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "ro", VolumeSource: emptyDirSrc()})
				p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "ro", MountPath: "/kafka/data", ReadOnly: true})
			}),
			nil,
		},
		{
			"no env: no data mount, no claim",
			pod("k-0", withVolume("tmp", "/tmp", emptyDirSrc())),
			[]string{ContainerFilesystem},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ephemeralDataDirs(tt.pod); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ephemeralDataDirs() = %q; want %q", got, tt.want)
			}
		})
	}
}
