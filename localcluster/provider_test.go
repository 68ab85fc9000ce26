package localcluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProviderLeavesWhatItDidNotCreate(t *testing.T) {
	dir := t.TempDir()
	c, err := New(WithStateDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "kept")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// A dry run uses the cluster as it is: nothing runs here, so Up
	// refuses, naming the command that brings it up, and starts nothing.
	_, err = Provider{Cluster: c, AsItIs: true}.Up(ctx)
	if err == nil || !strings.Contains(err.Error(), "kafkachaos cluster up --state-dir "+dir) {
		t.Fatalf("Up as it is, of a cluster not running: %v", err)
	}
	for _, st := range c.Status() {
		if st.Running {
			t.Errorf("%s runs after a refused Up", st.Name)
		}
	}
	// Neither a kept cluster's Down nor a dry run's deletes its state.
	for _, p := range []Provider{{Cluster: c, Keep: true}, {Cluster: c, AsItIs: true}} {
		if err := p.Down(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("Down of %+v deleted the state dir: %v", p, err)
		}
	}
	// The temporary cluster's Down deletes it.
	if err := (Provider{Cluster: c}).Down(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Down of a temporary cluster left its state dir: %v", err)
	}
}
