package nodeagent

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/loadagent"
)

func TestBindTo(t *testing.T) {
	tests := []struct{ in, want string }{
		{"PLAINTEXT://:9092,CONTROLLER://:9093", "PLAINTEXT://127.1.0.7:9092,CONTROLLER://127.1.0.7:9093"},
		{"PLAINTEXT://0.0.0.0:9092", "PLAINTEXT://127.1.0.7:9092"},
		{"PLAINTEXT://kafka-0.example:9092", "PLAINTEXT://kafka-0.example:9092"},
	}
	for _, tt := range tests {
		if got := bindTo(tt.in, "127.1.0.7"); got != tt.want {
			t.Errorf("bindTo(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseMount(t *testing.T) {
	tests := []struct {
		in      string
		want    Mount
		wantErr bool
	}{
		{in: "/a:/b", want: Mount{Source: "/a", Target: "/b"}},
		{in: "/a:/b:ro", want: Mount{Source: "/a", Target: "/b", ReadOnly: true}},
		{in: "/a:relative", wantErr: true},
		{in: "/a:/b:rw", wantErr: true},
		{in: "/a", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseMount(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("ParseMount(%q) = %+v, %v", tt.in, got, err)
		}
		if err == nil && got.String() != tt.in {
			t.Errorf("round trip of %q gave %q", tt.in, got.String())
		}
	}
}

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
	r := Resolver{Path: path}
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
	rt := runtimes{self: "/bin/kafkachaos", kafkaLibs: "/libs", extra: map[string]string{"example/sleep": "/bin/sleep"}}
	tests := []struct {
		image    string
		wantPath string
		wantWhy  bool
	}{
		{"ghcr.io/kafkachaos/kafkachaos:v1", "/bin/kafkachaos", false},
		{"apache/kafka:4.4.0", "/bin/kafkachaos", false},
		{"example/sleep:1", "/bin/sleep", false},
		{"busybox:1.36", "", true},
	}
	for _, tt := range tests {
		r, why := rt.lookup(tt.image)
		if (why != "") != tt.wantWhy {
			t.Errorf("%s: why %q", tt.image, why)
			continue
		}
		if r == nil {
			continue
		}
		path, _, err := r.command(corev1.Container{Image: tt.image})
		if err != nil || path != tt.wantPath {
			t.Errorf("%s: command %q, %v; want %q", tt.image, path, err, tt.wantPath)
		}
	}
	if _, why := (runtimes{self: "/x"}).lookup("apache/kafka:4.4.0"); why == "" {
		t.Errorf("apache/kafka without jars must say why it cannot run")
	}
}

// The load agent listens on the IP the node agent gives it.
func TestPodIPEnvMatchesLoadAgent(t *testing.T) {
	if PodIPEnv != loadagent.PodIPEnv {
		t.Errorf("the node agent sets %s, the load agent reads %s", PodIPEnv, loadagent.PodIPEnv)
	}
}
