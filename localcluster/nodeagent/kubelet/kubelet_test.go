package kubelet

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
)

func TestPodNames(t *testing.T) {
	sts := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kafka-0", Namespace: "kafka"},
		Spec: corev1.PodSpec{Hostname: "kafka-0", Subdomain: "kafka-headless"}}
	want := []string{"kafka-0.kafka-headless.kafka.svc.cluster.local", "kafka-0.kafka-headless.kafka.svc", "kafka-0.kafka-headless.kafka", "kafka-0",
		"kafka-headless.kafka.svc.cluster.local"}
	if got := PodNames(sts); !reflect.DeepEqual(got, want) {
		t.Errorf("PodNames = %v, want %v", got, want)
	}
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "x"}}
	if got := PodNames(plain); !reflect.DeepEqual(got, []string{"p"}) {
		t.Errorf("PodNames(plain) = %v", got)
	}
}

func TestHostsAndResolver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	h, err := newHostsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kafka-1", Namespace: "kafka", UID: "u1"},
		Spec: corev1.PodSpec{Hostname: "kafka-1", Subdomain: "kafka-headless"}}
	if err := h.add(pod, "127.1.0.9"); err != nil {
		t.Fatal(err)
	}
	r := nodeagent.Resolver{Path: path}
	if ip, err := r.Lookup("kafka-1.kafka-headless.kafka.svc.cluster.local"); err != nil || ip != "127.1.0.9" {
		t.Errorf("Lookup = %q, %v", ip, err)
	}
	// The pod comes back with a new IP: the same file (inode) says so.
	pod.UID = "u2"
	if err := h.remove(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1"}}); err != nil {
		t.Fatal(err)
	}
	if err := h.add(pod, "127.1.0.12"); err != nil {
		t.Fatal(err)
	}
	if ip, _ := r.Lookup("kafka-1.kafka-headless.kafka.svc.cluster.local."); ip != "127.1.0.12" {
		t.Errorf("after the move Lookup = %q, want 127.1.0.12", ip)
	}
	fi2, _ := os.Stat(path)
	if !os.SameFile(fi, fi2) {
		t.Errorf("the hosts file was replaced, not rewritten in place: pods' bind mounts would go stale")
	}
	if ip, _ := r.Lookup("kafka-headless.kafka.svc.cluster.local"); ip != "127.1.0.12" {
		t.Errorf("headless service name resolved to %q, want its pod's 127.1.0.12", ip)
	}
	svc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kafka", Namespace: "kafka"}, Spec: corev1.ServiceSpec{ClusterIP: "127.96.0.10"}}
	if err := h.setServices([]corev1.Service{svc}); err != nil {
		t.Fatal(err)
	}
	if ip, _ := r.Lookup("kafka.kafka.svc.cluster.local"); ip != "127.96.0.10" {
		t.Errorf("service name resolved to %q, want its cluster IP", ip)
	}
	if _, err := r.Lookup("nope.kafka.svc.cluster.local"); err == nil {
		t.Errorf("an unknown name resolved")
	}
}

func TestRuntimeLookup(t *testing.T) {
	cache := t.TempDir()
	for _, v := range []string{"4.3.2", kafkadist.DefaultVersion} {
		libs := filepath.Join(cache, v, "libs")
		if err := os.MkdirAll(libs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(libs, ".complete"), []byte("kafka.version="+v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	byTag := runtimes{node: "/bin/kafkachaos-node", cli: "/bin/kafkachaos", kafkaCache: cache, extra: map[string]string{"example/sleep": "/bin/sleep"}}
	pinned := runtimes{node: "/bin/kafkachaos-node", kafkaLibs: "/libs"}
	none := runtimes{node: "/bin/kafkachaos-node"}
	tests := []struct {
		name     string
		rt       runtimes
		image    string
		wantPath string
		wantArgs string // the Kafka launcher's --libs and --version
		wantWhy  string // part of the waiting message; "" if it runs
	}{
		{"own image", byTag, "ghcr.io/kafkachaos/kafkachaos:v1", "/bin/kafkachaos", "", ""},
		{"kafka by tag", byTag, "apache/kafka:4.3.2", "/bin/kafkachaos-node", "--libs " + filepath.Join(cache, "4.3.2", "libs") + " --version 4.3.2", ""},
		{"kafka latest", byTag, "docker.io/apache/kafka:latest", "/bin/kafkachaos-node", "--version " + kafkadist.DefaultVersion, ""},
		{"kafka no tag", byTag, "apache/kafka", "/bin/kafkachaos-node", "--version " + kafkadist.DefaultVersion, ""},
		{"kafka not fetched", byTag, "apache/kafka:4.2.0", "", "", "make kafka-dist KAFKA_VERSION=4.2.0"},
		{"kafka unknown line", byTag, "apache/kafka:3.6.1", "", "", "known lines are 4.x and 3.7.x to 3.9.x"},
		{"kafka odd tag", byTag, "apache/kafka:4.4.0-rc1", "", "", "want a release version"},
		{"kafka pinned", pinned, "apache/kafka:4.2.0", "/bin/kafkachaos-node", "--libs /libs", ""},
		{"kafka without cache", none, "apache/kafka:4.4.0", "", "", "make kafka-dist KAFKA_VERSION=4.4.0"},
		{"host program", byTag, "example/sleep:1", "/bin/sleep", "", ""},
		{"own image without kafkachaos", pinned, "ghcr.io/kafkachaos/kafkachaos:v1", "", "", "run `make build`"},
		{"unknown image", byTag, "busybox:1.36", "", "", "no local runtime"},
		{"pause image", none, "registry.k8s.io/pause:3.10", "sleep", "infinity", ""},
		{"mirrored pause image", none, "mirror.example:5000/google_containers/pause:3.9", "sleep", "infinity", ""},
		{"not a pause image", none, "example/pause-tool:1", "", "", "no local runtime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, why := tt.rt.lookup(tt.image)
			if tt.wantWhy != "" {
				if !strings.Contains(why, tt.wantWhy) {
					t.Fatalf("why %q; want it to say %q", why, tt.wantWhy)
				}
				return
			}
			if why != "" {
				t.Fatalf("why %q", why)
			}
			path, args, err := r.command(corev1.Container{Image: tt.image})
			if err != nil || path != tt.wantPath {
				t.Fatalf("command %q, %v; want %q", path, err, tt.wantPath)
			}
			if !strings.Contains(strings.Join(args, " "), tt.wantArgs) {
				t.Errorf("args %q; want %q in them", args, tt.wantArgs)
			}
		})
	}
}

// A pause image runs its sleeper for a container that names no command;
// one that names a program of its own cannot start in it, and exits as a
// runtime's failed start does.
func TestPauseRuntime(t *testing.T) {
	path, args, err := pauseRuntime{}.command(corev1.Container{Command: []string{"/opt/bitnami/scripts/kafka/run.sh"}})
	if err != nil || path != "sh" || len(args) != 2 || !strings.Contains(args[1], "exit 128") || !strings.Contains(args[1], "run.sh") {
		t.Errorf("command = %q %q, %v; want a shell that names run.sh and exits 128", path, args, err)
	}
}
