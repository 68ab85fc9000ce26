package chaos

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// restartingAPI is a Kubernetes API at one loopback address that is down
// (connections refused) until Start, then answers 403 to its first
// forbidden requests, as a kube-apiserver whose RBAC authorizer has not
// synced yet, then serves one cordoned Node with a drain's ledger entry.
type restartingAPI struct {
	t         *testing.T
	addr      string
	forbidden int

	mu       sync.Mutex
	node     *corev1.Node
	requests []string // "METHOD path -> code"
	srv      *httptest.Server
}

func newRestartingAPI(t *testing.T, forbidden int) *restartingAPI {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // down: the port refuses connections until Start
	node := withLedger(t, testNode("node-1", true), entry(KindNodeDrain, "r1"))
	return &restartingAPI{t: t, addr: addr, forbidden: forbidden, node: node}
}

func (a *restartingAPI) client() kubernetes.Interface {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://" + a.addr})
	if err != nil {
		a.t.Fatal(err)
	}
	return cs
}

// Start brings the API up at its address.
func (a *restartingAPI) Start() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.srv != nil {
		return
	}
	l, err := net.Listen("tcp", a.addr)
	if err != nil {
		a.t.Fatalf("bringing the API back at %s: %v", a.addr, err)
	}
	a.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(a.serve)}}
	a.srv.Start()
	a.t.Cleanup(a.srv.Close)
}

func (a *restartingAPI) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	code := http.StatusOK
	var body any = a.node
	switch {
	case a.forbidden != 0:
		if a.forbidden > 0 {
			a.forbidden--
		}
		st := apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, a.node.Name,
			errors.New(`User "system:serviceaccount:kafka:kafkachaos" cannot get resource "nodes" in API group "" at the cluster scope`))
		st.ErrStatus.Kind, st.ErrStatus.APIVersion = "Status", "v1"
		code, body = http.StatusForbidden, st.ErrStatus
	case r.Method == http.MethodPatch:
		// The recovery's merge patch: the ledger emptied, the node uncordoned.
		var p struct {
			Metadata struct {
				Annotations map[string]*string `json:"annotations"`
			} `json:"metadata"`
			Spec *struct {
				Unschedulable bool `json:"unschedulable"`
			} `json:"spec"`
		}
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			a.t.Errorf("patch: %v", err)
		}
		if p.Spec != nil {
			a.node.Spec.Unschedulable = p.Spec.Unschedulable
		}
		for k, v := range p.Metadata.Annotations {
			if v == nil {
				delete(a.node.Annotations, k)
			}
		}
	}
	a.requests = append(a.requests, r.Method+" "+r.URL.Path+" -> "+http.StatusText(code))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

func TestRecoverThroughARestartingAPIServer(t *testing.T) {
	tests := []struct {
		name string
		// forbidden is how many requests the API answers 403 once up (-1:
		// all of them); startAfter, how many refused attempts come first
		// (-1: it is up from the start).
		forbidden, startAfter int
		warmUp                time.Duration
		wantErr               string
		wantUncordoned        bool
	}{
		{name: "refused, then forbidden while RBAC warms up, then served: recovered",
			forbidden: 3, startAfter: 2, warmUp: time.Minute, wantUncordoned: true},
		{name: "forbidden from the start: a real permission problem fails at once, naming it",
			forbidden: -1, startAfter: -1, warmUp: time.Minute,
			wantErr: `nodes "node-1" is forbidden: User "system:serviceaccount:kafka:kafkachaos" cannot get resource "nodes" in API group "" at the cluster scope: the suite's identity lacks this permission; grant it`},
		{name: "refused, then forbidden for good: fails once the warm-up is over, naming it",
			forbidden: -1, startAfter: 1, warmUp: 2 * time.Second,
			wantErr: `cannot get resource "nodes" in API group "" at the cluster scope: the suite's identity lacks this permission (refused for longer than the 2s given to an API server warming up after an outage)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newRestartingAPI(t, tt.forbidden)
			if tt.startAfter < 0 {
				api.Start()
			}
			f := &NodeDrain{Scope: Scope{Client: api.client(), Namespace: "kafka", Out: &strings.Builder{}}, Node: "node-1"}
			var heard []string
			start := time.Now()
			err := retryTransient(t.Context(), f.Name(), f.Recover, func(err error, _ time.Duration) {
				heard = append(heard, err.Error())
				if len(heard) == tt.startAfter {
					api.Start()
				}
			}, NewAPIWatch(tt.warmUp))
			took := time.Since(start)
			api.mu.Lock()
			defer api.mu.Unlock()
			t.Logf("in %s, retried after: %q; the API saw: %q", took.Round(time.Millisecond), heard, api.requests)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err %v, want it to contain %q", err, tt.wantErr)
			}
			var pe *PermissionError
			if tt.wantErr != "" && !errors.As(err, &pe) {
				t.Errorf("err %T, want a PermissionError", err)
			}
			if tt.wantErr != "" && took > tt.warmUp+10*time.Second {
				t.Errorf("a refusal took %s to fail, past the warm-up of %s", took, tt.warmUp)
			}
			if got := !api.node.Spec.Unschedulable; got != tt.wantUncordoned {
				t.Errorf("node uncordoned %t, want %t", got, tt.wantUncordoned)
			}
			if tt.wantUncordoned {
				if es, _ := LedgerOf(api.node); len(es) != 0 {
					t.Errorf("ledger left on the node: %v", es)
				}
			}
		})
	}
}

func TestAPIWatch(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "n", errors.New("no"))
	unauthorized := apierrors.NewUnauthorized("token")
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, "n")
	type step struct {
		at        time.Duration // since the watch began
		err       error
		wantRetry bool
		wantPerm  bool // the error reported is a PermissionError
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"forbidden with no outage before it is a permission problem", []step{{0, forbidden, false, true}}},
		{"unauthorized with no outage before it is a permission problem", []step{{0, unauthorized, false, true}}},
		{"forbidden within the warm-up after a refusal is retried", []step{{0, refused, true, false}, {10 * time.Second, forbidden, true, false}, {29 * time.Second, unauthorized, true, false}}},
		{"forbidden past the warm-up is a permission problem", []step{{0, refused, true, false}, {10 * time.Second, forbidden, true, false}, {31 * time.Second, forbidden, false, true}}},
		{"each outage starts the warm-up again", []step{{0, refused, true, false}, {25 * time.Second, apierrors.NewServiceUnavailable("starting"), true, false}, {50 * time.Second, forbidden, true, false}}},
		{"other errors end it, outage or not", []step{{0, refused, true, false}, {time.Second, notFound, false, false}}},
		{"success", []step{{0, nil, false, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
			var now time.Time
			w := NewAPIWatch(30 * time.Second)
			w.now = func() time.Time { return now }
			for i, s := range tt.steps {
				now = start.Add(s.at)
				retry, err := w.Retry(s.err)
				var pe *PermissionError
				if retry != s.wantRetry || errors.As(err, &pe) != s.wantPerm {
					t.Errorf("step %d (%v at %s): retry %t, error %v; want retry %t, permission error %t", i, s.err, s.at, retry, err, s.wantRetry, s.wantPerm)
				}
				if s.err != nil && !errors.Is(err, s.err) {
					t.Errorf("step %d: the error %v does not wrap %v", i, err, s.err)
				}
			}
		})
	}
}
