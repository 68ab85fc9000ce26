package kafkaadmin

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

func TestKafkaVersions(t *testing.T) {
	tests := []struct {
		name  string
		kafka *kversion.Versions
		want  string
	}{
		{"Kafka 3.9", kversion.V3_9_0(), "v3.9"},
		{"Kafka 4.0", kversion.V4_0_0(), "v4.0"},
		{"Kafka 4.4", kversion.V4_4_0(), "v4.4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, cl := fakeCluster(t, 3, 1)
			answerAPIVersions(c, tt.kafka)
			got, err := cl.KafkaVersions(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if ids := slices.Sorted(maps.Keys(got)); !slices.Equal(ids, []int32{0, 1, 2}) {
				t.Errorf("versions of brokers %v, want 0, 1 and 2", ids)
			}
			for id, v := range got {
				if v != tt.want {
					t.Errorf("broker %d: %q, want %q", id, v, tt.want)
				}
			}
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, cl := fakeCluster(t, 1, 1)
	if _, err := cl.KafkaVersions(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("with a canceled context: %v, want context.Canceled", err)
	}
}

// answerAPIVersions makes c's brokers answer ApiVersions requests as the
// Kafka release vs does (kfake itself answers with the few it serves).
func answerAPIVersions(c *kfake.Cluster, vs *kversion.Versions) {
	c.ControlKey(int16(kmsg.ApiVersions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.ApiVersionsResponse)
		vs.EachMaxKeyVersion(func(k, v int16) {
			key := kmsg.NewApiVersionsResponseApiKey()
			key.ApiKey, key.MaxVersion = k, v
			resp.ApiKeys = append(resp.ApiKeys, key)
		})
		return resp, nil, true
	})
}
