package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BrokerConfig returns the value of config key as broker id runs with it.
func (c *Client) BrokerConfig(ctx context.Context, id int32, key string) (string, error) {
	vals, err := c.BrokerConfigs(ctx, id, key)
	if err != nil {
		return "", err
	}
	v, ok := vals[key]
	if !ok {
		return "", fmt.Errorf("kafkaadmin: broker %d did not describe config %s", id, key)
	}
	return v, nil
}

// BrokerConfigs returns the values of the config keys (every key when there
// are none) as broker id runs with them: DescribeConfigs on the broker
// resource, which kgo sends to that broker. Keys the broker does not
// describe, or whose value is sensitive, are absent from the map.
func (c *Client) BrokerConfigs(ctx context.Context, id int32, keys ...string) (map[string]string, error) {
	rcs, err := c.adm.DescribeBrokerConfigs(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("kafkaadmin: describe configs of broker %d: %w", id, err)
	}
	vals := map[string]string{}
	for _, rc := range rcs {
		if rc.Err != nil {
			return nil, fmt.Errorf("kafkaadmin: describe configs of broker %d: %w", id, rc.Err)
		}
		for _, cfg := range rc.Configs {
			if cfg.Value != nil && (len(keys) == 0 || slices.Contains(keys, cfg.Key)) {
				vals[cfg.Key] = *cfg.Value
			}
		}
	}
	return vals, nil
}

// BrokerHosts returns the host that each registered broker advertises, by
// node ID, from fresh metadata.
func (c *Client) BrokerHosts(ctx context.Context) (map[int32]string, error) {
	m, err := c.brokerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafkaadmin: broker hosts: %w", err)
	}
	hosts := make(map[int32]string, len(m.Brokers))
	for _, b := range m.Brokers {
		hosts[b.NodeID] = b.Host
	}
	return hosts, nil
}

// Unregister removes broker id's registration from the KRaft controller
// (UnregisterBroker, which kadm has no call for), as after a scale-in: a
// broker that is gone for good otherwise stays registered, fenced, for
// ever. The broker must be stopped. A broker that is not registered (any
// more) is success, so a retry after a lost answer does not fail.
func (c *Client) Unregister(ctx context.Context, id int32) error {
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = id
	resp, err := req.RequestWith(ctx, c.raw)
	if err != nil {
		return fmt.Errorf("kafkaadmin: unregister broker %d: %w", id, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil && !errors.Is(err, kerr.BrokerIDNotRegistered) {
		return fmt.Errorf("kafkaadmin: unregister broker %d: %w", id, err)
	}
	return nil
}
