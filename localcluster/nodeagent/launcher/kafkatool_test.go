package launcher

import (
	"slices"
	"testing"
)

// A verifiable client runs its class with the script's heap unless
// KAFKA_HEAP_OPTS says otherwise, the tools' logging, and its arguments
// last; other scripts are no tools.
func TestToolArgv(t *testing.T) {
	tests := []struct {
		name, script string
		env          map[string]string
		wantClass    string
		wantHeap     string
	}{
		{name: "the producer, the script's heap", script: VerifiableProducerScript, wantClass: "org.apache.kafka.tools.VerifiableProducer", wantHeap: "-Xmx512M"},
		{name: "the consumer, the user's heap", script: VerifiableConsumerScript, env: map[string]string{"KAFKA_HEAP_OPTS": "-Xmx128m"},
			wantClass: "org.apache.kafka.tools.VerifiableConsumer", wantHeap: "-Xmx128m"},
		{name: "the share consumer", script: VerifiableShareConsumerScript, wantClass: "org.apache.kafka.tools.VerifiableShareConsumer", wantHeap: "-Xmx512M"},
		{name: "not a tool", script: "kafka-topics.sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class, ok := ToolClass(tt.script)
			if ok != (tt.wantClass != "") || class != tt.wantClass {
				t.Fatalf("ToolClass(%q) = %q, %v; want %q", tt.script, class, ok, tt.wantClass)
			}
			if !ok {
				return
			}
			argv := toolArgv("java", "/libs", "/tmp/t", class, withToolHeap(tt.env), []string{"-Dlog4j2.configurationFile=/x"}, []string{"--topic", "t"})
			if argv[0] != "java" || argv[1] != tt.wantHeap {
				t.Errorf("argv starts %q, want java %s", argv[:2], tt.wantHeap)
			}
			if !slices.Contains(argv, "-Dlog4j2.configurationFile=/x") {
				t.Errorf("argv %q lacks the tools' logging", argv)
			}
			if tail := argv[len(argv)-5:]; !slices.Equal(tail, []string{"-cp", "/libs/*", tt.wantClass, "--topic", "t"}) {
				t.Errorf("argv ends %q, want the class path, the class, then the arguments", tail)
			}
		})
	}
}
