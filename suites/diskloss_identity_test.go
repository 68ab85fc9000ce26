package suites

import (
	"context"
	"fmt"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/report"
)

// lostHow says what a disk-loss mode does to the victim's volume.
func lostHow(mode chaos.DiskLossMode) string {
	if mode == chaos.DiskLossClaim {
		return "lost (its claim and pod deleted together)"
	}
	return "wiped in place"
}

// newVolumeOf is the volume claim template whose claim the victim gets
// anew in mode: a deleted claim comes back new, a wiped one stays.
func newVolumeOf(mode chaos.DiskLossMode) string {
	if mode == chaos.DiskLossClaim {
		return "data"
	}
	return ""
}

// directoryIDs names a voter's metadata log directory before its disk is
// lost: directory.id in its meta.properties, and the directory ID the
// quorum's voter set lists it with, which only a dynamic quorum (KIP-853)
// has ("" under a static one).
type directoryIDs struct {
	meta, quorum string
}

// readDirectoryIDs reads voter v's directory IDs.
func readDirectoryIDs(ctx context.Context, e *env, v brokers.Server) (directoryIDs, error) {
	meta, err := metaProperties(ctx, e, v.Pod)
	if err != nil {
		return directoryIDs{}, err
	}
	q, err := quorumNow(ctx, e)
	if err != nil {
		return directoryIDs{}, err
	}
	return directoryIDs{meta: meta["directory.id"], quorum: voterDirectory(q, v.ID)}, nil
}

// voterDirectory is the directory ID that q lists voter id with; "" if
// none, or if id is no voter.
func voterDirectory(q kafkaadmin.Quorum, id int32) string {
	for _, r := range q.Voters {
		if r.ID == id {
			return r.DirectoryID
		}
	}
	return ""
}

// after reads v's directory IDs again, once it is back on its new or
// wiped volume, and says what changed. Under a dynamic quorum the empty
// volume must have a new directory ID: with the old one, the quorum takes
// the empty log for the voter it knew, which then votes for any candidate
// (KAFKA-14077, which KIP-853's directory IDs exist to prevent). That is
// an identity problem of the deployment.
func (d directoryIDs) after(ctx context.Context, e *env, v brokers.Server, o *outcome) string {
	meta, err := metaProperties(ctx, e, v.Pod)
	if err != nil {
		return fmt.Sprintf("voter %d's meta.properties after the disk loss: %v", v.ID, err)
	}
	now := meta["directory.id"]
	if d.quorum == "" {
		return fmt.Sprintf("voter %d: a static quorum (its voter set has no directory IDs); its log dir's directory.id %s -> %s", v.ID, d.meta, now)
	}
	inQuorum := "unknown"
	if q, err := quorumNow(ctx, e); err == nil {
		inQuorum = voterDirectory(q, v.ID)
		if inQuorum == "" {
			inQuorum = "none (not a voter)"
		}
	}
	if now == d.meta {
		o.Add(report.CheckIdentity, fmt.Sprintf("voter %d came back on an empty volume formatted with its old directory ID %s: the dynamic quorum (KIP-853) cannot tell that it lost its log, and takes its vote as the old voter's",
			v.ID, now))
	}
	return fmt.Sprintf("voter %d's directory ID (dynamic quorum): meta.properties %s -> %s; in the voter set %s -> %s", v.ID, d.meta, now, d.quorum, inQuorum)
}
