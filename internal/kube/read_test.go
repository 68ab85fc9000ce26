package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadObjects(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sts := "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: kafka, namespace: events}\nspec: {replicas: 3}\n"
	write("plain/b.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: events}\n---\n"+sts)
	write("plain/a.json", `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "kafka", "namespace": "events"}}`)
	write("plain/notes.txt", "not a manifest")
	write("kust/kustomization.yaml", "namespace: streams\nnamePrefix: prod-\nresources: [sts.yaml]\n")
	write("kust/sts.yaml", sts)
	write("empty/README.md", "nothing")
	write("broken.yaml", "apiVersion: v1\nkind: Service\n")

	tests := []struct {
		name    string
		path    string
		want    string // kind/namespace/name of each object, in order
		wantErr string
	}{
		{name: "a file of two documents", path: filepath.Join(dir, "plain/b.yaml"), want: "Namespace//events StatefulSet/events/kafka"},
		{name: "a directory, in name order, other files ignored", path: filepath.Join(dir, "plain"), want: "Service/events/kafka Namespace//events StatefulSet/events/kafka"},
		{name: "a kustomization", path: filepath.Join(dir, "kust"), want: "StatefulSet/streams/prod-kafka"},
		{name: "no such path", path: filepath.Join(dir, "missing"), wantErr: "no such file"},
		{name: "a directory without manifests", path: filepath.Join(dir, "empty"), wantErr: "no object"},
		{name: "an object without a name", path: filepath.Join(dir, "broken.yaml"), wantErr: "lacks apiVersion, kind or metadata.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := ReadObjects(tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("got %v, want %s", got, tt.want)
			}
		})
	}

	objs, err := ReadObjects(filepath.Join(dir, "plain"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Namespaces(objs); strings.Join(got, ",") != "events" {
		t.Errorf("namespaces %v, want [events]", got)
	}
	if got := PodsOf(objs, "events"); got != 3 {
		t.Errorf("pods %d, want 3", got)
	}
}
