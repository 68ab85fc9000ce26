package kubelet

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestZooKeeperRuntimeLookup(t *testing.T) {
	cache := t.TempDir()
	fetched := func(kafka string, jars ...string) string {
		libs := filepath.Join(cache, kafka, "libs")
		if err := os.MkdirAll(libs, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, j := range append(jars, ".complete") {
			if err := os.WriteFile(filepath.Join(libs, j), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return libs
	}
	fetched("4.4.0")
	libs := fetched("3.9.2", "zookeeper-3.8.4.jar")
	pinnedLibs := t.TempDir()
	if err := os.WriteFile(filepath.Join(pinnedLibs, "zookeeper-3.8.4.jar"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	withZK := runtimes{node: "/bin/kafkachaos-node", kafkaCache: cache}
	without := runtimes{node: "/bin/kafkachaos-node", kafkaCache: t.TempDir()}
	pinned := runtimes{node: "/bin/kafkachaos-node", kafkaLibs: pinnedLibs, kafkaCache: cache}
	pinned4 := runtimes{node: "/bin/kafkachaos-node", kafkaLibs: t.TempDir(), kafkaCache: cache}
	none := runtimes{node: "/bin/kafkachaos-node"}
	tests := []struct {
		name     string
		rt       runtimes
		image    string
		wantLibs string
		wantWhy  string // part of the waiting message; "" if it runs
	}{
		{"by tag", withZK, "zookeeper:3.8.4", libs, ""},
		{"docker.io", withZK, "docker.io/zookeeper:3.8.4", libs, ""},
		{"library", withZK, "library/zookeeper:3.8.4", libs, ""},
		{"docker.io library", withZK, "docker.io/library/zookeeper:3.8.4", libs, ""},
		{"latest", withZK, "zookeeper:latest", libs, ""},
		{"no tag", withZK, "zookeeper", libs, ""},
		{"jre variant", withZK, "zookeeper:3.8.4-jre-17", libs, ""},
		{"pinned jars hold it", pinned, "zookeeper:3.8.4", pinnedLibs, ""},
		{"pinned jars lack it", pinned4, "zookeeper:3.8.4", libs, ""},
		{"not fetched", without, "zookeeper:3.8.4", "", "make kafka-dist KAFKA_VERSION=3.9.2"},
		{"version no line ships", withZK, "zookeeper:3.9.2", "", "no Kafka line the project fetches ships ZooKeeper 3.9.2"},
		{"without cache", none, "zookeeper:3.8.4", "", "make kafka-dist KAFKA_VERSION=3.9.2"},
		{"another zookeeper image", withZK, "bitnami/zookeeper:3.8.4", "", "no local runtime"},
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
			path, args, err := r.command(corev1.Container{Image: tt.image, Command: []string{"zkServer.sh"}, Args: []string{"start-foreground"}})
			want := []string{"zookeeper-run", "--libs", tt.wantLibs}
			if err != nil || path != "/bin/kafkachaos-node" || !slices.Equal(args, want) {
				t.Fatalf("command %q %q, %v; want /bin/kafkachaos-node %q", path, args, err, want)
			}
		})
	}
	if _, why := withZK.lookup("busybox"); !strings.Contains(why, "zookeeper (runs the ZooKeeper jars") {
		t.Errorf("the unknown-image message %q does not name the zookeeper image", why)
	}
}

func TestZooKeeperRuntimeMounts(t *testing.T) {
	z := zooKeeperRuntime{node: "/bin/kafkachaos-node", libs: "/libs"}
	c := corev1.Container{Image: "zookeeper:3.8.4", VolumeMounts: []corev1.VolumeMount{
		{Name: "data", MountPath: "/var/lib/zookeeper/data"},
		{Name: "log", MountPath: "/var/lib/zookeeper/log", SubPath: "log"},
		{Name: "odd", MountPath: "/opt/a,b"},
		{Name: "conf", MountPath: "/conf", ReadOnly: true},
	}}
	path, args, err := z.command(c)
	want := []string{"zookeeper-run", "--libs", "/libs",
		"--mount", "/var/lib/zookeeper/data", "--mount", "/var/lib/zookeeper/log", "--mount", "/opt/a,b", "--mount", "/conf"}
	if err != nil || path != "/bin/kafkachaos-node" || !slices.Equal(args, want) {
		t.Fatalf("command %q %q, %v; want /bin/kafkachaos-node %q", path, args, err, want)
	}
}
