package loadagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Image is the project's image; on the local cluster it runs the binary.
const Image = "ghcr.io/kafkachaos/kafkachaos:dev"

// podIndexLabel is the StatefulSet controller's pod index label.
const podIndexLabel = "apps.kubernetes.io/pod-index"

// Spec describes a set of agents.
type Spec struct {
	Namespace string
	Name      string // of the StatefulSet; default "kafkachaos-agent"
	Image     string // default Image
	Agents    int32
	// RunID is the shared run ID, in hex (as reports print it).
	RunID     string
	Bootstrap []string
	Topic     string
	// Rate is each agent's records/s; the run's rate is Agents × Rate.
	// steadystate.RateUnlimited makes each agent send as fast as it can.
	Rate       int
	Producers  int // per agent; default 1
	Partitions int32
	RecordSize int
	// MaxDuration stops each agent's load by itself after this long, so
	// agents whose suite died do not load Kafka for ever; 0: the agent's
	// default (3h).
	MaxDuration time.Duration
	// Args are more `kafkachaos steadystate` flags (security, acks, ...).
	Args []string
}

func (s Spec) name() string {
	if s.Name == "" {
		return "kafkachaos-agent"
	}
	return s.Name
}

func (s Spec) validate() error {
	switch {
	case s.Namespace == "":
		return errors.New("agents: no namespace")
	case s.Agents < 1:
		return fmt.Errorf("agents: %d agents: want at least 1", s.Agents)
	case s.RunID == "":
		return errors.New("agents: no run ID: every agent must share one")
	case len(s.Bootstrap) == 0:
		return errors.New("agents: no bootstrap brokers")
	case s.Rate <= 0 && s.Rate != steadystate.RateUnlimited:
		return fmt.Errorf("agents: rate %d: want records/s > 0, or %d for as fast as each agent can", s.Rate, steadystate.RateUnlimited)
	}
	return nil
}

// args are the agent's command line.
func (s Spec) args() []string {
	a := []string{"steadystate", "--agent", "--run-id", s.RunID, "--bootstrap", strings.Join(s.Bootstrap, ","),
		"--rate", strconv.Itoa(s.Rate)}
	if s.Topic != "" {
		a = append(a, "--topic", s.Topic)
	}
	if s.Producers > 0 {
		a = append(a, "--producers", strconv.Itoa(s.Producers))
	}
	if s.Partitions > 0 {
		a = append(a, "--partitions", strconv.Itoa(int(s.Partitions)))
	}
	if s.RecordSize > 0 {
		a = append(a, "--record-size", strconv.Itoa(s.RecordSize))
	}
	if s.MaxDuration > 0 {
		a = append(a, "--max-duration", s.MaxDuration.String())
	}
	return append(a, s.Args...)
}

// StatefulSet returns the agents' StatefulSet: Parallel pod management (the
// agents are independent), each pod's index as KAFKACHAOS_AGENT_INDEX (so
// agent i owns producer IDs [i×producers, (i+1)×producers)), ready when
// /healthz says it is producing, spread over nodes when it can be.
func StatefulSet(s Spec) *appsv1.StatefulSet {
	img := s.Image
	if img == "" {
		img = Image
	}
	labels := map[string]string{"app.kubernetes.io/name": "kafkachaos-agent", "app.kubernetes.io/instance": s.name()}
	replicas := s.Agents
	grace := int64(30)
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: s.name(), Namespace: s.Namespace, Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			ServiceName:         s.name(),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					AutomountServiceAccountToken:  new(false), // agents talk to Kafka only
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
							Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{
								TopologyKey:   corev1.LabelHostname,
								LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
							},
						}},
					}},
					Containers: []corev1.Container{{
						Name:  "agent",
						Image: img,
						Args:  s.args(),
						Env: []corev1.EnvVar{{Name: IndexEnv, ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + podIndexLabel + "']"},
						}}},
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: Port}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: PathHealthz, Port: intstr.FromInt32(Port)}},
							PeriodSeconds: 2, FailureThreshold: 3,
						},
					}},
				},
			},
		},
	}
}

// Deploy creates the agents' StatefulSet. An agent set of the same name
// left by an earlier run is an error: delete it first (Delete).
func Deploy(ctx context.Context, cs kubernetes.Interface, s Spec) error {
	if err := s.validate(); err != nil {
		return err
	}
	if _, err := cs.AppsV1().StatefulSets(s.Namespace).Create(ctx, StatefulSet(s), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("agents: create %s/%s: %w", s.Namespace, s.name(), err)
	}
	return nil
}

// Pods lists the agents' pod names in index order.
func (s Spec) Pods() []string {
	pods := make([]string, s.Agents)
	for i := range pods {
		pods[i] = fmt.Sprintf("%s-%d", s.name(), i)
	}
	return pods
}

// existing returns the agent pods there are, in index order.
func existing(ctx context.Context, cs kubernetes.Interface, s Spec) ([]*corev1.Pod, error) {
	var pods []*corev1.Pod
	for _, name := range s.Pods() {
		p, err := cs.CoreV1().Pods(s.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("agents: %w", err)
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// PodUIDs returns the UID of each agent pod there is, by name. A UID that
// changed between two calls is an agent that was restarted: its first run's
// records were never checked, so the run cannot be trusted.
func PodUIDs(ctx context.Context, cs kubernetes.Interface, s Spec) (map[string]types.UID, error) {
	pods, err := existing(ctx, cs, s)
	if err != nil {
		return nil, err
	}
	uids := make(map[string]types.UID, len(pods))
	for _, p := range pods {
		uids[p.Name] = p.UID
	}
	return uids, nil
}

// Observe returns what is there of the agents: their StatefulSet and
// pods, and how many are Ready; waits poll it and print what it saw.
func Observe(ctx context.Context, cs kubernetes.Interface, s Spec) (AgentsSeen, error) {
	seen := AgentsSeen{Want: int(s.Agents)}
	_, err := cs.AppsV1().StatefulSets(s.Namespace).Get(ctx, s.name(), metav1.GetOptions{})
	switch {
	case err == nil:
		seen.StatefulSet = true
	case !apierrors.IsNotFound(err):
		return seen, err
	}
	pods, err := existing(ctx, cs, s)
	for _, p := range pods {
		r := kube.PodReady(p)
		if r {
			seen.Ready++
		}
		seen.Pods = append(seen.Pods, fmt.Sprintf("%s:%s/ready=%t", p.Name, p.Status.Phase, r))
	}
	return seen, err
}

// AgentsSeen is what Observe saw of the agents.
type AgentsSeen struct {
	StatefulSet bool     // the StatefulSet exists
	Pods        []string // name:phase/ready=bool of each agent pod
	Ready       int
	Want        int
}

// AllReady reports whether every agent the spec asks for is Ready.
func (a AgentsSeen) AllReady() bool { return a.Ready == a.Want }

// Gone reports whether neither the StatefulSet nor any agent pod is left.
func (a AgentsSeen) Gone() bool { return !a.StatefulSet && len(a.Pods) == 0 }

func (a AgentsSeen) String() string {
	return fmt.Sprintf("statefulset=%t pods=%v (%d of %d Ready)", a.StatefulSet, a.Pods, a.Ready, a.Want)
}

// reach runs fn with a base URL (http://host:port) of pod's agent port.
type reach func(ctx context.Context, pod string, fn func(base string) error) error

// Stop asks every agent to stop its load (POST /stop): each flushes,
// drains its consumer and then serves its measurements. It reaches the
// agents through the API server (pods/portforward, as cfg's identity).
func Stop(ctx context.Context, cfg *rest.Config, s Spec) error {
	return stop(ctx, portForward(cfg, s.Namespace), s)
}

// MarkPhase tells every agent that the run entered phase p (POST /phase),
// through the API server like Stop, so that each agent's metrics show the
// phase the suite marked. The suite's own marks stay the ones the merged
// report uses.
func MarkPhase(ctx context.Context, cfg *rest.Config, s Spec, p steadystate.Phase) error {
	return markPhase(ctx, portForward(cfg, s.Namespace), s, p)
}

func markPhase(ctx context.Context, r reach, s Spec, p steadystate.Phase) error {
	var errs []error
	for _, pod := range s.Pods() {
		err := r(ctx, pod, func(base string) error {
			_, code, err := call(ctx, http.MethodPost, base+PathPhase+"?name="+url.QueryEscape(string(p)))
			if err == nil && code != http.StatusNoContent {
				err = fmt.Errorf("POST %s: HTTP %d", PathPhase, code)
			}
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("agents: mark phase %s on %s: %w", p, pod, err))
		}
	}
	return errors.Join(errs...)
}

// ErrNotDone is Collect's error while an agent is still running or
// draining; wait and call it again.
var ErrNotDone = errors.New("agents: not done yet")

// Collect returns every agent's measurements (GET /raw), in index order,
// through the API server like Stop. It returns an error wrapping
// ErrNotDone while an agent has not finished.
func Collect(ctx context.Context, cfg *rest.Config, s Spec) ([]steadystate.Measurements, error) {
	return collect(ctx, portForward(cfg, s.Namespace), s)
}

func stop(ctx context.Context, r reach, s Spec) error {
	var errs []error
	for _, pod := range s.Pods() {
		err := r(ctx, pod, func(base string) error {
			_, code, err := call(ctx, http.MethodPost, base+PathStop)
			if err == nil && code != http.StatusAccepted {
				err = fmt.Errorf("POST %s: HTTP %d", PathStop, code)
			}
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("agents: stop %s: %w", pod, err))
		}
	}
	return errors.Join(errs...)
}

func collect(ctx context.Context, r reach, s Spec) ([]steadystate.Measurements, error) {
	out := make([]steadystate.Measurements, 0, s.Agents)
	for _, pod := range s.Pods() {
		var m steadystate.Measurements
		err := r(ctx, pod, func(base string) error {
			body, code, err := call(ctx, http.MethodGet, base+PathRaw)
			switch {
			case err != nil:
				return err
			case code == http.StatusConflict: // still running or draining
				return fmt.Errorf("%w: %s", ErrNotDone, strings.TrimSpace(string(body)))
			case code != http.StatusOK:
				return fmt.Errorf("GET %s: HTTP %d: %s", PathRaw, code, strings.TrimSpace(string(body)))
			}
			return json.Unmarshal(body, &m)
		})
		if err != nil {
			return nil, fmt.Errorf("agents: collect %s: %w", pod, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// callTimeout bounds one HTTP call to an agent.
const callTimeout = time.Minute

// call makes one HTTP request, without keep-alive (each forward carries
// one connection), and returns the body and status.
func call(ctx context.Context, method, url string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return nil, 0, err
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return body, resp.StatusCode, err
}

// portForward reaches agent pods in namespace through the API server's
// pods/portforward, on a local port of 127.0.0.1 for the call's length.
// (The API server's pod proxy would do on most clusters, but it refuses
// pods with loopback IPs, as on the embedded local cluster.)
func portForward(cfg *rest.Config, namespace string) reach {
	return func(ctx context.Context, pod string, fn func(base string) error) error {
		transport, upgrader, err := spdy.RoundTripperFor(cfg)
		if err != nil {
			return err
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
		dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
		stopCh, ready := make(chan struct{}), make(chan struct{})
		fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", Port)}, stopCh, ready, io.Discard, io.Discard)
		if err != nil {
			return err
		}
		failed := make(chan error, 1)
		go func() { failed <- fw.ForwardPorts() }()
		select {
		case <-ready:
		case err := <-failed:
			return fmt.Errorf("port-forward: %w", err)
		case <-ctx.Done():
			close(stopCh) // ForwardPorts returns once its dial does
			return ctx.Err()
		}
		defer func() { close(stopCh); <-failed }()
		ports, err := fw.GetPorts()
		if err != nil || len(ports) == 0 {
			return fmt.Errorf("port-forward: no local port: %w", err)
		}
		return fn(fmt.Sprintf("http://127.0.0.1:%d", ports[0].Local))
	}
}

// Delete deletes the agents' StatefulSet and its pods; it is not an error
// if they are gone already.
func Delete(ctx context.Context, cs kubernetes.Interface, s Spec) error {
	fg := metav1.DeletePropagationForeground
	err := cs.AppsV1().StatefulSets(s.Namespace).Delete(ctx, s.name(), metav1.DeleteOptions{PropagationPolicy: &fg})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("agents: delete %s/%s: %w", s.Namespace, s.name(), err)
	}
	return nil
}
