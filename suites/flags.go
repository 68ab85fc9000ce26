package suites

import (
	"flag"
	"time"

	"github.com/kafkachaos/kafkachaos/chaos"
)

// flagValues are the flags after `--`; empty ones leave the file's values.
type flagValues struct {
	config                                string
	kubeconfig, context, stateDir, binary string
	layout, namespace, flavor, selector   string
	kafkaVersion, upgradeFrom, javaImage  string
	pauseImage                            string
	statefulSet, bootstrap, runID         string
	commandConfig, versionsFile           string
	rate                                  int
	soak                                  time.Duration
	dryRun, inCluster, allowDataLoss      bool
}

// registerFlags registers the suite's flags on fs.
func registerFlags(fs *flag.FlagSet) *flagValues {
	f := &flagValues{}
	fs.StringVar(&f.config, "kafkachaos.config", "", "YAML config file of the suite (see docs/configuration.md)")
	fs.StringVar(&f.kubeconfig, "kafkachaos.kubeconfig", "", "kubeconfig of an existing cluster; empty brings up the embedded local cluster")
	fs.StringVar(&f.context, "kafkachaos.context", "", "kubeconfig context")
	fs.BoolVar(&f.inCluster, "kafkachaos.in-cluster", false, "use the pod's ServiceAccount (the suite running in a pod) instead of a kubeconfig")
	fs.StringVar(&f.layout, "kafkachaos.layout", "", "manifests/kafka layout on the local cluster: combined, separate-controllers, dynamic-quorum (KIP-853), zookeeper (Kafka 3.9 in ZooKeeper mode), or none (your own Kafka in -kafkachaos.namespace on the cluster of -kafkachaos.state-dir; the default there for a namespace no layout uses)")
	fs.StringVar(&f.kafkaVersion, "kafkachaos.kafka-version", "", "Kafka version the local cluster's layout runs (its apache/kafka tag; make kafka-dist KAFKA_VERSION=... first)")
	fs.StringVar(&f.javaImage, "kafkachaos.java-image", "", "apache/kafka image whose verifiable Java clients the java specs run as pods (default apache/kafka:<the Kafka version>)")
	fs.StringVar(&f.pauseImage, "kafkachaos.pause-image", "", "image a stopped broker's container runs in the broker-stop specs (default "+chaos.DefaultPauseImage+"; an air-gapped cluster gives its mirror's)")
	fs.StringVar(&f.upgradeFrom, "kafkachaos.upgrade-from", "", "Kafka version the upgrade spec starts from (default "+DefaultUpgradeFrom+")")
	fs.StringVar(&f.namespace, "kafkachaos.namespace", "", "Kafka's namespace (must carry kafkachaos.io/allow-disruption=true)")
	fs.StringVar(&f.flavor, "kafkachaos.flavor", "", "statefulset, strimzi or koperator; empty detects it")
	fs.StringVar(&f.selector, "kafkachaos.selector", "", "label selector of the broker pods")
	fs.StringVar(&f.statefulSet, "kafkachaos.statefulset", "", "StatefulSet the rolling-restart, config-change and scale specs change (default: the layout's, else the one owning the broker pods)")
	fs.StringVar(&f.bootstrap, "kafkachaos.bootstrap", "", "comma-separated bootstrap brokers the suite's clients dial")
	fs.StringVar(&f.stateDir, "kafkachaos.state-dir", "", "state dir of a local cluster to use and leave running (e.g. ~/.kafkachaos/local after kafkachaos cluster up)")
	fs.StringVar(&f.binary, "kafkachaos.binary", "", "the kafkachaos-node binary the local cluster's node agent runs (default: the one next to this suite's executable, else built from ../cmd)")
	fs.StringVar(&f.commandConfig, "kafkachaos.command-config", "", "Kafka client properties file for the suite's clients (security.protocol, sasl.*, ssl.* as PEM)")
	fs.StringVar(&f.versionsFile, "kafkachaos.versions-file", "", "with -ginkgo.dry-run: write the Kafka versions the selected specs need on the local cluster into this file, one a line, and run nothing (make chaos fetches them)")
	fs.StringVar(&f.runID, "kafkachaos.run-id", "", "run ID written into ledger annotations")
	fs.IntVar(&f.rate, "kafkachaos.rate", 0, "steady-state records/s")
	fs.DurationVar(&f.soak, "kafkachaos.soak", 0, "how long the soak spec repeats its faults (default 1h)")
	fs.BoolVar(&f.dryRun, "kafkachaos.dry-run", false, "print each spec's plan and change nothing")
	fs.BoolVar(&f.allowDataLoss, "kafkachaos.allow-data-loss", false, "allow the faults that destroy a volume's data and cannot be undone (disk-loss specs)")
	return f
}
