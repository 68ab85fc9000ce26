package suites

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/internal/properties"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// Data survival: a broker must come back with the data it had, unless the
// fault was to lose its disk. The pod's volumes say where the data should
// live (brokers.CompareIdentity); the directory IDs of its log dirs say
// whether it did: Kafka writes a new one into each dir it formats, so a
// broker whose data dir was on an emptyDir or on the container filesystem
// comes back from a pod kill with new ones.

// dirIDs maps each broker's ID to its log dirs (as Kafka lists them) and
// each dir to the directory.id of its meta.properties ("" if it has none:
// ZooKeeper mode, or Kafka before 3.7).
type dirIDs map[int32]map[string]string

// readDirIDs reads the directory IDs of the log dirs of every broker of bs
// that has the broker role (a controller has no log dirs to describe): the
// dirs from a DescribeLogDirs request, the IDs through pods/exec into the
// broker's Kafka container.
func readDirIDs(ctx context.Context, e *env, bs []brokers.Broker) (dirIDs, error) {
	out := dirIDs{}
	for _, b := range bs {
		if !b.BrokerRole {
			continue
		}
		var dirs []string
		err := e.withKafka(func(cl *kafkaadmin.Client) error {
			var err error
			dirs, err = cl.LogDirs(ctx, b.ID)
			return err
		})
		if err != nil {
			return nil, err
		}
		out[b.ID] = map[string]string{}
		for _, d := range dirs {
			meta, err := readMetaProperties(ctx, e, b.Pod, b.Container, d)
			if err != nil {
				return nil, fmt.Errorf("broker %d: %w", b.ID, err)
			}
			out[b.ID][d] = meta["directory.id"]
		}
	}
	return out, nil
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

// dataSurvivalProblems reads the directory IDs of the brokers of before
// again, from their pods in after, and compares them: each must be the
// same, or when dataLost (a disk loss) at least one dir of each broker
// must be new.
func dataSurvivalProblems(ctx context.Context, e *env, before dirIDs, after []brokers.Broker, dataLost bool) []string {
	var p []string
	for _, id := range slices.Sorted(maps.Keys(before)) {
		was := before[id]
		b, ok := brokers.ByID(after, id)
		if !ok {
			continue // the identity check names a broker without a pod
		}
		now, err := readDirIDs(ctx, e, []brokers.Broker{b})
		if err != nil {
			p = append(p, fmt.Sprintf("broker %d: its log dirs' directory IDs after the fault could not be read: %v", id, err))
			continue
		}
		p = append(p, judgeSurvival(id, was, now[id], dataLost)...)
	}
	return p
}

// judgeSurvival compares broker id's directory IDs before the fault (was)
// and after it (now): each must be the same (brokers.CompareDirectoryIDs),
// or when dataLost, one dir at least must be new.
func judgeSurvival(id int32, was, now map[string]string, dataLost bool) []string {
	probs := brokers.CompareDirectoryIDs(id, was, now)
	if dataLost {
		if len(probs) == 0 && len(was) > 0 {
			return []string{fmt.Sprintf("broker %d: the fault was to lose its disk, but every log dir has its old directory ID: %v", id, was)}
		}
		return nil
	}
	var p []string
	for _, pr := range probs {
		p = append(p, pr.String())
	}
	return p
}

// readMetaProperties reads meta.properties in dir of pod's container (""
// for the pod's default container).
func readMetaProperties(ctx context.Context, e *env, pod, container, dir string) (map[string]string, error) {
	file := path.Join(dir, "meta.properties")
	out, err := e.exec(ctx, e.namespace, pod, container, []string{"cat", file})
	if err != nil {
		return nil, err
	}
	p, err := properties.Read(strings.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("%s's %s: %w", pod, file, err)
	}
	return p.Map(), nil
}

func TestJudgeSurvival(t *testing.T) {
	const newID = "broker 1: same data in log dir /d: want directory.id A, got directory.id B: the dir was empty when the broker started, so what it held did not survive"
	tests := []struct {
		name     string
		now      string
		dataLost bool
		want     []string
	}{
		{name: "kept, as it must be", now: "A"},
		{name: "formatted anew: lost", now: "B", want: []string{newID}},
		{name: "a disk loss, formatted anew", now: "B", dataLost: true},
		{name: "a disk loss that lost nothing", now: "A", dataLost: true,
			want: []string{"broker 1: the fault was to lose its disk, but every log dir has its old directory ID: map[/d:A]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := judgeSurvival(1, map[string]string{"/d": "A"}, map[string]string{"/d": tt.now}, tt.dataLost)
			if !slices.Equal(got, tt.want) {
				t.Errorf("judgeSurvival() = %q; want %q", got, tt.want)
			}
		})
	}
}
