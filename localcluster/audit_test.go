package localcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The first event is from a real audit log of this cluster's API server
// (the suite's ServiceAccount reading its namespace); after it, shaped like
// it: a watch's first stage, the ServiceAccount patching a StatefulSet, and
// another user's delete.
const auditLines = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"aa351a9a-f9c7-41bc-9980-7e406451d693","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/kafka","verb":"get","user":{"username":"system:serviceaccount:kafka:kafkachaos","uid":"ac31e15c-2a7f-4ca5-a136-84537547d37b","groups":["system:serviceaccounts","system:serviceaccounts:kafka","system:authenticated"],"extra":{"authentication.kubernetes.io/credential-id":["JTI=eb3f362a-cf45-4fb8-8232-679a733e97bd"]}},"sourceIPs":["127.0.0.1"],"userAgent":"suites.test/v0.0.0 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"namespaces","namespace":"kafka","name":"kafka","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-12-05T01:01:01.805722Z","stageTimestamp":"2026-12-05T01:01:01.807025Z","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by ClusterRoleBinding \"kafkachaos-kafka\" of ClusterRole \"kafkachaos-kafka\" to ServiceAccount \"kafkachaos/kafka\""}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseStarted","requestURI":"/api/v1/namespaces/kafka/pods?watch=true","verb":"watch","user":{"username":"system:serviceaccount:kafka:kafkachaos"},"objectRef":{"resource":"pods","namespace":"kafka","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"stageTimestamp":"2026-12-05T01:01:02.000000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a3","stage":"ResponseComplete","requestURI":"/apis/apps/v1/namespaces/kafka/statefulsets/kafka","verb":"patch","user":{"username":"system:serviceaccount:kafka:kafkachaos"},"objectRef":{"resource":"statefulsets","namespace":"kafka","name":"kafka","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"stageTimestamp":"2026-12-05T01:01:03.000000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a4","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/kafka/pods/x","verb":"delete","user":{"username":"system:serviceaccount:other:app"},"objectRef":{"resource":"pods","namespace":"kafka","name":"x","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"stageTimestamp":"2026-12-05T01:01:04.000000Z"}
`

func TestReadAudit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(auditLines), 0o644); err != nil {
		t.Fatal(err)
	}
	const sa = "system:serviceaccount:kafka:kafkachaos"
	tests := []struct {
		name         string
		user         string
		since        time.Time
		want         []string // verbs
		wantMutating int
	}{
		{"the suite's completed requests", sa, time.Time{}, []string{"get", "patch"}, 1},
		{"since a time", sa, time.Date(2026, 12, 5, 1, 1, 2, 500e6, time.UTC), []string{"patch"}, 1},
		{"another user", "system:serviceaccount:other:app", time.Time{}, []string{"delete"}, 1},
		{"nobody", "nobody", time.Time{}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, err := ReadAudit(path, tt.user, tt.since)
			if err != nil {
				t.Fatal(err)
			}
			var verbs []string
			mutating := 0
			for _, e := range es {
				verbs = append(verbs, e.Verb)
				if e.Mutating() {
					mutating++
				}
			}
			if strings.Join(verbs, ",") != strings.Join(tt.want, ",") || mutating != tt.wantMutating {
				t.Errorf("verbs %v (%d mutating), want %v (%d)", verbs, mutating, tt.want, tt.wantMutating)
			}
		})
	}
	es, _ := ReadAudit(path, sa, time.Time{})
	if got := es[1].String(); got != "2026-12-05T01:01:03Z patch statefulsets kafka/kafka by "+sa+": 200" {
		t.Errorf("String() = %q", got)
	}
	if es, err := ReadAudit(filepath.Join(t.TempDir(), "none.log"), sa, time.Time{}); err != nil || es != nil {
		t.Errorf("a missing log: %v, %v", es, err)
	}
	// A rotated backup is read first.
	lines := strings.SplitAfter(auditLines, "\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "audit-2026-12-05T01-01-01.000.log"), []byte(lines[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "audit.log"), []byte(strings.Join(lines[1:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if es, err := ReadAudit(filepath.Join(dir, "audit.log"), sa, time.Time{}); err != nil || len(es) != 2 || es[0].Verb != "get" {
		t.Errorf("with a backup: %v, %v; want the backup's get, then the patch", es, err)
	}
}
