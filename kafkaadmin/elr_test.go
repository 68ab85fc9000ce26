package kafkaadmin

import (
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestEligibilities(t *testing.T) {
	partition := func(id, leader int32, isr, elr, lastKnown []int32, code int16) kmsg.DescribeTopicPartitionsResponseTopicPartition {
		p := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
		p.Partition, p.LeaderID, p.ISR, p.EligibleLeaderReplicas, p.LastKnownELR, p.ErrorCode = id, leader, isr, elr, lastKnown, code
		return p
	}
	answer := func(name string, code int16, ps ...kmsg.DescribeTopicPartitionsResponseTopicPartition) *kmsg.DescribeTopicPartitionsResponse {
		resp := kmsg.NewPtrDescribeTopicPartitionsResponse()
		t := kmsg.NewDescribeTopicPartitionsResponseTopic()
		t.Topic, t.ErrorCode, t.Partitions = &name, code, ps
		resp.Topics = append(resp.Topics, t)
		return resp
	}
	for _, tc := range []struct {
		name    string
		resp    *kmsg.DescribeTopicPartitionsResponse
		want    map[int32]Eligibility
		wantErr string
	}{
		{"a leader with its ISR", answer("t", 0, partition(0, 2, []int32{2, 0, 1}, nil, nil, 0)),
			map[int32]Eligibility{0: {Leader: 2, ISR: []int32{0, 1, 2}, ELR: []int32{}, LastKnownELR: []int32{}}}, ""},
		{"leaderless, its ELR sorted, leader not available is no error", answer("t", 0,
			partition(0, -1, nil, []int32{2, 1}, []int32{2}, kerr.LeaderNotAvailable.Code),
			partition(1, 1, []int32{1}, []int32{0}, nil, 0)),
			map[int32]Eligibility{
				0: {Leader: -1, ISR: []int32{}, ELR: []int32{1, 2}, LastKnownELR: []int32{2}},
				1: {Leader: 1, ISR: []int32{1}, ELR: []int32{0}, LastKnownELR: []int32{}},
			}, ""},
		{"the topic's error", answer("t", kerr.UnknownTopicOrPartition.Code), nil, "UNKNOWN_TOPIC_OR_PARTITION"},
		{"a partition's error", answer("t", 0, partition(3, -1, nil, nil, nil, kerr.UnknownServerError.Code)), nil, "t/3"},
		{"another topic only", answer("u", 0), nil, "no such topic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := eligibilities(tc.resp, "t")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for id, e := range got { // nil and empty alike
				for _, s := range []*[]int32{&e.ISR, &e.ELR, &e.LastKnownELR} {
					if *s == nil {
						*s = []int32{}
					}
				}
				got[id] = e
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
