package javaclients

import (
	"errors"
	"testing"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

// Lines as Kafka 4.4.0's tools print them.
const (
	sendOK     = `{"timestamp":1765072800123,"name":"producer_send_success","key":null,"value":"7.42","topic":"t","partition":2,"offset":1043}`
	sendFailed = `{"timestamp":1765072800124,"name":"producer_send_error","exception":"class org.apache.kafka.common.errors.TimeoutException","message":"Expiring 1 record(s)","topic":"t","key":null,"value":"7.43"}`
	assigned   = `{"timestamp":1765072800200,"name":"partitions_assigned","partitions":[{"topic":"t","partition":0},{"topic":"t","partition":2},{"topic":"other","partition":1}]}`
	revoked    = `{"timestamp":1765072800300,"name":"partitions_revoked","partitions":[{"topic":"t","partition":2}]}`
	consumed   = `{"timestamp":1765072800250,"name":"records_consumed","count":12,"partitions":[{"topic":"t","partition":0,"count":10,"minOffset":100,"maxOffset":109},{"topic":"t","partition":2,"count":2,"minOffset":7,"maxOffset":8}]}`
	committed  = `{"timestamp":1765072800260,"name":"offsets_committed","offsets":[{"topic":"t","partition":0,"offset":110}],"success":true}`
	commitFail = `{"timestamp":1765072800261,"name":"offsets_committed","offsets":[{"topic":"t","partition":0,"offset":110}],"error":"fenced","success":false}`
	record     = `{"timestamp":1765072800251,"name":"record_data","key":null,"value":"7.42","topic":"t","partition":2,"offset":1043}`
)

func TestParse(t *testing.T) {
	tests := []struct {
		line string
		want groupcheck.Kind // the first group event's kind, "" for none
		n    int             // group events
	}{
		{sendOK, "", 0}, {sendFailed, "", 0}, {consumed, "", 0}, {commitFail, "", 0},
		{assigned, groupcheck.Assigned, 2}, {revoked, groupcheck.Revoked, 1},
		{record, groupcheck.Polled, 1}, {committed, groupcheck.Committed, 1},
	}
	for _, tt := range tests {
		e, err := Parse([]byte(tt.line))
		if err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		g := e.GroupEvents("m0", "t")
		if len(g) != tt.n || (tt.n > 0 && g[0].Kind != tt.want) {
			t.Errorf("%s: group events %v, want %d of kind %q first", e.Name, g, tt.n, tt.want)
		}
	}
	e, _ := Parse([]byte(sendOK))
	if e.Partition != 2 || e.Offset != 1043 || e.Value == nil || *e.Value != "7.42" || e.Key != nil || e.At().UnixMilli() != 1765072800123 {
		t.Errorf("send: %+v", e)
	}
	e, _ = Parse([]byte(record))
	if g := e.GroupEvents("m0", "t"); g[0].First != 1043 || g[0].Last != 1043 || g[0].Partition != 2 {
		t.Errorf("poll events %+v", g)
	}
	for _, bad := range []string{"", "SLF4J: no binding", `{"name":"nope"}`, `[1,2]`, `{"name":3}`} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrNotEvent) {
			t.Errorf("%q: %v, want ErrNotEvent", bad, err)
		}
	}
}

// FuzzParse: the tools' output is another process's; no line may panic,
// and a parsed line's group events name only the topic asked for.
func FuzzParse(f *testing.F) {
	for _, s := range []string{sendOK, sendFailed, assigned, revoked, consumed, committed, commitFail, record, shareConsumed, shareAcked, shareAckFail, shareReset, "", "{}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := Parse(line)
		if err != nil {
			return
		}
		for _, g := range e.GroupEvents("m", "t") {
			if g.Kind == groupcheck.Polled && g.Last < g.First {
				t.Errorf("a poll from %d to %d", g.First, g.Last)
			}
		}
	})
}
