package localcluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// auditPolicy has kube-apiserver log, at Metadata level, every request made
// with a ServiceAccount's credentials outside kube-system: the suite acts as
// manifests/rbac's ServiceAccount on this cluster, so the log shows each of
// its calls. The control plane's own controllers (kube-system's accounts)
// and the admin user's (the node agent's) are left out: they are most of
// the traffic and none of the suite's.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  userGroups: ["system:serviceaccounts:kube-system"]
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
`

// Where the audit policy and log live in the state dir.
const (
	auditPolicyFile = "audit-policy.yaml"
	auditLogFile    = "audit.log"
)

// AuditLogPath returns the API server's audit log: one JSON event per line,
// for the requests of ServiceAccounts outside kube-system.
func (c *Cluster) AuditLogPath() string { return filepath.Join(c.dir, auditLogFile) }

// writeAuditPolicy writes the policy kube-apiserver's flags name.
func (c *Cluster) writeAuditPolicy() error {
	if err := os.WriteFile(filepath.Join(c.dir, auditPolicyFile), []byte(auditPolicy), 0o644); err != nil {
		return fmt.Errorf("localcluster: audit policy: %w", err)
	}
	return nil
}

// AuditEvent is the part of an audit.k8s.io/v1 Event that says who did
// what (Metadata level).
type AuditEvent struct {
	Stage     string    `json:"stage"`
	Verb      string    `json:"verb"`
	URI       string    `json:"requestURI"`
	UserAgent string    `json:"userAgent"`
	User      AuditUser `json:"user"`
	Object    struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	Status struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	At time.Time `json:"stageTimestamp"`
}

// AuditUser is who made a request.
type AuditUser struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

// mutatingVerbs are the verbs of audit events that change the cluster (a
// pods/exec or an eviction is a create).
var mutatingVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// Mutating reports whether e changed, or asked to change, the cluster.
func (e AuditEvent) Mutating() bool { return slices.Contains(mutatingVerbs, e.Verb) }

func (e AuditEvent) String() string {
	what := e.Object.Resource
	if e.Object.Subresource != "" {
		what += "/" + e.Object.Subresource
	}
	if e.Object.Namespace != "" {
		what += " " + e.Object.Namespace + "/" + e.Object.Name
	} else if e.Object.Name != "" {
		what += " " + e.Object.Name
	}
	return fmt.Sprintf("%s %s %s by %s: %d", e.At.Format(time.RFC3339Nano), e.Verb, what, e.User.Username, e.Status.Code)
}

// ReadAudit returns the completed requests (stage ResponseComplete or
// Panic) of an audit log by user, at or after since, in the log's order:
// its rotated backups (audit-<time>.log, oldest first) first. A log that
// does not exist yet holds none.
func ReadAudit(path, user string, since time.Time) ([]AuditEvent, error) {
	backups, err := filepath.Glob(strings.TrimSuffix(path, filepath.Ext(path)) + "-*" + filepath.Ext(path))
	if err != nil {
		return nil, fmt.Errorf("localcluster: audit log: %w", err)
	}
	slices.Sort(backups) // their names end in the rotation's time
	var out []AuditEvent
	for _, p := range append(backups, path) {
		es, err := readAuditFile(p, user, since)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, nil
}

// readAuditFile is ReadAudit of one file.
func readAuditFile(path, user string, since time.Time) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("localcluster: audit log: %w", err)
	}
	defer f.Close()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var e AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("localcluster: audit log %s line %d: %w", path, n, err)
		}
		if e.User.Username != user || e.At.Before(since) || (e.Stage != "ResponseComplete" && e.Stage != "Panic") {
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("localcluster: audit log: %w", err)
	}
	return out, nil
}
