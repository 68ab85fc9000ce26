package kubelet

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A container that runs kafka-server-start.sh, kafka-storage.sh or a
// verifiable client gets
// that script's mode with its arguments; no command, the image's launcher; another command is
// refused.
func TestKafkaRuntimeCommand(t *testing.T) {
	rt := kafkaRuntime{node: "/bin/kafkachaos-node", libs: "/libs", version: "3.9.2"}
	tests := []struct {
		name    string
		c       corev1.Container
		want    []string
		wantErr string
	}{
		{name: "the image's launcher", want: []string{"kafka-run", "--libs", "/libs", "--version", "3.9.2"}},
		{name: "the start script", c: corev1.Container{Command: []string{"/opt/kafka/bin/kafka-server-start.sh"}, Args: []string{"/etc/kafka/zk/server.properties", "--override", "broker.id=1"}},
			want: []string{"kafka-run", "--libs", "/libs", "--version", "3.9.2", "--script", "kafka-server-start.sh", "--", "/etc/kafka/zk/server.properties", "--override", "broker.id=1"}},
		{name: "the storage tool", c: corev1.Container{Command: []string{"/opt/kafka/bin/kafka-storage.sh", "format"}, Args: []string{"-c", "/etc/kafka/node-0.properties", "--ignore-formatted"}},
			want: []string{"kafka-run", "--libs", "/libs", "--version", "3.9.2", "--script", "kafka-storage.sh", "--", "format", "-c", "/etc/kafka/node-0.properties", "--ignore-formatted"}},
		{name: "a verifiable client", c: corev1.Container{Command: []string{"/opt/kafka/bin/kafka-verifiable-consumer.sh"}, Args: []string{"--topic", "t", "--verbose"}},
			want: []string{"kafka-run", "--libs", "/libs", "--version", "3.9.2", "--script", "kafka-verifiable-consumer.sh", "--", "--topic", "t", "--verbose"}},
		{name: "another tool", c: corev1.Container{Command: []string{"/opt/kafka/bin/kafka-topics.sh"}}, wantErr: "not \"/opt/kafka/bin/kafka-topics.sh\""},
		{name: "a shell", c: corev1.Container{Command: []string{"sh", "-c", "kafka-server-start.sh x"}}, wantErr: "not \"sh\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, args, err := rt.command(tt.c)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("command = %s %q, %v; want an error containing %q", path, args, err, tt.wantErr)
				}
				return
			}
			if err != nil || path != "/bin/kafkachaos-node" || !slices.Equal(args, tt.want) {
				t.Fatalf("command = %s %q, %v; want %q", path, args, err, tt.want)
			}
		})
	}
}

// $(VAR) in a container's command and args takes the value of its env, as
// the kubelet expands it; $$ escapes, unknown references stay.
func TestWithExpandedArgs(t *testing.T) {
	c := withExpandedArgs(corev1.Container{
		Command: []string{"/opt/kafka/bin/kafka-server-start.sh"},
		Args:    []string{"cfg", "--override", "broker.id=$(POD_INDEX)", "zk=$(NS):2181", "$$(POD_INDEX)", "$(NOPE)"},
		Env:     []corev1.EnvVar{{Name: "POD_INDEX", Value: "2"}, {Name: "NS", Value: "kafka-zk"}},
	})
	want := []string{"cfg", "--override", "broker.id=2", "zk=kafka-zk:2181", "$(POD_INDEX)", "$(NOPE)"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args = %q, want %q", c.Args, want)
	}
}
