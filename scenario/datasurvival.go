package scenario

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/internal/properties"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// Data survival: every broker must come back from a story with the data it
// had, but the victims of a disk loss. The pod's volumes say where the
// data should live (brokers.CompareIdentity); the directory IDs of its log
// dirs say whether it did: Kafka writes a new one into each dir it formats,
// so a broker whose data dir was on an emptyDir or on the container
// filesystem comes back from a pod kill with new ones.

// dirIDs maps each broker's ID to its log dirs (as Kafka lists them) and
// each dir to the directory.id of its meta.properties ("" if it has none:
// ZooKeeper mode, or Kafka before 3.7).
type dirIDs map[int32]map[string]string

// readDirIDs reads the directory IDs of the log dirs of every broker of bs
// that has the broker role (a controller has no log dirs to describe): the
// dirs from a DescribeLogDirs request through cl, the IDs through
// pods/exec into the broker's Kafka container.
func (e *Env) readDirIDs(ctx context.Context, cl *kafkaadmin.Client, bs []brokers.Server) (dirIDs, error) {
	out := dirIDs{}
	for _, b := range bs {
		if !b.Broker {
			continue
		}
		dirs, err := cl.LogDirs(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		out[b.ID] = map[string]string{}
		for _, d := range dirs {
			meta, err := e.MetaProperties(ctx, b.Pod, b.Container, d)
			if err != nil {
				return nil, fmt.Errorf("broker %d: %w", b.ID, err)
			}
			out[b.ID][d] = meta["directory.id"]
		}
	}
	return out, nil
}

// readDirIDsOrSay reads the directory IDs of bs's brokers, or says in o's
// observations why data survival cannot be checked, and returns nil then.
func (e *Env) readDirIDsOrSay(ctx context.Context, bs []brokers.Server, o *Outcome) dirIDs {
	var ids dirIDs
	err := e.WithKafka(func(cl *kafkaadmin.Client) error {
		var err error
		ids, err = e.readDirIDs(ctx, cl, bs)
		return err
	})
	switch {
	case err != nil:
		o.Observations = append(o.Observations, "data survival not checked: the brokers' directory IDs could not be read: "+err.Error())
		return nil
	case !ids.checkable():
		o.Observations = append(o.Observations, "data survival not checked: the brokers' meta.properties have no directory.id (ZooKeeper mode, or Kafka before 3.7)")
		return nil
	}
	return ids
}

// checkable says whether any dir of ids has a directory ID to compare.
func (ids dirIDs) checkable() bool {
	for _, dirs := range ids {
		for _, id := range dirs {
			if id != "" {
				return true
			}
		}
	}
	return false
}

// lostOnPurpose returns the brokers whose data a story loses on purpose:
// its victims when it is a disk loss (dataLost), else none.
func lostOnPurpose(dataLost bool, victims []int32) []int32 {
	if dataLost {
		return victims
	}
	return nil
}

// dataSurvivalProblems reads the directory IDs of the brokers of before
// again, from their pods in after, and compares them (each must be the
// same: brokers.CompareDirectoryIDs), but for the brokers of lost.
func (e *Env) dataSurvivalProblems(ctx context.Context, before dirIDs, after []brokers.Server, lost []int32) []string {
	var p []string
	err := e.WithKafka(func(cl *kafkaadmin.Client) error {
		for _, id := range slices.Sorted(maps.Keys(before)) {
			b, ok := brokers.ByID(after, id)
			if !ok || slices.Contains(lost, id) {
				continue // a broker without a pod: the identity check names it
			}
			now, err := e.readDirIDs(ctx, cl, []brokers.Server{b})
			if err != nil {
				p = append(p, fmt.Sprintf("broker %d: its log dirs' directory IDs after the fault could not be read: %v", id, err))
				continue
			}
			for _, pr := range brokers.CompareDirectoryIDs(id, before[id], now[id]) {
				p = append(p, pr.String())
			}
		}
		return nil
	})
	if err != nil {
		return []string{"the brokers' directory IDs after the fault could not be read: " + err.Error()}
	}
	return p
}

// MetaProperties reads meta.properties in dir of pod's container (""
// for the pod's default container), through pods/exec.
func (e *Env) MetaProperties(ctx context.Context, pod, container, dir string) (map[string]string, error) {
	file := path.Join(dir, "meta.properties")
	out, err := e.Exec(ctx, e.Namespace, pod, container, []string{"cat", file})
	if err != nil {
		return nil, err
	}
	p, err := properties.Read(strings.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("%s's %s: %w", pod, file, err)
	}
	return p.Map(), nil
}
