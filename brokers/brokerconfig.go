package brokers

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BrokerConfig returns the value of config key as broker id runs with it.
func BrokerConfig(ctx context.Context, cl Client, id int32, key string) (string, error) {
	vals, err := BrokerConfigs(ctx, cl, id, key)
	if err != nil {
		return "", err
	}
	v, ok := vals[key]
	if !ok {
		return "", fmt.Errorf("brokers: broker %d did not describe config %s", id, key)
	}
	return v, nil
}

// BrokerConfigs returns the values of the config keys as broker id runs
// with them (DescribeConfigs on the broker resource, sent to that broker).
// Keys the broker does not describe, or whose value is sensitive, are
// absent from the map.
func BrokerConfigs(ctx context.Context, cl Client, id int32, keys ...string) (map[string]string, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeBroker
	res.ResourceName = strconv.Itoa(int(id))
	res.ConfigNames = keys
	req.Resources = append(req.Resources, res)
	raw, err := cl.RequestBroker(ctx, id, req)
	if err != nil {
		return nil, fmt.Errorf("brokers: describe configs of broker %d: %w", id, err)
	}
	resp, ok := raw.(*kmsg.DescribeConfigsResponse)
	if !ok {
		return nil, fmt.Errorf("brokers: describe configs of broker %d: unexpected response %T", id, raw)
	}
	vals := map[string]string{}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return nil, fmt.Errorf("brokers: describe configs of broker %d: %w", id, err)
		}
		for _, c := range r.Configs {
			if c.Value != nil {
				vals[c.Name] = *c.Value
			}
		}
	}
	return vals, nil
}

// Unregister removes broker id's registration from the KRaft controller
// (UnregisterBroker), as after a scale-in: a broker that is gone for good
// otherwise stays registered, fenced, for ever. The broker must be stopped.
// A broker that is not registered (any more) is success, so a retry after
// a lost answer does not fail.
func Unregister(ctx context.Context, cl Client, id int32) error {
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = id
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("brokers: unregister broker %d: %w", id, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil && !errors.Is(err, kerr.BrokerIDNotRegistered) {
		return fmt.Errorf("brokers: unregister broker %d: %w", id, err)
	}
	return nil
}
