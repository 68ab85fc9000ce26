package kafkaadmin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestPartitionLeader(t *testing.T) {
	c, cl := fakeCluster(t, 3, 4)
	check := func() {
		t.Helper()
		for p := range int32(4) {
			got, err := cl.PartitionLeader(t.Context(), "t", p)
			if want := c.LeaderFor("t", p); err != nil || got != want {
				t.Errorf("PartitionLeader(t, %d) = %d, %v; want %d", p, got, err, want)
			}
		}
	}
	check()
	c.ShufflePartitionLeaders()
	check() // fresh metadata, not the client's cache
	real := func(*testing.T) *Client { return cl }

	errTests := []struct {
		name      string
		kafka     func(*testing.T) *Client
		expired   bool // ask with a context past its deadline
		topic     string
		partition int32
		want      string
		is        error
	}{
		{name: "unknown topic", kafka: real, topic: "nope", want: "kafkaadmin: leader of nope-0: topic nope: UNKNOWN_TOPIC_OR_PARTITION", is: kerr.UnknownTopicOrPartition},
		{name: "no such partition", kafka: real, topic: "t", partition: 9, want: "kafkaadmin: leader of t-9: topic has 4 partitions"},
		{
			name:  "no leader",
			kafka: fakeKafka{metadata: metadata([]int32{0, 1, 2}, [2][]int32{{1}, {}})}.client,
			topic: "t", want: "kafkaadmin: leader of t-0: no leader (LEADER_NOT_AVAILABLE", is: ErrNoLeader,
		},
		{name: "request fails", kafka: real, expired: true, topic: "t", want: "metadata request: context deadline exceeded", is: context.DeadlineExceeded},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			if tt.expired {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, time.Now())
				defer cancel()
			}
			got, err := tt.kafka(t).PartitionLeader(ctx, tt.topic, tt.partition)
			if err == nil || !strings.Contains(err.Error(), tt.want) || got != -1 {
				t.Fatalf("PartitionLeader() = %d, %v; want -1 and an error containing %q", got, err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("PartitionLeader() error = %v; want it to wrap %v", err, tt.is)
			}
		})
	}
}

func TestClusterID(t *testing.T) {
	_, cl := fakeCluster(t, 3, 1, kfake.ClusterID("kafkachaos-test"))
	tests := []struct {
		name    string
		kafka   func(*testing.T) *Client
		want    string
		wantErr string
	}{
		{name: "kfake", kafka: func(*testing.T) *Client { return cl }, want: "kafkachaos-test"},
		{name: "canned", kafka: fakeKafka{metadata: metadata([]int32{0})}.client, want: testCluster},
		{name: "none", kafka: fakeKafka{metadata: kmsg.NewPtrMetadataResponse()}.client, wantErr: "the metadata answer carries none"},
		{name: "request fails", kafka: fakeKafka{unreachable: true}.client, wantErr: "kafkaadmin: cluster ID: metadata request: unable to dial"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.kafka(t).ClusterID(t.Context())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ClusterID() = %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ClusterID() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestLeaders(t *testing.T) {
	c, cl := fakeCluster(t, 3, 4)
	for range 2 { // fresh metadata after the shuffle
		got, err := cl.Leaders(t.Context(), "t")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 {
			t.Fatalf("Leaders = %v, want 4 partitions", got)
		}
		for p, id := range got {
			if want := c.LeaderFor("t", p); id != want {
				t.Errorf("leader of t-%d = %d, want %d", p, id, want)
			}
		}
		c.ShufflePartitionLeaders()
	}
	if _, err := cl.Leaders(t.Context(), "nope"); err == nil {
		t.Error("Leaders of an unknown topic: no error")
	}
}

func TestControllerBroker(t *testing.T) {
	tests := []struct {
		name    string
		kafka   fakeKafka
		want    int32
		wantErr error
	}{
		{name: "named", kafka: fakeKafka{metadata: controlledBy(2, metadata([]int32{0, 1, 2}))}, want: 2},
		{name: "none", kafka: fakeKafka{metadata: controlledBy(-1, metadata([]int32{0, 1, 2}))}, want: -1, wantErr: ErrNoLeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.kafka.client(t).ControllerBroker(t.Context())
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Fatalf("ControllerBroker() = %d, %v; want %d, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
