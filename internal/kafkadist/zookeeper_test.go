package kafkadist

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestZooKeeperIn(t *testing.T) {
	cache := t.TempDir()
	fetch := func(kafka string, complete bool, jars ...string) string {
		libs := filepath.Join(cache, kafka, "libs")
		if err := os.MkdirAll(libs, 0o755); err != nil {
			t.Fatal(err)
		}
		if complete {
			jars = append(jars, ".complete")
		}
		for _, j := range jars {
			if err := os.WriteFile(filepath.Join(libs, j), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return libs
	}
	fetch("4.4.0", true, "kafka_2.13-4.4.0.jar")
	fetch("3.9.0", true, "zookeeper-3.8.4.jar")
	newest := fetch("3.9.2", true, "zookeeper-3.8.4.jar")
	fetch("3.9.3", false, "zookeeper-3.8.4.jar") // still being fetched
	fetch("3.9.1", true, "zookeeper-3.8.3.jar")

	tests := []struct {
		version string
		want    string // libs dir
		wantErr string
	}{
		{"3.8.4", newest, ""},
		{"3.8.3", filepath.Join(cache, "3.9.1", "libs"), ""},
		{"3.9.2", "", "no Kafka line the project fetches ships ZooKeeper 3.9.2"},
		{"3.8", "", "want a release version"},
	}
	for _, tt := range tests {
		got, err := ZooKeeperIn(cache, tt.version)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrNotFetched) {
				t.Errorf("ZooKeeperIn(%s) = %q, %v; want ErrNotFetched saying %q", tt.version, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ZooKeeperIn(%s) = %q, %v; want %q", tt.version, got, err, tt.want)
		}
	}

	empty := t.TempDir()
	for _, c := range []string{empty, filepath.Join(empty, "missing")} {
		_, err := ZooKeeperIn(c, DefaultZooKeeperVersion)
		if err == nil || !strings.Contains(err.Error(), FetchCommand(ZooKeeperKafkaVersion)) {
			t.Errorf("ZooKeeperIn(%s) error %v; want it to name %q", c, err, FetchCommand(ZooKeeperKafkaVersion))
		}
	}
}

func TestZooKeeperVersionOfTag(t *testing.T) {
	for tag, want := range map[string]string{
		"": DefaultZooKeeperVersion, "latest": DefaultZooKeeperVersion, "3.8.4": "3.8.4",
		"3.8.4-jre-17": "3.8.4", "3.9": "3.9", "3.8.4-rc1": "3.8.4-rc1",
	} {
		if got := ZooKeeperVersionOfTag(tag); got != want {
			t.Errorf("ZooKeeperVersionOfTag(%q) = %q; want %q", tag, got, want)
		}
	}
}
