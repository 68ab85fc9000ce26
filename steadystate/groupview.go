package steadystate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// GroupView is the coordinator's view of the run's group, as
// DescribeGroups (classic) or ConsumerGroupDescribe (KIP-848) gives it:
// what a failed member fault shows, so that a stuck takeover says whether
// the coordinator still held the crashed member or the others never took
// the assignment it gave them.
type GroupView struct {
	State string
	// Epoch and AssignmentEpoch are KIP-848's group and target-assignment
	// epochs (0 on classic).
	Epoch, AssignmentEpoch int32
	Members                []MemberView
}

// MemberView is one member as the coordinator sees it; its partitions are
// the run's topic's.
type MemberView struct {
	ID string
	// Name is the run's name for the member whose client has ID (crashed
	// ones included), or "" when no client of the run has it.
	Name  string
	Epoch int32 // KIP-848's member epoch (0 on classic)
	// Assigned is what the coordinator last gave the member; Target, what
	// it means the member to own (KIP-848 only).
	Assigned, Target []int32
}

// String lays the view out on one line.
func (v GroupView) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "state %s, epoch %d, assignment epoch %d, %d members:", v.State, v.Epoch, v.AssignmentEpoch, len(v.Members))
	for _, m := range v.Members {
		name := m.Name
		if name == "" {
			name = "unknown to the run"
		}
		fmt.Fprintf(&b, " [%s (%s) epoch %d assigned %v target %v]", m.ID, name, m.Epoch, m.Assigned, m.Target)
	}
	return b.String()
}

// Describe asks the group's coordinator, through a live member's client,
// how it sees the group.
func (gc *GroupControl) Describe(ctx context.Context) (GroupView, error) {
	gc.mu.Lock()
	g, err := gc.group()
	var adm *kadm.Client
	names := map[string]string{}
	if err == nil {
		for _, m := range g.all {
			if id, _ := m.cl.GroupMetadata(); id != "" {
				names[id] = m.name
			}
		}
		for _, m := range g.members {
			if !m.hasCrashed() {
				adm = kadm.NewClient(m.cl)
				break
			}
		}
	}
	gc.mu.Unlock()
	switch {
	case err != nil:
		return GroupView{}, err
	case adm == nil:
		return GroupView{}, errors.New("steadystate: no live member to describe the group through")
	case g.protocol == GroupProtocolConsumer:
		return describeConsumerGroup(ctx, adm, g.name, g.topic, names)
	}
	return describeClassicGroup(ctx, adm, g.name, g.topic, names)
}

func describeConsumerGroup(ctx context.Context, adm *kadm.Client, group, topic string, names map[string]string) (GroupView, error) {
	ds, err := adm.DescribeConsumerGroups(ctx, group)
	if err == nil {
		err = ds.Error()
	}
	if err != nil {
		return GroupView{}, fmt.Errorf("steadystate: describing group %s: %w", group, err)
	}
	d := ds[group]
	v := GroupView{State: d.State, Epoch: d.Epoch, AssignmentEpoch: d.AssignmentEpoch}
	for _, m := range d.Members {
		v.Members = append(v.Members, MemberView{ID: m.MemberID, Name: names[m.MemberID], Epoch: m.MemberEpoch,
			Assigned: partitionsOf(m.Assignment, topic), Target: partitionsOf(m.TargetAssignment, topic)})
	}
	return v, nil
}

func describeClassicGroup(ctx context.Context, adm *kadm.Client, group, topic string, names map[string]string) (GroupView, error) {
	ds, err := adm.DescribeGroups(ctx, group)
	if err == nil {
		err = ds.Error()
	}
	if err != nil {
		return GroupView{}, fmt.Errorf("steadystate: describing group %s: %w", group, err)
	}
	d := ds[group]
	v := GroupView{State: d.State}
	for _, m := range d.Members {
		mv := MemberView{ID: m.MemberID, Name: names[m.MemberID]}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				if t.Topic == topic {
					mv.Assigned = slices.Sorted(slices.Values(t.Partitions))
				}
			}
		}
		v.Members = append(v.Members, mv)
	}
	return v, nil
}

// partitionsOf lists, sorted, the partitions of topic in s.
func partitionsOf(s kadm.TopicsSet, topic string) []int32 {
	var ps []int32
	for p := range s[topic] {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}
