package suites

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/kafkasec"
	"github.com/kafkachaos/kafkachaos/manifests"
	"github.com/kafkachaos/kafkachaos/scenario"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// ErrBadConfig wraps every configuration problem.
var ErrBadConfig = errors.New("suites: bad config")

// Config is what the suite runs against and how hard. It comes from a YAML
// file (-kafkachaos.config) and from flags after `--`, the flags winning.
// The zero value runs on the embedded local cluster.
type Config struct {
	Target      TargetConfig      `json:"target"`
	SteadyState SteadyStateConfig `json:"steadyState"`
	Timing      TimingConfig      `json:"timing"`
	Bounds      BoundsConfig      `json:"bounds"`
	Upgrade     UpgradeConfig     `json:"upgrade"`
	// DryRun prints each spec's plan and changes nothing.
	DryRun bool `json:"dryRun,omitempty"`
	// RunID tags the ledger entries of this run; default: random.
	RunID string `json:"runID,omitempty"`
}

// TargetConfig says which cluster and which Kafka.
type TargetConfig struct {
	// Kubeconfig of an existing cluster; empty brings up the embedded
	// local cluster (in a temporary state dir, taken down at the end).
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	// InCluster uses the pod's own ServiceAccount (the suite running in a
	// pod, e.g. as manifests/rbac's kafkachaos account) instead of a
	// kubeconfig.
	InCluster bool `json:"inCluster,omitempty"`
	// Layout of manifests/kafka deployed on the local cluster. Default
	// "combined"; LayoutNone deploys nothing and tests the Kafka that runs
	// in target.namespace on the kept local cluster in target.stateDir
	// (your own, applied with kafkachaos cluster up --manifest). With a
	// stateDir and a target.namespace, the default is the layout of that
	// namespace, or none when no layout uses it.
	Layout string `json:"layout,omitempty"`
	// KafkaVersion the layout runs on the local cluster (its apache/kafka
	// image tag), fetched first with make kafka-dist KAFKA_VERSION=...
	// Default: the manifest's (kafkadist.DefaultVersion).
	KafkaVersion string `json:"kafkaVersion,omitempty"`
	// JavaImage runs Kafka's own Java clients as pods (the specs labelled
	// java): an apache/kafka image, whose bin/ has the verifiable clients.
	// Default: apache/kafka:<target.kafkaVersion> when that is known (on
	// the local cluster, always); without either, those specs are skipped.
	JavaImage string `json:"javaImage,omitempty"`
	// PauseImage is what the broker-stop specs run in a stopped broker's
	// container (chaos.Stop): any image whose nodes can pull it. Default
	// registry.k8s.io/pause:3.10; an air-gapped cluster gives its mirror's.
	PauseImage string `json:"pauseImage,omitempty"`
	// Namespace of Kafka. Default: the layout's namespace.
	Namespace string `json:"namespace,omitempty"`
	// Flavor of the deployment: statefulset, strimzi, koperator, or empty
	// to detect it.
	Flavor string `json:"flavor,omitempty"`
	// Selector narrows the broker pods by label; empty: every pod of the
	// flavor in the namespace.
	Selector string `json:"selector,omitempty"`
	// StatefulSet rolled by the rolling-restart, config-change and scale
	// specs. Default: the layout's brokers on the local cluster, else the
	// StatefulSet that owns the broker pods (their owner references).
	StatefulSet string `json:"statefulSet,omitempty"`
	// Bootstrap brokers the suite's own clients dial (host:port). Required
	// with a kubeconfig; on the local cluster the brokers' cluster names
	// are used through the node agent's hosts file.
	Bootstrap []string `json:"bootstrap,omitempty"`
	// Security of the suite's Kafka clients (TLS, SASL), named after
	// Kafka's client properties; commandConfig reads a client properties
	// file. Only on an existing cluster: the local cluster's Kafka is
	// PLAINTEXT.
	Security kafkasec.Settings `json:"security,omitzero"`
	// StateDir of the embedded local cluster to use: brought up there if
	// it is not running, and left running at the end. Empty: a temporary
	// cluster, taken down at the end.
	StateDir string `json:"stateDir,omitempty"`
	// Binary is the kafkachaos-node program the local cluster's node agent
	// runs. Default: the one next to the suite's executable (make dist),
	// else built from ./cmd/kafkachaos-node with go build.
	Binary string `json:"binary,omitempty"`
	// AllowDataLoss opts in to the faults that destroy data and cannot be
	// undone (disk loss). They also need the namespace's opt-in.
	AllowDataLoss bool `json:"allowDataLoss,omitempty"`
}

// UpgradeConfig is the upgrade spec's pair of versions.
type UpgradeConfig struct {
	// From is the Kafka version the upgrade spec deploys and upgrades from.
	// Default DefaultUpgradeFrom.
	From string `json:"from,omitempty"`
	// To is the version it rolls to. Default: target.kafkaVersion, or the
	// manifest's.
	To string `json:"to,omitempty"`
}

// DefaultUpgradeFrom is the upgrade spec's default starting version: the
// last release of the line before kafkadist.DefaultVersion's.
const DefaultUpgradeFrom = "4.3.2"

// SteadyStateConfig shapes the load that runs during every fault
// (steadyState: the story engine's own settings).
type SteadyStateConfig = scenario.SteadyStateConfig

// TimingConfig sets how long each phase lasts (the story engine's
// timing), and how long a soak repeats its faults.
type TimingConfig struct {
	scenario.TimingConfig
	// Soak is how long the soak spec repeats its faults (it ends the
	// story it is in first). Default 1h.
	Soak metav1.Duration `json:"soak,omitempty"`
}

// BoundsConfig is the steady-state hypothesis (the story engine's
// bounds). Its zero values get defaults here: maxUnavailable by the kind
// of fault (scenario's unavailabilityBound), gracefulP99AckRatio
// DefaultGracefulP99AckRatio, gracefulP99AckFloor
// DefaultGracefulP99AckFloor, minThroughputRatioAfter 0.9.
type BoundsConfig = scenario.BoundsConfig

// LayoutNone is target.layout for your own Kafka on the local cluster.
const LayoutNone = "none"

// Defaults of Config.
const (
	DefaultRate           = 1000
	DefaultWarmup         = 5 * time.Second
	DefaultBaseline       = 15 * time.Second
	DefaultHold           = 10 * time.Second
	DefaultAfter          = 15 * time.Second
	DefaultSoak           = time.Hour
	DefaultMaxUnavailable = scenario.DefaultMaxUnavailable // a fault of no known kind
	// GracefulMaxUnavailable bounds a graceful operation (a roll, a
	// drain): a healthy one stalls the load for well under a second.
	GracefulMaxUnavailable = scenario.GracefulMaxUnavailable
	// HardMargin is added to broker.session.timeout.ms for a hard fault:
	// the fencing itself, a metadata refresh and an election.
	HardMargin            = scenario.HardMargin
	DefaultThroughputBack = 0.9
	// A graceful operation's p99 ack in its fault and recovery phases, at
	// most: DefaultGracefulP99AckRatio times the baseline's, never below
	// DefaultGracefulP99AckFloor. Measured on healthy runs of the good
	// manifests (2026-12-05): a rolling restart 1.03 s (35x a 29 ms
	// baseline), a drain 0.25 s, an upgrade roll 0.60 s; an earlier drain
	// showed 1.75 s over the whole run. The floor is what holds on this
	// machine, whose baselines run 25-270 ms.
	DefaultGracefulP99AckRatio = 20
	DefaultGracefulP99AckFloor = 5 * time.Second
)

// load reads the config file, lays the flags over it, fills defaults and
// validates the result.
func (f *flagValues) load() (Config, error) {
	var c Config
	if f.config != "" {
		raw, err := os.ReadFile(f.config)
		if err != nil {
			return Config{}, fmt.Errorf("%w: %w", ErrBadConfig, err)
		}
		if err := yaml.UnmarshalStrict(raw, &c); err != nil {
			return Config{}, fmt.Errorf("%w: %s: %w", ErrBadConfig, f.config, err)
		}
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&c.Target.Kubeconfig, f.kubeconfig)
	set(&c.Target.Context, f.context)
	set(&c.Target.Layout, f.layout)
	set(&c.Target.KafkaVersion, f.kafkaVersion)
	set(&c.Target.JavaImage, f.javaImage)
	set(&c.Target.PauseImage, f.pauseImage)
	set(&c.Upgrade.From, f.upgradeFrom)
	set(&c.Target.Namespace, f.namespace)
	set(&c.Target.Flavor, f.flavor)
	set(&c.Target.Selector, f.selector)
	set(&c.Target.StatefulSet, f.statefulSet)
	set(&c.Target.Binary, f.binary)
	set(&c.Target.StateDir, f.stateDir)
	set(&c.Target.Security.CommandConfig, f.commandConfig)
	set(&c.RunID, f.runID)
	if f.bootstrap != "" {
		c.Target.Bootstrap = nil
		for _, b := range strings.Split(f.bootstrap, ",") {
			if b = strings.TrimSpace(b); b != "" {
				c.Target.Bootstrap = append(c.Target.Bootstrap, b)
			}
		}
	}
	if f.soak != 0 {
		c.Timing.Soak.Duration = f.soak
	}
	if f.rate != 0 {
		c.SteadyState.Rate = f.rate
	}
	c.DryRun = c.DryRun || f.dryRun
	c.Target.InCluster = c.Target.InCluster || f.inCluster
	c.Target.AllowDataLoss = c.Target.AllowDataLoss || f.allowDataLoss
	return c.withDefaults()
}

// withDefaults fills zero values and validates.
func (c Config) withDefaults() (Config, error) {
	bad := func(format string, a ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w: "+format, append([]any{ErrBadConfig}, a...)...)
	}
	if c.Target.Layout == "" && c.Local() && c.Target.StateDir != "" && c.Target.Namespace != "" {
		c.Target.Layout = layoutIn(c.Target.Namespace)
	}
	if c.Target.Layout == "" {
		c.Target.Layout = manifests.Layouts()[0].Name
	}
	layout, err := c.SpecLayout()
	if err != nil {
		return bad("target.layout: %v, or %s", err, LayoutNone)
	}
	if c.UsersKafka() && (c.Target.StateDir == "" || c.Target.Namespace == "") {
		return bad("target.layout %s tests the Kafka you deployed in target.namespace on the local cluster kept in target.stateDir: set both (kafkachaos cluster up --kafka none --manifest ... first)", LayoutNone)
	}
	if c.Target.InCluster && c.Target.Kubeconfig != "" {
		return bad("target.inCluster and target.kubeconfig exclude each other")
	}
	if c.Local() {
		if c.Target.Namespace == "" {
			c.Target.Namespace = layout.Namespace
		}
		if c.Target.StatefulSet == "" && !c.UsersKafka() {
			c.Target.StatefulSet = layout.StatefulSet
		}
		if c.Target.Security != (kafkasec.Settings{}) {
			return bad("target.security needs a kubeconfig: the local cluster's Kafka listens in PLAINTEXT")
		}
		if c.Target.KafkaVersion == "" {
			if c.Target.KafkaVersion, err = layout.KafkaVersion(); err != nil {
				return bad("target.layout: %v", err)
			}
		}
		if err := layout.CheckKafkaVersion(c.Target.KafkaVersion); err != nil && !c.UsersKafka() {
			return bad("target.kafkaVersion: %v", err)
		}
		fromGiven := c.Upgrade.From != ""
		if !fromGiven {
			c.Upgrade.From = DefaultUpgradeFrom
		}
		if c.Upgrade.To == "" {
			c.Upgrade.To = c.Target.KafkaVersion
		}
		for _, v := range []struct{ name, version string }{
			{"target.kafkaVersion", c.Target.KafkaVersion}, {"upgrade.from", c.Upgrade.From}, {"upgrade.to", c.Upgrade.To},
		} {
			if _, err := kafkadist.LineOf(v.version); err != nil {
				return bad("%s: %v", v.name, err)
			}
		}
		if fromGiven && kafkadist.CompareVersions(c.Upgrade.From, c.Upgrade.To) > 0 {
			return bad("upgrade.from %s is newer than upgrade.to %s: the upgrade specs roll forward, then (upgrade-rollback) back", c.Upgrade.From, c.Upgrade.To)
		}
	} else {
		if c.Target.KafkaVersion != "" || c.Upgrade != (UpgradeConfig{}) {
			return bad("target.kafkaVersion and upgrade need the local cluster: on an existing cluster the suite deploys no Kafka of its own")
		}
		if c.Target.StateDir != "" {
			return bad("target.stateDir (the local cluster) and an existing cluster (target.kubeconfig or target.inCluster) exclude each other")
		}
		if !c.Target.InCluster {
			if _, err := os.Stat(c.Target.Kubeconfig); err != nil {
				return bad("target.kubeconfig: %v", err)
			}
		}
		if c.Target.Namespace == "" {
			return bad("target.namespace is required on an existing cluster")
		}
		if len(c.Target.Bootstrap) == 0 {
			return bad("target.bootstrap is required on an existing cluster: the suite's clients must reach the brokers")
		}
	}
	if _, err := c.Target.Security.Resolve(); err != nil {
		return bad("target.security: %v", err)
	}
	if _, err := brokers.ParseFlavor(c.Target.Flavor); err != nil {
		return bad("target.flavor: %v", err)
	}
	if c.SteadyState.Rate == 0 {
		c.SteadyState.Rate = DefaultRate
	}
	if c.SteadyState.Agents < 0 || c.SteadyState.Agents > 100 {
		return bad("steadyState.agents %d: want 0 (the suite's own process) to 100", c.SteadyState.Agents)
	}
	if c.SteadyState.Agents > 0 && c.Target.Security != (kafkasec.Settings{}) {
		return bad("steadyState.agents with target.security: the in-cluster agents reach PLAINTEXT brokers only, for now")
	}
	if c.SteadyState.RequestTimeout.Duration < 0 {
		return bad("steadyState.requestTimeout %s is negative", c.SteadyState.RequestTimeout.Duration)
	}
	switch r := c.SteadyState.Rate; {
	case r == steadystate.RateUnlimited && c.SteadyState.Agents == 0:
		return bad("steadyState.rate %d (as fast as possible) needs steadyState.agents: the suite's own process shares its cores with the checks", r)
	case r < 0 && r != steadystate.RateUnlimited:
		return bad("steadyState.rate %d: want records/s > 0, or %d for as fast as each agent can", r, steadystate.RateUnlimited)
	}
	// The load's own rules, checked now rather than once the cluster is up;
	// on the local cluster the suite knows the brokers' addresses itself.
	bootstrap := c.Target.Bootstrap
	if len(bootstrap) == 0 {
		bootstrap = []string{"local-cluster:9092"}
	}
	load := steadystate.Config{Bootstrap: bootstrap, Rate: c.SteadyState.Rate, Partitions: c.SteadyState.Partitions,
		RecordSize: c.SteadyState.RecordSize, Producers: c.SteadyState.Producers, RequestTimeout: c.SteadyState.RequestTimeout.Duration}
	if err := load.WithDefaults().Validate(); err != nil {
		return bad("steadyState: %v", err)
	}
	defaultDuration(&c.Timing.Warmup, DefaultWarmup)
	defaultDuration(&c.Timing.Baseline, DefaultBaseline)
	defaultDuration(&c.Timing.Hold, DefaultHold)
	defaultDuration(&c.Timing.After, DefaultAfter)
	defaultDuration(&c.Timing.Soak, DefaultSoak)
	if c.Bounds.GracefulP99AckRatio == 0 {
		c.Bounds.GracefulP99AckRatio = DefaultGracefulP99AckRatio
	}
	defaultDuration(&c.Bounds.GracefulP99AckFloor, DefaultGracefulP99AckFloor)
	if c.Bounds.MinThroughputRatioAfter == 0 {
		c.Bounds.MinThroughputRatioAfter = DefaultThroughputBack
	}
	for name, d := range map[string]time.Duration{
		"timing.warmup": c.Timing.Warmup.Duration, "timing.baseline": c.Timing.Baseline.Duration, "timing.hold": c.Timing.Hold.Duration,
		"timing.after": c.Timing.After.Duration, "timing.soak": c.Timing.Soak.Duration, "bounds.maxUnavailable": c.Bounds.MaxUnavailable.Duration,
		"bounds.maxP99Ack": c.Bounds.MaxP99Ack.Duration, "bounds.gracefulP99AckFloor": c.Bounds.GracefulP99AckFloor.Duration,
	} {
		if d < 0 {
			return bad("%s %s must not be negative", name, d)
		}
	}
	if r := c.Bounds.MinThroughputRatioAfter; r < 0 || r > 1 {
		return bad("bounds.minThroughputRatioAfter %g: want 0 to 1", r)
	}
	return c, nil
}

func defaultDuration(d *metav1.Duration, def time.Duration) {
	if d.Duration == 0 {
		d.Duration = def
	}
}

// Local reports whether the suite brings up the embedded local cluster.
func (c Config) Local() bool { return c.Target.Kubeconfig == "" && !c.Target.InCluster }
