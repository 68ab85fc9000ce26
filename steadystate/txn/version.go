package txn

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// transactionVersion is the cluster's finalized transaction.version
// feature (2: KIP-890's second part, the default of new Kafka 4.x
// clusters), as ApiVersions reports it; 0 when the cluster finalized none
// (before Kafka 3.8, and clusters that never raised it), -1 when it could
// not be asked.
func transactionVersion(ctx context.Context, cl *kgo.Client) int16 {
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 {
		return -1
	}
	for _, f := range resp.FinalizedFeatures {
		if f.Name == "transaction.version" {
			return f.MaxVersionLevel
		}
	}
	return 0
}
