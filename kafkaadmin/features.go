package kafkaadmin

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
)

// MetadataVersionFeature is the KRaft feature whose level says which
// metadata records the cluster writes (metadata.version, KIP-778): an
// upgraded cluster runs at its old level until it is raised.
const MetadataVersionFeature = "metadata.version"

// TransactionVersionFeature is the feature whose level says which
// transaction protocol the cluster runs (transaction.version, KIP-890: 2
// is its second part). Raising metadata.version does not raise it.
const TransactionVersionFeature = "transaction.version"

// ShareVersionFeature is the feature whose level turns share groups on
// (share.version, KIP-932): 1 or more serves them.
const ShareVersionFeature = "share.version"

// Features is what one broker says of itself and of the cluster's
// feature levels (KIP-584) in its ApiVersions answer.
type Features struct {
	// Version is the broker's Kafka version as guessed from its API
	// versions (see KafkaVersions).
	Version string
	// MaxMetadataVersion is the highest metadata.version level the
	// broker's software supports (its release's latest production level);
	// 0 if it did not say.
	MaxMetadataVersion int16
	// MetadataVersion is the finalized metadata.version level the broker
	// knows; 0 if none.
	MetadataVersion int16
	// Epoch is the epoch of the finalized features it knows.
	Epoch int64
	// MaxTransactionVersion and TransactionVersion are the same for
	// transaction.version.
	MaxTransactionVersion int16
	TransactionVersion    int16
	// ShareVersion is the finalized share.version level the broker knows.
	ShareVersion int16
	// MaxELRVersion and ELRVersion are the same for
	// eligible.leader.replicas.version (0 from a broker older than 4.0).
	MaxELRVersion int16
	ELRVersion    int16
}

// Features asks every broker for its ApiVersions: its version, the
// metadata.version levels its software supports, and the finalized level
// it knows, by node ID. A broker that did not answer is left out.
func (c *Client) Features(ctx context.Context) (map[int32]Features, error) {
	vs, err := c.adm.ApiVersions(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafkaadmin: features: %w", err)
	}
	out := make(map[int32]Features, len(vs))
	for id, v := range vs {
		if v.Err != nil || v.Raw() == nil {
			continue
		}
		raw := v.Raw()
		f := Features{Version: v.VersionGuess(), Epoch: raw.FinalizedFeaturesEpoch}
		for _, s := range raw.SupportedFeatures {
			switch s.Name {
			case MetadataVersionFeature:
				f.MaxMetadataVersion = s.MaxVersion
			case TransactionVersionFeature:
				f.MaxTransactionVersion = s.MaxVersion
			case ELRVersionFeature:
				f.MaxELRVersion = s.MaxVersion
			}
		}
		for _, s := range raw.FinalizedFeatures {
			switch s.Name {
			case MetadataVersionFeature:
				f.MetadataVersion = s.MaxVersionLevel
			case TransactionVersionFeature:
				f.TransactionVersion = s.MaxVersionLevel
			case ShareVersionFeature:
				f.ShareVersion = s.MaxVersionLevel
			case ELRVersionFeature:
				f.ELRVersion = s.MaxVersionLevel
			}
		}
		out[id] = f
	}
	return out, nil
}

// UpgradeMetadataVersion raises the finalized metadata.version to level, as
// kafka-features upgrade --metadata does. It cannot be undone: a lower
// level needs an unsafe downgrade that Kafka refuses for most levels.
func (c *Client) UpgradeMetadataVersion(ctx context.Context, level int16) error {
	return c.UpgradeFeature(ctx, MetadataVersionFeature, level)
}

// UpgradeFeature raises the finalized level of feature to level, as
// kafka-features upgrade --feature does.
func (c *Client) UpgradeFeature(ctx context.Context, feature string, level int16) error {
	res, err := c.adm.UpdateFeatures(ctx, false, kadm.FeatureUpdate{Feature: feature, MaxVersionLevel: level, UpgradeType: 1})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		return fmt.Errorf("kafkaadmin: raise %s to level %d: %w", feature, level, err)
	}
	return nil
}
