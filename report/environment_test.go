package report

import (
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

func TestEnvironmentString(t *testing.T) {
	tests := []struct {
		name string
		env  Environment
		want string
	}{
		{"everything known", Environment{RunID: "r1", Kubernetes: "v1.37.2",
			Kafkachaos: Build{Version: "(devel)", Revision: "1a2b3c4d5e6f7a8b9c0d", Modified: true},
			Nodes:      []Node{{ID: 0, Kafka: "v4.3"}, {ID: 1, Kafka: "v4.4"}, {ID: 2, Kafka: "v4.4"}, {ID: 3}}},
			"Kafka v4.3 and v4.4, Kubernetes v1.37.2, kafkachaos 1a2b3c4d5e6f (modified), run r1"},
		{"a release", Environment{RunID: "r1", Kafkachaos: Build{Version: "v1.2.0", Revision: "abc"}},
			"Kafka unknown, Kubernetes unknown, kafkachaos v1.2.0 abc, run r1"},
		{"nothing known", Environment{}, "Kafka unknown, Kubernetes unknown, kafkachaos unknown revision, run -"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.env.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestWriteHTMLEnvironment: the page says what the run ran against, when
// the report says it.
func TestWriteHTMLEnvironment(t *testing.T) {
	env := &Environment{RunID: "r1", Kubernetes: "v1.37.2", Flavor: "statefulset", Layout: "separate-controllers", Namespace: "kafka",
		Nodes: []Node{{ID: 0, Image: "apache/kafka:4.4.0", Kafka: "v4.4"}, {ID: 1, Image: "apache/kafka:4.4.0", Kafka: "v4.4"},
			{ID: 100, Image: "apache/kafka:4.4.0"}},
		Load: Load{Rate: 3000, Partitions: 6, RecordSize: 100, Producers: 2, Agents: 3, Acks: steadystate.AcksAll, Idempotent: true, RequestTimeout: "4s"}}
	tests := []struct {
		name string
		run  Run
		want []string // none: no environment table
	}{
		{"the fixture", loadFixture(t), []string{`<table class="env">`, "<th>Kubernetes</th><td>v1.37.2</td>",
			"v4.4 (apache/kafka:4.4.0) on nodes 0, 1, 2", "statefulset, layout combined, namespace kafka", "20261204T180000Z-6b616663",
			"1000 records/s of 100 B, 3 partitions, 1 producer(s), acks=all, idempotent, request timeout franz-go&#39;s default"}},
		{"controllers without a version", Run{Schema: SchemaVersion, Environment: env}, []string{
			"v4.4 (apache/kafka:4.4.0) on nodes 0, 1; version unknown (apache/kafka:4.4.0) on nodes 100",
			"3000 records/s of 100 B, 6 partitions, 2 producer(s) in each of 3 agent pods, acks=all, idempotent, request timeout 4s",
			"statefulset, layout separate-controllers, namespace kafka"}},
		{"no environment", Run{Schema: 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := renderRun(t, tt.run)
			if tt.want == nil && strings.Contains(out, `<table class="env">`) {
				t.Error("the page has an environment table")
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("page lacks %q", w)
				}
			}
		})
	}
}
