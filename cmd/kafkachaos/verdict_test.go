package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// The Java clients' verdict is printed with its figures and whatever its
// checks found, for either kind of group.
func TestPrintJava(t *testing.T) {
	tests := []struct {
		name string
		java javaclients.Result
		want []string
	}{
		{"a consumer group, clean", javaclients.Result{Group: groupcheck.Result{Acked: 10, Consumed: 10}}, []string{"Java group: acked 10, consumed 10"}},
		{"a share group, a record accepted twice", javaclients.Result{Share: &javaclients.ShareResult{Acked: 5, Delivered: 5,
			AcceptedTwice: javaclients.ShareAnomaly{Count: 1, Examples: []string{"partition 0 offset 3: accepted 2 times in 2 deliveries"}}}},
			[]string{"Java share group: acked 5, delivered 5", "accepted-twice: 1; partition 0 offset 3"}},
		{"a run not judged whole", javaclients.Result{Incomplete: []string{"the producer ended unasked"}}, []string{"the producer ended unasked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			printWorkloads(&b, &steadystate.Report{Java: &tt.java})
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("printed %q, want %q in it", b.String(), w)
				}
			}
		})
	}
}
