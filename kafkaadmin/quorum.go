package kafkaadmin

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MetadataTopic is the KRaft metadata log's topic, whose quorum CheckHealth
// describes.
const MetadataTopic = "__cluster_metadata"

// Quorum is the KRaft metadata quorum as its leader described it.
type Quorum struct {
	Err           error // the DescribeQuorum request or its answer failed; the fields below are then empty
	LeaderID      int32 // -1 if none
	LeaderEpoch   int32
	HighWatermark int64
	Voters        []Replica
	Observers     []Replica
}

// Replica is one member of the quorum, as the leader sees it.
type Replica struct {
	ID int32
	// DirectoryID is the replica's metadata log directory ID, in Kafka's
	// text form, under a dynamic quorum (KIP-853); "" when the quorum is
	// static or the broker does not say.
	DirectoryID  string
	LogEndOffset int64
	// Lag is how many records the replica trails the leader's log end offset by.
	Lag int64
	// LagTime is how long before the leader's last caught-up time the replica
	// was last caught up; -1 if either time is unknown.
	LagTime time.Duration
}

// lagging says how a follower voter is not caught up with its leader, by
// the one rule CheckHealth and the pacing check share: by records when it
// trails by more than maxLag; else by time when it was last caught up more
// than maxLagTime before the leader, or never.
func (r Replica) lagging(maxLag int64, maxLagTime time.Duration) (byRecords, byTime bool) {
	if r.Lag > maxLag {
		return true, false
	}
	return false, r.LagTime < 0 || r.LagTime > maxLagTime
}

// VoterIDs returns the voters' IDs, sorted.
func (q Quorum) VoterIDs() []int32 {
	ids := make([]int32, 0, len(q.Voters))
	for _, v := range q.Voters {
		ids = append(ids, v.ID)
	}
	slices.Sort(ids)
	return ids
}

// ActiveController returns the ID of the KRaft quorum's leader, the active
// controller, as a DescribeQuorum request for the metadata log tells. A
// quorum without a leader is an error wrapping ErrNoLeader.
func (c *Client) ActiveController(ctx context.Context) (int32, error) {
	q := c.DescribeQuorum(ctx)
	if q.Err != nil {
		return -1, fmt.Errorf("kafkaadmin: active controller: %w", q.Err)
	}
	if q.LeaderID < 0 {
		return -1, fmt.Errorf("kafkaadmin: active controller: quorum at epoch %d: %w", q.LeaderEpoch, ErrNoLeader)
	}
	return q.LeaderID, nil
}

// DescribeQuorum asks for the state of the metadata log's quorum with a
// DescribeQuorum request: kadm has no call for it.
func (c *Client) DescribeQuorum(ctx context.Context) Quorum {
	q := Quorum{LeaderID: -1}
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = MetadataTopic
	rp := kmsg.NewDescribeQuorumRequestTopicPartition()
	rp.Partition = 0
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	resp, err := req.RequestWith(ctx, c.raw)
	if err != nil {
		q.Err = fmt.Errorf("describe quorum request: %w", err)
		return q
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		q.Err = fmt.Errorf("describe quorum: %w%s", err, message(resp.ErrorMessage))
		return q
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		q.Err = fmt.Errorf("describe quorum: answer has %d topics, want %s partition 0 alone", len(resp.Topics), MetadataTopic)
		return q
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		q.Err = fmt.Errorf("describe quorum: %s partition 0: %w%s", MetadataTopic, err, message(p.ErrorMessage))
		return q
	}
	q.LeaderID, q.LeaderEpoch, q.HighWatermark = p.LeaderID, p.LeaderEpoch, p.HighWatermark

	var leaderLEO, leaderCaughtUp int64 = -1, -1
	for _, v := range p.CurrentVoters {
		if v.ReplicaID == p.LeaderID {
			leaderLEO, leaderCaughtUp = v.LogEndOffset, v.LastCaughtUpTimestamp
		}
	}
	replica := func(s kmsg.DescribeQuorumResponseTopicPartitionReplicaState) Replica {
		r := Replica{ID: s.ReplicaID, DirectoryID: UUIDString(s.ReplicaDirectoryID), LogEndOffset: s.LogEndOffset, LagTime: -1}
		if leaderLEO >= 0 {
			r.Lag = max(leaderLEO-s.LogEndOffset, 0)
		}
		if leaderCaughtUp >= 0 && s.LastCaughtUpTimestamp >= 0 {
			r.LagTime = time.Duration(max(leaderCaughtUp-s.LastCaughtUpTimestamp, 0)) * time.Millisecond
		}
		return r
	}
	for _, v := range p.CurrentVoters {
		q.Voters = append(q.Voters, replica(v))
	}
	for _, o := range p.Observers {
		q.Observers = append(q.Observers, replica(o))
	}
	byID := func(a, b Replica) int { return int(a.ID - b.ID) }
	slices.SortFunc(q.Voters, byID)
	slices.SortFunc(q.Observers, byID)
	return q
}
