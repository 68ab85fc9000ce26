package kafkaadmin

import (
	"context"
	"testing"
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
