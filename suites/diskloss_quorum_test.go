package suites

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/report"
)

// The stories of the disk-loss specs that hit the KRaft quorum.

// voterFollower picks a voter that is not the quorum's leader; with
// exclude, one that is not among those either.
func voterFollower(ctx context.Context, e *env, snap []brokers.Server, exclude ...int32) (brokers.Server, int32, error) {
	var leader int32
	err := e.WithKafka(func(cl *kafkaadmin.Client) (err error) {
		leader, err = cl.ActiveController(ctx)
		return err
	})
	if err != nil {
		return brokers.Server{}, -1, err
	}
	for _, b := range snap {
		if b.Controller && b.ID != leader && !slices.Contains(exclude, b.ID) {
			return b, leader, nil
		}
	}
	return brokers.Server{}, leader, fmt.Errorf("no voter other than the leader %d and %v", leader, exclude)
}

// voterDiskLossStory wipes a following voter's volume in place, then, as
// soon as its JVM runs again (formatting, fetching the metadata log back),
// force-deletes the quorum's leader. The third voter holds every committed
// record, so the quorum it elects must keep them all.
func voterDiskLossStory(label string, s sentinel) story {
	var metaBefore map[string]string
	var old, now kafkaadmin.Quorum
	var elected time.Duration
	var killedAt time.Time
	return story{
		// Two nodes are hit: no one timeout predicts the unavailability,
		// which is bounded by the default for a fault of no known timing.
		Label: label, DataLost: true,
		Pick: func(ctx context.Context, e *env, _ string, snap []brokers.Server) ([]brokers.Server, error) {
			v, l, err := voterFollower(ctx, e, snap)
			if err != nil {
				return nil, err
			}
			By(fmt.Sprintf("voter %d (%s) follows the quorum leader %d", v.ID, v.Pod, l))
			metaBefore, err = metaProperties(ctx, e, v.Pod)
			return []brokers.Server{v}, err
		},
		Fault: func(e *env, v []brokers.Server) chaos.Fault {
			var restarts int32
			return &chaos.Sequence{Scope: e.FaultScope(), Say: func(m string) { By(m) }, What: fmt.Sprintf("disk loss of voter %d (wiped in place), then a force-delete of the quorum leader as it comes back", v[0].ID), Steps: []chaos.Step{
				{What: fmt.Sprintf("wipe voter %d's volume in place and restart its container", v[0].ID), Fault: func(ctx context.Context) (chaos.Fault, error) {
					var err error
					restarts, err = restartsOf(ctx, e, v[0].Pod)
					return diskLoss(e, v[0].Pod, chaos.DiskLossWipe), err
				}},
				{What: fmt.Sprintf("waiting until voter %d's JVM runs again on the empty volume", v[0].ID), Do: func(ctx context.Context) error {
					return containerRestarted(ctx, e, v[0].Pod, restarts)
				}},
				{What: "force-deleting the quorum leader while the voter catches up", Fault: func(ctx context.Context) (chaos.Fault, error) {
					snap, err := e.Snapshot(ctx)
					if err != nil {
						return nil, err
					}
					if old, err = quorumNow(ctx, e); err != nil {
						return nil, err
					}
					b, ok := brokers.ByID(snap, old.LeaderID)
					if !ok {
						return nil, fmt.Errorf("no pod of quorum leader %d", old.LeaderID)
					}
					By(fmt.Sprintf("node %d leads the quorum at epoch %d", old.LeaderID, old.LeaderEpoch))
					killedAt = time.Now()
					return &chaos.PodDelete{Scope: e.FaultScope(), Pod: b.Pod, Force: true}, nil
				}},
			}}
		},
		During: func(ctx context.Context, e *env, _ []brokers.Server) (err error) {
			By(fmt.Sprintf("waiting for a quorum leader past epoch %d", old.LeaderEpoch))
			now, elected, err = quorumLeaderAfter(ctx, e, old.LeaderEpoch, -1, killedAt)
			return err
		},
		Finally: func(ctx context.Context, e *env, v []brokers.Server, o *outcome) {
			if elected == 0 {
				o.Observations = append(o.Observations, "no new quorum leader seen (see the fault check)")
			} else {
				o.Observations = append(o.Observations, fmt.Sprintf("quorum leader %d (epoch %d) force-deleted as voter %d came back empty; node %d leads at epoch %d, first named by DescribeQuorum %s after the kill (an upper bound: the question goes through a broker to the controller it knows); predicted: controller.quorum.fetch.timeout.ms (2 s) + an election, once one of the other two voters runs",
					old.LeaderID, old.LeaderEpoch, v[0].ID, now.LeaderID, now.LeaderEpoch, elected.Round(100*time.Millisecond)))
			}
			o.Observations = append(o.Observations, volumeIdentity(ctx, e, v[0], metaBefore, o))
			o.Add(report.CheckMetadata, s.problems(ctx, e)...)
		},
	}
}

// laggingVoterDiskLossStory forces the KAFKA-14077 shape: voter B frozen,
// a topic committed on the leader A and the victim C, C's volume lost
// (mode: wiped in place, or its claim and pod deleted together), A
// frozen, B resumed. B and C are a majority; C votes for B, whose log
// lacks the topic. Then A is resumed and follows whoever leads. With
// waitForVictim, A is frozen only once C has fetched the metadata log back,
// as Kafka's operations guide asks of a replaced controller disk: then C's
// log is the longer, C does not vote for B, and nothing may be lost.
func laggingVoterDiskLossStory(label string, mode chaos.DiskLossMode, waitForVictim bool) story {
	var leader, lagging int32 = -1, -1
	var old, now kafkaadmin.Quorum
	var elected time.Duration
	var s, primer sentinel
	var shape string // how far the lagging voter lagged
	var hw int64     // the quorum's high watermark once the sentinel is committed
	var caughtUp time.Duration
	var ids directoryIDs
	return story{
		Label: label, NewPods: mode == chaos.DiskLossClaim, NewVolume: newVolumeOf(mode), DataLost: true,
		Unbounded: "the story holds the leader frozen and the third voter's volume empty until a new quorum leader is elected: " +
			"every partition is unwritable for that long, by design; the spec is about the metadata",
		Pick: func(ctx context.Context, e *env, _ string, snap []brokers.Server) ([]brokers.Server, error) {
			v, l, err := voterFollower(ctx, e, snap)
			if err != nil {
				return nil, err
			}
			b, _, err := voterFollower(ctx, e, snap, v.ID)
			if err != nil {
				return nil, err
			}
			leader, lagging = l, b.ID
			By(fmt.Sprintf("leader %d, lagging voter %d, victim %d (%s)", leader, lagging, v.ID, v.Pod))
			s = sentinel{topic: "kafkachaos-sentinel", partitions: 3, records: 100, replicas: []int32{leader, v.ID}}
			primer = sentinel{topic: "kafkachaos-primer", partitions: 1, records: 1, replicas: []int32{leader, v.ID}}
			ids, err = readDirectoryIDs(ctx, e, v)
			return []brokers.Server{v}, err
		},
		Fault: func(e *env, v []brokers.Server) chaos.Fault {
			pod := func(ctx context.Context, id int32) (string, error) {
				snap, err := e.Snapshot(ctx)
				if err != nil {
					return "", err
				}
				b, ok := brokers.ByID(snap, id)
				if !ok {
					return "", fmt.Errorf("no pod of node %d", id)
				}
				return b.Pod, nil
			}
			var pauseLagging, pauseLeader chaos.Fault
			pause := func(id int32, f *chaos.Fault) func(context.Context) (chaos.Fault, error) {
				return func(ctx context.Context) (chaos.Fault, error) {
					p, err := pod(ctx, id)
					*f = &chaos.Pause{Scope: e.FaultScope(), Exec: e.Exec, Pod: p}
					return *f, err
				}
			}
			var elected0, wiped time.Time
			var restarts int32
			wait := chaos.Step{What: fmt.Sprintf("not waiting for voter %d to fetch the metadata log back", v[0].ID), Do: func(context.Context) error { return nil }}
			name := fmt.Sprintf("voter %d frozen, a topic committed on %d and %d, voter %d's volume %s, leader %d frozen, voter %d resumed",
				lagging, leader, v[0].ID, v[0].ID, lostHow(mode), leader, lagging)
			if waitForVictim {
				// The leader's view of the victim's log end is stale until
				// the victim fetches again: first its JVM must be back.
				wait = chaos.Step{What: fmt.Sprintf("waiting until voter %d runs again, is Ready, and has fetched the metadata log back past the sentinel", v[0].ID), Do: func(ctx context.Context) error {
					if mode == chaos.DiskLossWipe {
						if err := containerRestarted(ctx, e, v[0].Pod, restarts); err != nil {
							return err
						}
					}
					if err := e.WaitPodsBack(ctx, v, mode == chaos.DiskLossClaim); err != nil {
						return err
					}
					if err := voterReached(ctx, e, v[0].ID, hw); err != nil {
						return err
					}
					caughtUp = time.Since(wiped)
					return nil
				}}
				name = fmt.Sprintf("voter %d frozen, a topic committed on %d and %d, voter %d's volume %s and fetched back, leader %d frozen, voter %d resumed",
					lagging, leader, v[0].ID, v[0].ID, lostHow(mode), leader, lagging)
			}
			return &chaos.Sequence{Scope: e.FaultScope(), Say: func(m string) { By(m) }, What: name, Steps: []chaos.Step{
				{What: "reading the quorum's epoch", Do: func(ctx context.Context) (err error) {
					old, err = quorumNow(ctx, e)
					return err
				}},
				{What: fmt.Sprintf("freezing voter %d, so that it lags", lagging), Fault: pause(lagging, &pauseLagging)},
				// The frozen voter's last fetch may be answered with the next
				// change, and the answer wait in its socket: a first topic
				// takes that answer, so the sentinel is sure to be missing.
				{What: fmt.Sprintf("committing topic %s, which the frozen voter's pending fetch may still take", primer.topic), Do: func(ctx context.Context) error { return primer.plant(ctx, e, leader) }},
				{What: fmt.Sprintf("committing topic %s on nodes %d and %d only", s.topic, leader, v[0].ID), Do: func(ctx context.Context) (err error) {
					if err := s.plant(ctx, e, leader); err != nil {
						return err
					}
					hw, err = quorumHighWatermark(ctx, e)
					return err
				}},
				{What: fmt.Sprintf("voter %d's volume %s", v[0].ID, lostHow(mode)), Fault: func(ctx context.Context) (chaos.Fault, error) {
					var err error
					restarts, err = restartsOf(ctx, e, v[0].Pod)
					wiped = time.Now()
					return diskLoss(e, v[0].Pod, mode), err
				}},
				wait,
				// Best effort, and quick: the victim is fetching back all the
				// while. A question that lands on the frozen voter's broker
				// gets no answer; then the shape is not checked.
				{What: fmt.Sprintf("checking that voter %d lags: its log ends before the leader's high watermark", lagging), Do: func(ctx context.Context) error {
					qctx, cancel := context.WithTimeout(ctx, leaderTimeout)
					defer cancel()
					q, err := quorumNow(qctx, e)
					if err != nil {
						shape = fmt.Sprintf("not checked (%v)", err)
						return nil
					}
					i := slices.IndexFunc(q.Voters, func(r kafkaadmin.Replica) bool { return r.ID == lagging })
					if i < 0 || q.Voters[i].LogEndOffset >= q.HighWatermark {
						return fmt.Errorf("the KAFKA-14077 shape was not reached: voter %d is not behind the high watermark %d (voters %+v)", lagging, q.HighWatermark, q.Voters)
					}
					shape = fmt.Sprintf("voter %d's metadata log ended at %d, the leader's high watermark was %d", lagging, q.Voters[i].LogEndOffset, q.HighWatermark)
					return nil
				}},
				{What: fmt.Sprintf("freezing the quorum leader %d", leader), Fault: pause(leader, &pauseLeader)},
				{What: fmt.Sprintf("resuming voter %d", lagging), Do: func(ctx context.Context) error {
					elected0 = time.Now()
					return pauseLagging.Recover(ctx)
				}},
				{What: "waiting for the quorum to elect a leader without node " + fmt.Sprint(leader), Do: func(ctx context.Context) (err error) {
					now, elected, err = quorumLeaderAfter(ctx, e, old.LeaderEpoch, leader, elected0)
					return err
				}},
				{What: fmt.Sprintf("resuming the old leader %d", leader), Do: func(ctx context.Context) error { return pauseLeader.Recover(ctx) }},
			}}
		},
		During: func(context.Context, *env, []brokers.Server) error { return nil },
		Finally: func(ctx context.Context, e *env, v []brokers.Server, o *outcome) {
			o.Observations = append(o.Observations, ids.after(ctx, e, v[0], o))
			if shape != "" {
				o.Observations = append(o.Observations, "before the leader froze: "+shape)
			}
			if caughtUp > 0 {
				o.Observations = append(o.Observations, fmt.Sprintf("voter %d fetched the metadata log back past offset %d %s after its wipe began", v[0].ID, hw, caughtUp.Round(100*time.Millisecond)))
			}
			if elected == 0 {
				o.Observations = append(o.Observations, "no new quorum leader seen (see the fault check)")
				o.Add(report.CheckMetadata, s.problems(ctx, e)...)
				return
			}
			predicted := fmt.Sprintf("%d is elected with %d's vote, and what only %d and %d held is lost (KAFKA-14077)", lagging, v[0].ID, leader, v[0].ID)
			if waitForVictim {
				predicted = fmt.Sprintf("%d's log is the longer, so %d does not vote for %d; %d is elected, nothing is lost", v[0].ID, v[0].ID, lagging, v[0].ID)
			}
			o.Observations = append(o.Observations, fmt.Sprintf("node %d elected at epoch %d (was %d at %d), first named by DescribeQuorum %s after voter %d resumed, while leader %d was frozen (an upper bound, by up to a request timeout: a broker forwards the question to the controller it knows, the frozen one; the controllers' logs time the election itself); predicted: %s",
				now.LeaderID, now.LeaderEpoch, old.LeaderID, old.LeaderEpoch, elected.Round(100*time.Millisecond), lagging, leader, predicted))
			o.Add(report.CheckMetadata, s.problems(ctx, e)...)
		},
	}
}
