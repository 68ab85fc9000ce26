package steadystate

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// failListOffsets makes the first n ListOffsets requests to c fail with code
// in every partition, and counts the requests in calls.
func failListOffsets(c *kfake.Cluster, n int64, code int16, calls *atomic.Int64) {
	c.ControlKey(int16(kmsg.ListOffsets), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if calls.Add(1) > n {
			return nil, nil, false
		}
		req := kr.(*kmsg.ListOffsetsRequest)
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

func TestEndOffsets(t *testing.T) {
	tests := []struct {
		name      string
		fails     int64
		code      int16
		wantErr   error // nil: the offsets are listed
		wantCalls int64 // the ListOffsets requests at most
	}{
		{name: "listed at once", wantCalls: 1},
		{name: "a moved leader is retried", fails: 3, code: kerr.NotLeaderForPartition.Code, wantCalls: 100},
		{name: "other errors end the poll at once", fails: 100, code: kerr.TopicAuthorizationFailed.Code,
			wantErr: kerr.TopicAuthorizationFailed, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One broker: one ListOffsets request an attempt.
			c, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatalf("kfake: %v", err)
			}
			defer c.Close()
			cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			adm := kadm.NewClient(cl)
			ctx, cancel := context.WithTimeout(t.Context(), fakeRunTimeout)
			defer cancel()
			if _, err := adm.CreateTopic(ctx, 3, 1, nil, "t"); err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int64
			failListOffsets(c, tt.fails, tt.code, &calls)
			offs, err := endOffsets(ctx, adm, "t", 3)
			switch {
			case tt.wantErr == nil && (err != nil || len(offs) != 3):
				t.Errorf("endOffsets = %v, %v; want 3 offsets", offs, err)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Errorf("endOffsets = %v, %v; want an error wrapping %v", offs, err, tt.wantErr)
			}
			if n := calls.Load(); n > tt.wantCalls || tt.wantErr == nil && n <= tt.fails {
				t.Errorf("%d ListOffsets requests; want at most %d, and past the %d failing ones when the offsets are listed", n, tt.wantCalls, tt.fails)
			}
		})
	}
}

func TestPollError(t *testing.T) {
	last := errors.New("2 of 3 partitions have no leader")
	tests := []struct {
		name string
		last error
		want string
	}{
		{"says what it saw last", last, "steadystate: topic t not ready after 1m0s: context deadline exceeded; last seen: 2 of 3 partitions have no leader"},
		{"saw nothing", nil, "steadystate: topic t not ready after 1m0s: context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pollError("topic t not ready", topicReadyTimeout, context.DeadlineExceeded, tt.last)
			if err.Error() != tt.want {
				t.Errorf("error %q, want %q", err, tt.want)
			}
			if !errors.Is(err, context.DeadlineExceeded) || tt.last != nil && !errors.Is(err, tt.last) {
				t.Errorf("error %v does not wrap the wait's error and the last seen", err)
			}
			if tt.last == nil && strings.Contains(err.Error(), "last seen") {
				t.Errorf("error %q claims a last state", err)
			}
		})
	}
}
