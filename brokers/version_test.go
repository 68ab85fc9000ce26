package brokers

import (
	"strings"
	"testing"
)

func TestVersionInLog(t *testing.T) {
	tests := []struct {
		name, log, want string
	}{
		{"Kafka 4.x (log4j2)", "[2026-12-05 00:27:01,100] INFO KafkaConfig values: ...\n[2026-12-05 00:27:06,428] INFO Kafka version: 4.4.0 (org.apache.kafka.common.utils.AppInfoParser)\n[x] INFO Kafka version: 9.9.9 (a client's)\n", "4.4.0"},
		{"Kafka 3.9 (log4j 1)", "[2026-12-05 00:27:06,428] INFO Kafka version: 3.9.2 (org.apache.kafka.common.utils.AppInfoParser)\n", "3.9.2"},
		{"no version", "[x] INFO starting\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := versionInLog(strings.NewReader(tt.log))
			if tt.want == "" {
				if err == nil {
					t.Errorf("got %q; want an error", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
