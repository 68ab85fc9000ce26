package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"k8s.io/client-go/util/retry"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// KindReassign is the ledger kind of partitions a scale-out moved onto its
// brokers, written on the StatefulSet next to the scale entry.
const KindReassign = "reassign"

// Keys of a reassign entry's Data.
const (
	dataMovedFrom = "from"     // JSON kafkaadmin.Assignments: the moved partitions' replicas before
	dataMovedTo   = "to"       // JSON kafkaadmin.Assignments: what they were moved to
	dataThrottle  = "throttle" // replication throttle in bytes/s, 0 for none
)

// moveBackTimeout bounds moving partitions back: a broker that is paused
// or cut off would otherwise hold a recovery for ever.
const moveBackTimeout = 5 * time.Minute

// Mover moves partitions between brokers: *kafkaadmin.Client is one. The
// scale-out needs one to spread partitions onto its brokers, and so does
// the recovery that moves them back.
type Mover interface {
	Assignments(ctx context.Context, topics ...string) (kafkaadmin.Assignments, error)
	// Reassign moves partitions to the replicas given and waits until
	// Kafka has moved them; with throttle > 0, replication is throttled to
	// that many bytes/s per broker meanwhile, and the throttle is cleared
	// at the end, however it ends.
	Reassign(ctx context.Context, to kafkaadmin.Assignments, throttle int64) error
}

// Spread moves the partitions of f.Topics so that their replicas are spread
// evenly over brokers (kafkaadmin.Spread), and waits until Kafka has moved
// them. brokers are the IDs of the brokers before the scale-out and of
// those it added; call Spread once the added ones have registered. It
// returns the partitions it moved, with their new replicas.
//
// A ledger entry (kind KindReassign) on the StatefulSet, written before
// anything moves, keeps each moved partition's previous replicas. Recover
// moves them back before it scales in, since removing a broker that holds
// replicas would leave their partitions short of a replica for good.
// Spread refuses without a scale entry (it spreads what a scale-out added)
// and while a reassign entry is there.
func (f *Scale) Spread(ctx context.Context, brokers []int32) (kafkaadmin.Assignments, error) {
	var invalid error
	if f.Kafka == nil || len(f.Topics) == 0 {
		invalid = errors.New("no Kafka client or no topic given")
	}
	var move kafkaadmin.Assignments
	err := f.inject(ctx, invalid, func(ctx context.Context) (string, func(context.Context) error, error) {
		now, err := f.Kafka.Assignments(ctx, f.Topics...)
		if err != nil {
			return "", nil, err
		}
		to, err := kafkaadmin.Spread(now, brokers)
		if err != nil {
			return "", nil, err
		}
		move = now.Changed(to)
		from := kafkaadmin.Assignments{}
		move.Each(func(t string, p int32, _ []int32) {
			if from[t] == nil {
				from[t] = map[int32][]int32{}
			}
			from[t][p] = now[t][p]
		})
		plan := fmt.Sprintf("move %s (from %s), throttled to %d B/s", move, from, f.Throttle)
		return plan, func(ctx context.Context) error { return f.spread(ctx, brokers, from, move) }, nil
	})
	if err != nil {
		return nil, fmt.Errorf("chaos: spread partitions onto the brokers of %s: %w", f.Name(), err)
	}
	return move, nil
}

// spread records the move, then has Kafka make it.
func (f *Scale) spread(ctx context.Context, brokers []int32, from, move kafkaadmin.Assignments) error {
	if len(move) == 0 {
		f.say("%s: the partitions are already spread over %v", f.Name(), brokers)
		return nil
	}
	if err := f.recordMove(ctx, from, move); err != nil {
		return err
	}
	f.say("%s: moving %d partitions: %s", f.Name(), move.Partitions(), move)
	start := time.Now()
	if err := f.Kafka.Reassign(ctx, move, f.Throttle); err != nil {
		return err
	}
	f.say("%s: partitions moved in %s", f.Name(), time.Since(start).Round(time.Millisecond))
	return nil
}

// recordMove writes the reassign entry on the StatefulSet.
func (f *Scale) recordMove(ctx context.Context, from, to kafkaadmin.Assignments) error {
	fb, err := json.Marshal(from)
	if err != nil {
		return err
	}
	tb, err := json.Marshal(to)
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, es, err := statefulSetLedger(ctx, f.Client, f.Namespace, f.StatefulSet)
		if err != nil {
			return err
		}
		if _, ok := entryOf(es, KindScale); !ok {
			return errors.New("the statefulset carries no scale entry: spread only after the scale-out")
		}
		if e, ok := entryOf(es, KindReassign); ok {
			return fmt.Errorf("the statefulset already carries a reassign entry (%s); recover it first (kafkachaos recover)", e)
		}
		md, err := metaPatch(s, withEntry(es, Entry{
			Fault: KindReassign, RunID: f.RunID, At: time.Now().UTC(),
			Undo: "move the partitions back to " + from.String(),
			Data: map[string]string{
				dataMovedFrom: string(fb),
				dataMovedTo:   string(tb),
				dataThrottle:  strconv.FormatInt(f.Throttle, 10),
			},
		}))
		if err != nil {
			return err
		}
		return patch(ctx, f.Client, f.Namespace, f.StatefulSet, "statefulsets", map[string]any{"metadata": md})
	})
}

// reassignLedger is KindReassign's row of the registry: on a StatefulSet,
// recovered before its other entries, so that a scale-in comes only once
// the partitions are back.
func reassignLedger() ledgerKind {
	return ledgerKind{kind: KindReassign, object: onStatefulSet, order: orderKafka, undo: undoReassign}
}

// undoReassign moves each partition the entry names back to its previous
// replicas through u.access.Kafka and waits until Kafka has; the entry is
// dropped after. Without Kafka it changes nothing and fails, naming what it
// could not move back; the scale entry is then kept too (undoScale), so
// the brokers that hold the partitions stay.
func undoReassign(ctx context.Context, u *undo, e Entry) (string, bool, error) {
	var from kafkaadmin.Assignments
	if err := json.Unmarshal([]byte(e.Data[dataMovedFrom]), &from); err != nil {
		return "", false, fmt.Errorf("ledger entry %s: moved partitions: %w", e, err)
	}
	throttle, err := strconv.ParseInt(e.Data[dataThrottle], 10, 64)
	if err != nil {
		return "", false, fmt.Errorf("ledger entry %s: throttle: %w", e, err)
	}
	err = u.act(ctx, e, func(ctx context.Context) error {
		if u.access.Kafka == nil {
			return fmt.Errorf("partitions were moved onto the brokers a scale-out added (%s): moving them back to %s needs Kafka, and the scale-out stays until they are back: run kafkachaos recover with --bootstrap", e, from)
		}
		mctx, cancel := context.WithTimeout(ctx, moveBackTimeout)
		defer cancel()
		if err := u.access.Kafka.Reassign(mctx, from, throttle); err != nil {
			return fmt.Errorf("move partitions back (%s): %w", e, err)
		}
		return nil
	})
	if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("move partitions back to %s (%s)", from, e), false, nil
}
