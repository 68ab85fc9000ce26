package kafkaadmin

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kfake does not implement DescribeQuorum: ActiveController is tested
// against canned answers.
func TestActiveController(t *testing.T) {
	caughtUp := map[int32][2]int64{0: {100, 1}, 1: {100, 1}, 2: {100, 1}}
	tests := []struct {
		name    string
		kafka   fakeKafka
		want    int32
		wantErr string
		is      error
	}{
		{name: "leader", kafka: fakeKafka{quorum: quorum(2, caughtUp)}, want: 2},
		{name: "no leader", kafka: fakeKafka{quorum: quorum(-1, caughtUp)}, want: -1, wantErr: "kafkaadmin: active controller: quorum at epoch 3: no leader", is: ErrNoLeader},
		{
			name: "error code",
			kafka: fakeKafka{quorum: func() *kmsg.DescribeQuorumResponse {
				r := quorum(0, caughtUp)
				r.Topics[0].Partitions[0].ErrorCode = kerr.NotLeaderForPartition.Code
				return r
			}()},
			want: -1, wantErr: "describe quorum: __cluster_metadata partition 0: NOT_LEADER_FOR_PARTITION", is: kerr.NotLeaderForPartition,
		},
		{name: "request fails", kafka: fakeKafka{quorumErr: errors.New("boom")}, want: -1, wantErr: "describe quorum request: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.kafka.client(t).ActiveController(t.Context())
			if got != tt.want {
				t.Errorf("ActiveController() = %d; want %d", got, tt.want)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("ActiveController() error = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("ActiveController() error = %v; want one containing %q", err, tt.wantErr)
			case tt.is != nil && !errors.Is(err, tt.is):
				t.Errorf("ActiveController() error = %v; want it to wrap %v", err, tt.is)
			}
		})
	}
}

// A directory ID reads as Kafka writes it in meta.properties; the zero
// UUID (a static quorum's voters) as none.
func TestUUIDString(t *testing.T) {
	tests := []struct {
		name string
		u    [16]byte
		want string
	}{
		{"zero", [16]byte{}, ""},
		{"the dynamic-quorum layout's node 2", [16]byte{0xe6, 0x25, 0x59, 0x3d, 0x4b, 0x1b, 0x4e, 0xd4, 0x85, 0xa5, 0x3b, 0xd4, 0xd9, 0x94, 0x73, 0x9e}, "5iVZPUsbTtSFpTvU2ZRzng"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UUIDString(tt.u); got != tt.want {
				t.Errorf("UUIDString(%x) = %q, want %q", tt.u, got, tt.want)
			}
		})
	}
}

// ParseUUID reads what UUIDString writes, and refuses what is not one.
func TestParseUUID(t *testing.T) {
	tests := []struct {
		in      string
		wantErr bool
	}{
		{in: "5iVZPUsbTtSFpTvU2ZRzng"},
		{in: "iXmNKuthQBm8Z5VOvwAEuA"},
		{in: "", wantErr: true},
		{in: "5iVZPUsbTtSFpTvU2ZRz", wantErr: true},
		{in: "5iVZPUsbTtSFpTvU2ZRzng==", wantErr: true},
		{in: "not base64 at all!!!!!", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			u, err := ParseUUID(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseUUID(%q) = %x, %v; want an error: %t", tt.in, u, err, tt.wantErr)
			}
			if err == nil && UUIDString(u) != tt.in {
				t.Errorf("UUIDString(ParseUUID(%q)) = %q", tt.in, UUIDString(u))
			}
		})
	}
}
