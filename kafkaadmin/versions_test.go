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
// Kafka release vs does (kfake itself answers with the few it serves);
// each of more then adds to the answer.
func answerAPIVersions(c *kfake.Cluster, vs *kversion.Versions, more ...func(*kmsg.ApiVersionsResponse)) {
	c.ControlKey(int16(kmsg.ApiVersions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.ApiVersionsResponse)
		vs.EachMaxKeyVersion(func(k, v int16) {
			key := kmsg.NewApiVersionsResponseApiKey()
			key.ApiKey, key.MaxVersion = k, v
			resp.ApiKeys = append(resp.ApiKeys, key)
		})
		for _, m := range more {
			m(resp)
		}
		return resp, nil, true
	})
}

func TestFeatures(t *testing.T) {
	tests := []struct {
		name      string
		supported int16 // the brokers' highest metadata.version; 0: no features at all
		finalized int16
		want      Features
	}{
		{"Kafka 4.3 at its own level", 27, 27, Features{Version: "v4.3", MaxMetadataVersion: 27, MetadataVersion: 27, Epoch: 7}},
		{"Kafka 4.4 at 4.3's level", 29, 27, Features{Version: "v4.4", MaxMetadataVersion: 29, MetadataVersion: 27, Epoch: 7,
			MaxTransactionVersion: 2, TransactionVersion: 1, ShareVersion: 1}},
		{"no features", 0, 0, Features{Version: "v4.4", Epoch: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, cl := fakeCluster(t, 3, 1)
			vs := kversion.V4_4_0()
			if tt.want.Version == "v4.3" {
				vs = kversion.V4_3_0()
			}
			answerAPIVersions(c, vs, func(resp *kmsg.ApiVersionsResponse) {
				resp.FinalizedFeaturesEpoch = 7
				if tt.supported > 0 {
					s := kmsg.NewApiVersionsResponseSupportedFeature()
					s.Name, s.MinVersion, s.MaxVersion = MetadataVersionFeature, 7, tt.supported
					other := kmsg.NewApiVersionsResponseSupportedFeature()
					other.Name, other.MaxVersion = "kraft.version", 1
					resp.SupportedFeatures = append(resp.SupportedFeatures, other, s)
					f := kmsg.NewApiVersionsResponseFinalizedFeature()
					f.Name, f.MinVersionLevel, f.MaxVersionLevel = MetadataVersionFeature, tt.finalized, tt.finalized
					resp.FinalizedFeatures = append(resp.FinalizedFeatures, f)
				}
				if tt.want.MaxTransactionVersion > 0 {
					s := kmsg.NewApiVersionsResponseSupportedFeature()
					s.Name, s.MaxVersion = TransactionVersionFeature, tt.want.MaxTransactionVersion
					resp.SupportedFeatures = append(resp.SupportedFeatures, s)
					f := kmsg.NewApiVersionsResponseFinalizedFeature()
					f.Name, f.MaxVersionLevel = TransactionVersionFeature, tt.want.TransactionVersion
					resp.FinalizedFeatures = append(resp.FinalizedFeatures, f)
				}
				if tt.want.ShareVersion > 0 {
					f := kmsg.NewApiVersionsResponseFinalizedFeature()
					f.Name, f.MaxVersionLevel = ShareVersionFeature, tt.want.ShareVersion
					resp.FinalizedFeatures = append(resp.FinalizedFeatures, f)
				}
			})
			got, err := cl.Features(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 {
				t.Fatalf("features of %d brokers, want 3", len(got))
			}
			for id, f := range got {
				if f != tt.want {
					t.Errorf("broker %d: %+v, want %+v", id, f, tt.want)
				}
			}
		})
	}
}
