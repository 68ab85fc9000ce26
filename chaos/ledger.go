package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// LedgerAnnotation holds the ledger of an object a fault touched: a JSON
// list of Entry, at most one per fault kind (Entry.Fault). A fault writes its
// entry in the same patch that makes its change, and Recover removes it in
// the same patch that undoes the change, so the ledger is true even if the
// process dies in between. Both patches carry the object's resourceVersion,
// so a concurrent change makes them fail with a conflict and they are
// retried on a fresh read instead of clobbering it.
const LedgerAnnotation = "kafkachaos.io/ledger"

// Fault kinds written in Entry.Fault. Every kind a fault writes, these and
// the others (KindPause, KindPartition, KindReassign, KindScale,
// KindUpgrade, KindDiskLoss), has a row in the registry of ledger kinds
// (ledgerKinds): the object it is written on, its order of recovery and its
// undo.
const (
	KindNodeDrain      = "node-drain"      // on a Node: we cordoned it
	KindRollingRestart = "rolling-restart" // on a StatefulSet: we restarted it
	KindConfigChange   = "config-change"   // on a StatefulSet: we changed an env var
)

// Entry is one ledger record.
type Entry struct {
	// Fault is the kind of fault (KindNodeDrain, ...).
	Fault string `json:"fault"`
	// RunID is the Scope.RunID of the run that wrote the entry.
	RunID string    `json:"runID,omitempty"`
	At    time.Time `json:"at"`
	// Undo says, for a person, what recovery does.
	Undo string `json:"undo"`
	// Data is what recovery needs, e.g. the previous value of an env var.
	Data map[string]string `json:"data,omitempty"`
}

func (e Entry) String() string {
	s := e.Fault
	if e.RunID != "" {
		s += " of run " + e.RunID
	}
	return s + " at " + e.At.UTC().Format(time.RFC3339)
}

// LedgerOf returns the ledger entries on obj, or nil when it has none.
func LedgerOf(obj metav1.Object) ([]Entry, error) {
	raw, ok := obj.GetAnnotations()[LedgerAnnotation]
	if !ok || raw == "" {
		return nil, nil
	}
	var es []Entry
	if err := json.Unmarshal([]byte(raw), &es); err != nil {
		return nil, fmt.Errorf("chaos: ledger annotation %s on %s is not a JSON list of entries: %w", LedgerAnnotation, obj.GetName(), err)
	}
	return es, nil
}

// entryOf returns the entry of fault kind kind.
func entryOf(es []Entry, kind string) (Entry, bool) {
	for _, e := range es {
		if e.Fault == kind {
			return e, true
		}
	}
	return Entry{}, false
}

// withEntry returns es with e in place of any entry of the same kind.
func withEntry(es []Entry, e Entry) []Entry {
	out := []Entry{e}
	for _, x := range es {
		if x.Fault != e.Fault {
			out = append(out, x)
		}
	}
	return out
}

// metaPatch is the metadata part of a patch: the resourceVersion
// precondition and the new ledger (nil removes the annotation).
func metaPatch(obj metav1.Object, es []Entry) (map[string]any, error) {
	var ledger any // JSON null deletes the annotation
	if len(es) > 0 {
		b, err := json.Marshal(es)
		if err != nil {
			return nil, fmt.Errorf("chaos: encode ledger: %w", err)
		}
		ledger = string(b)
	}
	m := map[string]any{"annotations": map[string]any{LedgerAnnotation: ledger}}
	if rv := obj.GetResourceVersion(); rv != "" {
		m["resourceVersion"] = rv
	}
	return m, nil
}

// patch sends a strategic merge patch to a Node ("nodes"), a StatefulSet
// ("statefulsets") or a Pod ("pods"): objectKind.resource.
func patch(ctx context.Context, cs kubernetes.Interface, ns, name, resource string, p map[string]any) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode patch: %w", err)
	}
	switch resource {
	case "nodes":
		_, err = cs.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, b, metav1.PatchOptions{})
	case "statefulsets":
		_, err = cs.AppsV1().StatefulSets(ns).Patch(ctx, name, types.StrategicMergePatchType, b, metav1.PatchOptions{})
	case "pods":
		_, err = cs.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, b, metav1.PatchOptions{})
	default:
		err = fmt.Errorf("cannot patch %s", resource)
	}
	return err
}

// summary is one line of recovery: "recovered node n: a; b" or, in a dry
// run, "would recover node n: a; b".
func summary(what string, did []string, dryRun bool) string {
	verb := "recovered"
	if dryRun {
		verb = "would recover"
	}
	return fmt.Sprintf("%s %s: %s", verb, what, strings.Join(did, "; "))
}

// statefulSetLedger reads StatefulSet ns/name and the entries of its ledger.
func statefulSetLedger(ctx context.Context, cs kubernetes.Interface, ns, name string) (*appsv1.StatefulSet, []Entry, error) {
	s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	es, err := LedgerOf(s)
	return s, es, err
}
