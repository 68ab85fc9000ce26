package javaclients

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

// ErrNotEvent is returned for a line that is not one of the tools' JSON
// events (a log line that went to standard output, say).
var ErrNotEvent = errors.New("javaclients: not a tool event")

// The events' names, as the tools print them.
const (
	StartupComplete    = "startup_complete"
	ShutdownComplete   = "shutdown_complete"
	ProducerSendOK     = "producer_send_success"
	ProducerSendFailed = "producer_send_error"
	ToolData           = "tool_data"
	PartitionsAssigned = "partitions_assigned"
	PartitionsRevoked  = "partitions_revoked"
	RecordsConsumed    = "records_consumed"
	RecordData         = "record_data"
	OffsetsCommitted   = "offsets_committed"
	// The share consumer's (VerifiableShareConsumer): a poll's or an
	// acknowledgement's offsets, each listed, and the group's reset
	// strategy set through the admin client.
	OffsetsAcknowledged    = "offsets_acknowledged"
	OffsetResetStrategySet = "offset_reset_strategy_set"
)

// Partition is a topic partition as the tools print it, with what an event
// says of it: a commit's offset, or a poll's offsets and count.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Count     int64  `json:"count"`
	MinOffset int64  `json:"minOffset"`
	MaxOffset int64  `json:"maxOffset"`
	// Offsets lists a share consumer's records of the partition in a poll
	// or an acknowledgement.
	Offsets []int64 `json:"offsets"`
}

// Event is one line of either tool. Which fields are set depends on Name.
type Event struct {
	Name string `json:"name"`
	// Timestamp is the tool's clock, in ms since the epoch.
	Timestamp int64 `json:"timestamp"`
	// A send or a record: its topic, partition, offset, key and value.
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Key       *string `json:"key"`
	Value     *string `json:"value"`
	// A failed send: the exception's class and message.
	Exception string `json:"exception"`
	Message   string `json:"message"`
	// The producer's tool_data: its totals.
	Sent  int64 `json:"sent"`
	Acked int64 `json:"acked"`
	// The consumer's rebalances, polls and commits.
	Partitions []Partition `json:"partitions"`
	Offsets    []Partition `json:"offsets"`
	Success    bool        `json:"success"`
	Error      string      `json:"error"`
	Count      int64       `json:"count"`
}

// At is the event's time.
func (e Event) At() time.Time { return time.UnixMilli(e.Timestamp) }

// Parse reads one line. A line that is not a JSON object with a known name
// is ErrNotEvent.
func Parse(line []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(line, &e); err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrNotEvent, err)
	}
	switch e.Name {
	case StartupComplete, ShutdownComplete, ProducerSendOK, ProducerSendFailed, ToolData,
		PartitionsAssigned, PartitionsRevoked, RecordsConsumed, RecordData, OffsetsCommitted,
		OffsetsAcknowledged, OffsetResetStrategySet:
		return e, nil
	}
	return Event{}, fmt.Errorf("%w: unknown name %q", ErrNotEvent, e.Name)
}

// GroupEvents turns one VerifiableConsumer event of member, for topic,
// into the group events it says: an assignment or revocation per
// partition, a poll of one offset per record_data (the consumer runs with
// --verbose; a records_consumed summary gives only a poll's lowest and
// highest offsets, which would hide a record missing between them), and a
// commit per partition of a successful offsets_committed. Other events say
// nothing of the group.
func (e Event) GroupEvents(member, topic string) []groupcheck.Event {
	var out []groupcheck.Event
	add := func(k groupcheck.Kind, p Partition, first, last int64) {
		if p.Topic == topic {
			out = append(out, groupcheck.Event{At: e.At(), Member: member, Kind: k, Partition: p.Partition, First: first, Last: last})
		}
	}
	switch e.Name {
	case PartitionsAssigned:
		for _, p := range e.Partitions {
			add(groupcheck.Assigned, p, 0, 0)
		}
	case PartitionsRevoked:
		for _, p := range e.Partitions {
			add(groupcheck.Revoked, p, 0, 0)
		}
	case RecordData:
		add(groupcheck.Polled, Partition{Topic: e.Topic, Partition: e.Partition}, e.Offset, e.Offset)
	case OffsetsCommitted:
		if e.Success {
			for _, p := range e.Offsets {
				add(groupcheck.Committed, p, p.Offset, 0)
			}
		}
	}
	return out
}
