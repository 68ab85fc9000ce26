package kafkaadmin

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestBrokerConfigs(t *testing.T) {
	_, cl := fakeCluster(t, 3, 1, kfake.BrokerConfigs(map[string]string{"min.insync.replicas": "2", "default.replication.factor": "3"}))
	tests := []struct {
		name    string
		keys    []string
		want    map[string]string
		wantErr string
	}{
		{name: "asked keys only", keys: []string{"min.insync.replicas", "default.replication.factor"},
			want: map[string]string{"min.insync.replicas": "2", "default.replication.factor": "3"}},
		{name: "one key", keys: []string{"min.insync.replicas"}, want: map[string]string{"min.insync.replicas": "2"}},
		{name: "unknown key", keys: []string{"no.such.config"}, want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cl.BrokerConfigs(t.Context(), 1, tt.keys...)
			if err != nil || !maps.Equal(got, tt.want) {
				t.Fatalf("BrokerConfigs(1, %q) = %v, %v; want %v", tt.keys, got, err, tt.want)
			}
		})
	}
	if v, err := cl.BrokerConfig(t.Context(), 2, "min.insync.replicas"); err != nil || v != "2" {
		t.Errorf("BrokerConfig(2, min.insync.replicas) = %q, %v; want 2", v, err)
	}
	if _, err := cl.BrokerConfig(t.Context(), 2, "no.such.config"); err == nil || !strings.Contains(err.Error(), "kafkaadmin: broker 2 did not describe config no.such.config") {
		t.Errorf("BrokerConfig(2, no.such.config) error = %v; want one saying the broker did not describe it", err)
	}
}

func TestBrokerHosts(t *testing.T) {
	c, cl := fakeCluster(t, 3, 1)
	got, err := cl.BrokerHosts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]string{}
	for i, addr := range c.ListenAddrs() {
		host, _, _ := strings.Cut(addr, ":")
		want[int32(i)] = host
	}
	if !maps.Equal(got, want) {
		t.Errorf("BrokerHosts() = %v; want %v", got, want)
	}
}

// unregisterKafka answers UnregisterBroker with a fixed error code.
type unregisterKafka struct{ code int16 }

func (k unregisterKafka) Request(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	if _, ok := req.(*kmsg.UnregisterBrokerRequest); !ok {
		return nil, fmt.Errorf("unexpected %T", req)
	}
	resp := kmsg.NewPtrUnregisterBrokerResponse()
	resp.ErrorCode = k.code
	return resp, nil
}

func (k unregisterKafka) RequestBroker(ctx context.Context, _ int32, req kmsg.Request) (kmsg.Response, error) {
	return k.Request(ctx, req)
}

// kfake does not implement UnregisterBroker: Unregister is tested against
// canned answers.
func TestUnregister(t *testing.T) {
	for _, tt := range []struct {
		name    string
		code    int16
		wantErr bool
	}{
		{"unregistered", 0, false},
		{"already gone", kerr.BrokerIDNotRegistered.Code, false},
		{"still running", kerr.InvalidRequest.Code, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := (&Client{raw: unregisterKafka{tt.code}}).Unregister(t.Context(), 3)
			if (err != nil) != tt.wantErr {
				t.Errorf("Unregister = %v, want error %t", err, tt.wantErr)
			}
		})
	}
}
