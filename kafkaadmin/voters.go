package kafkaadmin

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Endpoint is a listener a voter is reached on.
type Endpoint struct {
	Name string // the listener's name, such as CONTROLLER
	Host string
	Port uint16
}

// RemoveVoter removes voter id, known by its metadata log directory ID,
// from a dynamic KRaft quorum (KIP-853), as `kafka-metadata-quorum.sh
// remove-controller` does: with a RemoveRaftVoter request, which kadm has
// no call for. A static quorum refuses it.
func (c *Client) RemoveVoter(ctx context.Context, id int32, directoryID string) error {
	dir, err := ParseUUID(directoryID)
	if err != nil {
		return fmt.Errorf("kafkaadmin: remove voter %d: %w", id, err)
	}
	req := kmsg.NewPtrRemoveRaftVoterRequest()
	req.VoterID, req.VoterDirectoryID = id, dir
	resp, err := req.RequestWith(ctx, c.raw)
	if err == nil {
		err = answerErr(resp.ErrorCode, resp.ErrorMessage)
	}
	if err != nil {
		return fmt.Errorf("kafkaadmin: remove voter %d (%s): %w", id, directoryID, err)
	}
	return nil
}

// AddVoter adds node id, with the metadata log directory directoryID and
// reached on endpoints, to a dynamic KRaft quorum as a voter, as
// `kafka-metadata-quorum.sh add-controller` does: with an AddRaftVoter
// request, answered once the new voter set is committed. The node must be
// an observer that has caught up with the leader.
func (c *Client) AddVoter(ctx context.Context, id int32, directoryID string, endpoints []Endpoint) error {
	dir, err := ParseUUID(directoryID)
	if err != nil {
		return fmt.Errorf("kafkaadmin: add voter %d: %w", id, err)
	}
	req := kmsg.NewPtrAddRaftVoterRequest()
	req.VoterID, req.VoterDirectoryID, req.AckWhenCommitted = id, dir, true
	for _, ep := range endpoints {
		l := kmsg.NewAddRaftVoterRequestListener()
		l.Name, l.Host, l.Port = ep.Name, ep.Host, ep.Port
		req.Listeners = append(req.Listeners, l)
	}
	resp, err := req.RequestWith(ctx, c.raw)
	if err == nil {
		err = answerErr(resp.ErrorCode, resp.ErrorMessage)
	}
	if err != nil {
		return fmt.Errorf("kafkaadmin: add voter %d (%s): %w", id, directoryID, err)
	}
	return nil
}

// answerErr is the error an answer's code and message carry, nil for none.
func answerErr(code int16, msg *string) error {
	if err := kerr.ErrorForCode(code); err != nil {
		return fmt.Errorf("%w%s", err, message(msg))
	}
	return nil
}

// UUIDString is a Kafka UUID in Kafka's text form (URL-safe base64 without
// padding, as meta.properties has it), "" for the zero UUID.
func UUIDString(u [16]byte) string {
	if u == [16]byte{} {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(u[:])
}

// ParseUUID reads a Kafka UUID in its text form (see UUIDString).
func ParseUUID(s string) ([16]byte, error) {
	var u [16]byte
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) != len(u) {
		return u, fmt.Errorf("%q is not a Kafka UUID (22 characters of URL-safe base64)", s)
	}
	copy(u[:], raw)
	return u, nil
}
