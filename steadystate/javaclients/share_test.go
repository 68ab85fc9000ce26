package javaclients

import (
	"strings"
	"testing"
	"time"
)

// Lines as Kafka 4.4.0's VerifiableShareConsumer prints them.
const (
	shareConsumed = `{"timestamp":1765072800250,"name":"records_consumed","count":2,"partitions":[{"topic":"t","partition":0,"count":2,"offsets":[4,5]}]}`
	shareAcked    = `{"timestamp":1765072800260,"name":"offsets_acknowledged","count":2,"partitions":[{"topic":"t","partition":0,"count":2,"offsets":[4,5]}],"success":true}`
	shareAckFail  = `{"timestamp":1765072800261,"name":"offsets_acknowledged","count":1,"partitions":[{"topic":"t","partition":1,"count":1,"offsets":[9]}],"error":"The record state is invalid.","success":false}`
	shareReset    = `{"timestamp":1765072800100,"name":"offset_reset_strategy_set","offsetResetStrategy":"earliest"}`
)

func TestParseShare(t *testing.T) {
	for _, line := range []string{shareConsumed, shareAcked, shareAckFail, shareReset} {
		if _, err := Parse([]byte(line)); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	e, _ := Parse([]byte(shareAcked))
	if !e.Success || len(e.Partitions) != 1 || len(e.Partitions[0].Offsets) != 2 || e.Partitions[0].Offsets[1] != 5 {
		t.Errorf("acknowledged: %+v", e)
	}
	e, _ = Parse([]byte(shareAckFail))
	if e.Success || e.Error == "" || e.Partitions[0].Partition != 1 || e.Partitions[0].Offsets[0] != 9 {
		t.Errorf("failed acknowledgement: %+v", e)
	}
}

func ack(ok bool, p int32, offsets ...int64) Event {
	return Event{Name: OffsetsAcknowledged, Timestamp: 3, Success: ok, Partitions: []Partition{{Topic: "t", Partition: p, Offsets: offsets}}}
}

// said is one member's event.
type said struct {
	member string
	e      Event
}

func TestShareVerifier(t *testing.T) {
	delivered := func(m string, off int64) said { return said{m, rec(0, off, "1."+string(rune('0'+off)))} }
	accepted := func(m string, off ...int64) said { return said{m, ack(true, 0, off...)} }
	refused := func(m string, off ...int64) said { return said{m, ack(false, 0, off...)} }
	tests := []struct {
		name    string
		acked   int64 // offsets 0 to acked-1 acknowledged to the producer
		events  []said
		gone    string // a member killed after its events
		clean   bool
		drained bool // through offset acked
		want    string
	}{
		{"each record delivered once and accepted", 2, []said{delivered("m0", 0), delivered("m1", 1), accepted("m0", 0), accepted("m1", 1)}, "", true, true, ""},
		{"a lock that expired: the ack refused, the record redelivered and accepted", 1,
			[]said{delivered("m0", 0), delivered("m1", 0), accepted("m1", 0), refused("m0", 0)}, "", true, true, ""},
		{"a member killed holding a record: its outcome unseen", 1, []said{delivered("m0", 0)}, "m0", true, true, ""},
		{"an acknowledged record never delivered", 2, []said{delivered("m0", 0), accepted("m0", 0)}, "", false, false, "lost: 1; partition 0 offset 1"},
		{"a record accepted by two members", 1, []said{delivered("m0", 0), accepted("m0", 0), delivered("m1", 0), accepted("m1", 0)}, "", false, true, "accepted-twice: 1"},
		{"a record delivered past the limit", 1, []said{
			delivered("m0", 0), refused("m0", 0), delivered("m0", 0), refused("m0", 0), delivered("m0", 0), refused("m0", 0),
			delivered("m0", 0), refused("m0", 0), delivered("m0", 0), refused("m0", 0), delivered("m1", 0), accepted("m1", 0)}, "", false, true, "delivered-over-the-limit: 1"},
		{"a live member that never acknowledged", 1, []said{delivered("m0", 0)}, "", false, false, "never-acknowledged: 1"},
		{"another value at an acknowledged offset", 1, []said{{"m0", rec(0, 0, "9.9")}, accepted("m0", 0)}, "", false, true, "inconsistent-offsets: 1"},
		{"nothing delivered", 0, nil, "", false, true, "delivered nothing"},
		{"a failed ack, then a live member that never acknowledged the redelivery", 1,
			[]said{delivered("m0", 0), refused("m0", 0), delivered("m1", 0)}, "", false, false, "never-acknowledged: 1"},
		{"a failed ack from a member that no longer held the record settles nothing", 1,
			[]said{delivered("m0", 0), delivered("m1", 0), refused("m0", 0)}, "", false, false, "never-acknowledged: 1"},
		{"one delivery reported accepted twice by its member", 1, []said{delivered("m0", 0), accepted("m0", 0), accepted("m0", 0)}, "", true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewShareVerifier("t", time.UnixMilli(0), []int64{0}, DefaultDeliveryLimit)
			for _, s := range tt.events {
				v.Consumer(s.member, s.e)
			}
			for off := range tt.acked {
				v.Producer(send(0, off, "1."+string(rune('0'+off))))
			}
			if tt.gone != "" {
				v.Gone(tt.gone, time.UnixMilli(4))
			}
			if got := v.ProcessedThrough([]int64{tt.acked}); got != tt.drained {
				t.Errorf("drained %t, want %t", got, tt.drained)
			}
			res := v.Result(time.UnixMilli(5))
			if res.Share == nil {
				t.Fatal("no share verdict")
			}
			if res.Clean() != tt.clean || !strings.Contains(strings.Join(res.Problems(), "\n"), tt.want) {
				t.Errorf("clean %t, problems %q; want clean %t and %q", res.Clean(), res.Problems(), tt.clean, tt.want)
			}
		})
	}
}

// The figures: a redelivery after a refused acknowledgement, a record
// before the group's start ignored, an unseen outcome.
func TestShareFigures(t *testing.T) {
	v := NewShareVerifier("t", time.UnixMilli(0), []int64{10}, DefaultDeliveryLimit)
	for _, e := range []said{
		{"m0", rec(0, 5, "0.0")}, // before the run
		{"m0", rec(0, 10, "1.0")}, {"m0", ack(false, 0, 10)}, {"m1", rec(0, 10, "1.0")}, {"m1", ack(true, 0, 10)},
		{"m2", rec(0, 11, "1.1")},
	} {
		v.Consumer(e.member, e.e)
	}
	v.Producer(send(0, 10, "1.0"))
	v.Producer(send(0, 11, "1.1"))
	v.Gone("m2", time.UnixMilli(4))
	r := v.Result(time.UnixMilli(5)).Share
	want := ShareResult{DeliveryLimit: 5, Acked: 2, Delivered: 2, Deliveries: 3, Redelivered: 1, MostDeliveries: 2, Accepted: 1, FailedAcks: 1, Unseen: 1}
	if r.Acked != want.Acked || r.Delivered != want.Delivered || r.Deliveries != want.Deliveries || r.Redelivered != want.Redelivered ||
		r.MostDeliveries != want.MostDeliveries || r.Accepted != want.Accepted || r.FailedAcks != want.FailedAcks || r.Unseen != want.Unseen {
		t.Errorf("figures %+v, want %+v", *r, want)
	}
}

// Lines from another process may name any topic, partition or offset: none
// may panic or grow the record book past the run's.
func TestShareHostileInput(t *testing.T) {
	v := NewShareVerifier("t", time.UnixMilli(0), []int64{0, -1}, DefaultDeliveryLimit)
	huge := int64(1) << 62
	for _, e := range []Event{
		{Name: RecordData, Topic: "other", Partition: 0, Offset: maxShareSpan - 1},
		{Name: RecordData, Topic: "t", Partition: 0, Offset: huge},
		{Name: RecordData, Topic: "t", Partition: -3, Offset: 1},
		{Name: RecordData, Topic: "t", Partition: 1, Offset: 1<<63 - 1},
		{Name: OffsetsAcknowledged, Success: true, Partitions: []Partition{{Topic: "other", Partition: 0, Offsets: []int64{maxShareSpan - 1}}, {Topic: "t", Partition: 7}}},
	} {
		v.Consumer("m0", e)
	}
	if n := len(v.share.recs[0]) + len(v.share.recs[1]); n != 0 {
		t.Errorf("%d records kept for lines outside the run", n)
	}
}
