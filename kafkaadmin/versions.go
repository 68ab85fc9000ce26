package kafkaadmin

import "context"

// KafkaVersions guesses each broker's Kafka version from the API versions
// it answers with (franz-go's kversion): "v4.4", or "at least v4.4" for a
// Kafka newer than franz-go knows; by node ID. Brokers answer with no
// software version of their own, so this is the cheapest truth there is.
// A broker that did not answer is left out; the error is for the metadata
// request that lists them.
func (c *Client) KafkaVersions(ctx context.Context) (map[int32]string, error) {
	fs, err := c.Features(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[int32]string, len(fs))
	for id, f := range fs {
		out[id] = f.Version
	}
	return out, nil
}
