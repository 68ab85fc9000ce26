package scenario

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// The group counts as settled only when it owns every partition and no
// member is idle; the checks fail a run with anomalies, with a producer
// that had nothing acknowledged, or with a tool's events read in part.
func TestJavaClientsJudged(t *testing.T) {
	bad := javaclients.Result{InconsistentOffsets: 1, InconsistentOffsetExamples: []string{"partition 0 offset 3"}}
	tests := []struct {
		name        string
		owned       []int64
		acked       int64
		res         javaclients.Result
		failed      []string
		backwards   bool // the brokers served a committed offset below an earlier one
		wantOwns    bool
		wantProblem string
	}{
		{name: "settled and clean", owned: []int64{2, 2, 2}, acked: 10, wantOwns: true},
		{name: "a member idle", owned: []int64{3, 3, 0}, acked: 10, wantOwns: false},
		{name: "partitions unowned", owned: []int64{2, 2, 1}, acked: 10, wantOwns: false},
		{name: "an anomaly", owned: []int64{2, 2, 2}, acked: 10, res: bad, wantOwns: true, wantProblem: "inconsistent-offsets"},
		{name: "nothing acknowledged", owned: []int64{2, 2, 2}, wantOwns: true, wantProblem: "no record acknowledged"},
		{name: "committed offsets backwards", owned: []int64{2, 2, 2}, acked: 10, backwards: true, wantOwns: true, wantProblem: "went backwards"},
		{name: "a log read in part", owned: []int64{2, 2, 2}, acked: 10, failed: []string{"the log of pod x ended while its tool still runs"}, wantOwns: true, wantProblem: "ended while"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &javaClients{owned: make([]atomic.Int64, len(tt.owned)), failed: tt.failed, tools: map[string]*toolRun{}}
			for i, n := range tt.owned {
				j.owned[i].Store(n)
			}
			j.acked.Store(tt.acked)
			j.committed.observe(time.Unix(1, 0), map[int32]kadm.OffsetResponse{0: {Offset: kadm.Offset{At: 10}}})
			if tt.backwards {
				j.committed.observe(time.Unix(2, 0), map[int32]kadm.OffsetResponse{0: {Offset: kadm.Offset{At: 5}}})
			}
			if err := javaclients.GroupOwns(j.owned, 6); (err == nil) != tt.wantOwns {
				t.Errorf("GroupOwns = %v, want settled %v", err, tt.wantOwns)
			}
			if j.Checks() != nil {
				t.Error("checks before Finish")
			}
			j.res = &tt.res
			checks := j.Checks()
			if len(checks) != 1 || checks[0].Name != report.CheckJava {
				t.Fatalf("checks %+v", checks)
			}
			got := strings.Join(checks[0].Problems, "; ")
			if (tt.wantProblem == "") != (got == "") || !strings.Contains(got, tt.wantProblem) {
				t.Errorf("problems %q, want %q", got, tt.wantProblem)
			}
			var o Outcome
			j.Record(&o)
			if o.Java != j.res {
				t.Error("the outcome does not hold the Java clients' result")
			}
		})
	}
	if d := (JavaSettings{}).WithDefaults(); d.Members != 3 || d.Protocol != "classic" || d.Rate != 200 {
		t.Errorf("defaults %+v", d)
	}
}
