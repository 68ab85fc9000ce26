package kafkaadmin

import (
	"context"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDeleteTopic(t *testing.T) {
	ctx := context.Background()
	_, cl := fakeCluster(t, 1, 3)
	for _, topic := range []string{"t", "t", "never-was"} { // the second and third: already gone
		if err := cl.DeleteTopic(ctx, topic); err != nil {
			t.Fatalf("DeleteTopic(%s): %v", topic, err)
		}
	}
	ts, err := cl.adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Has("t") {
		t.Fatalf("topic t still listed: %v", ts.Names())
	}
}

func TestUnknownTopics(t *testing.T) {
	topic := func(name string, code int16) kmsg.MetadataResponseTopic {
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), code
		return rt
	}
	resp := kmsg.NewPtrMetadataResponse()
	resp.Topics = []kmsg.MetadataResponseTopic{topic("a", 0), topic("b", kerr.UnknownTopicOrPartition.Code), topic("c", kerr.LeaderNotAvailable.Code)}
	if got, want := unknownTopics(resp, []string{"a", "b", "c", "d"}), []string{"b", "c", "d"}; !slices.Equal(got, want) {
		t.Fatalf("unknownTopics = %v, want %v", got, want)
	}
	if got := unknownTopics(resp, []string{"a"}); len(got) != 0 {
		t.Fatalf("unknownTopics = %v, want none", got)
	}
}
