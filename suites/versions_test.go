package suites

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/manifests"
)

// The Kafka versions a run needs on the local cluster, whose pods run
// Kafka's jars from .cache/kafka/<version>: the suite's own, and those of
// the specs that deploy another. make chaos asks a Ginkgo dry run of its
// LABELS which versions they are (-kafkachaos.versions-file) and fetches
// only those; expectKafkaJars keeps the table true, failing a spec that
// runs a version the table does not give it.

// versionsByLabel names, for each label whose specs run a Kafka other
// than cfg.Target.KafkaVersion, the versions they run.
func versionsByLabel(cfg Config) (map[string][]string, error) {
	zk, err := zooKeeperLayoutVersion()
	if err != nil {
		return nil, err
	}
	unsafe, err := unsafeKafkaVersion()
	if err != nil {
		return nil, err
	}
	upgrade := []string{cfg.Upgrade.From, cfg.Upgrade.To}
	return map[string][]string{
		"upgrade":        upgrade, // upgrade and upgrade-rollback
		"txn-upgrade":    upgrade,
		"zookeeper-mode": {zk},
		"negative":       {unsafe}, // testdata/unsafe-kafka.yaml's image
	}, nil
}

// zooKeeperLayoutVersion is the Kafka version of the zookeeper layout,
// which the zookeeper-mode spec deploys.
func zooKeeperLayoutVersion() (string, error) {
	l, err := manifests.LayoutNamed("zookeeper")
	if err != nil {
		return "", err
	}
	return l.KafkaVersion()
}

// unsafeKafkaVersion is the Kafka version of the negative spec's
// testdata/unsafe-kafka.yaml.
func unsafeKafkaVersion() (string, error) {
	raw, err := os.ReadFile(unsafeKafka().File)
	if err != nil {
		return "", err
	}
	objs, err := kube.Decode(raw)
	if err != nil {
		return "", err
	}
	if vs := manifests.KafkaVersions(objs); len(vs) > 0 {
		return vs[0], nil
	}
	return "", fmt.Errorf("%s runs no %s container", unsafeKafka().File, manifests.KafkaImage)
}

// versionsNeeded is every Kafka version the specs of labelSets (one set
// per spec that will run) need on the local cluster, the suite's own
// first, each once. On an existing cluster it is nothing: its pods pull
// images.
func versionsNeeded(cfg Config, labelSets [][]string) ([]string, error) {
	if !cfg.Local() {
		return nil, nil
	}
	table, err := versionsByLabel(cfg)
	if err != nil {
		return nil, err
	}
	// The suite's own, even for your own Kafka: the specs that deploy a
	// Kafka of their own (disk loss) run it.
	need := []string{cfg.Target.KafkaVersion}
	for _, labels := range labelSets {
		for _, l := range labels {
			for _, v := range table[l] {
				if v != "" && !slices.Contains(need, v) {
					need = append(need, v)
				}
			}
		}
	}
	return need, nil
}

// writeVersionsFile writes, for a Ginkgo dry run, the versions its
// selected specs need into path, one a line.
func writeVersionsFile(path string, r types.Report) error {
	cfg, err := flagsIn.load()
	if err != nil {
		return err
	}
	var sets [][]string
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType == types.NodeTypeIt && sr.State == types.SpecStatePassed {
			sets = append(sets, sr.Labels())
		}
	}
	need, err := versionsNeeded(cfg, sets)
	if err != nil {
		return err
	}
	body := strings.Join(need, "\n")
	if body != "" {
		body += "\n"
	}
	return os.WriteFile(path, []byte(body), 0o644)
}

// expectVersionTabled fails the running spec when it runs version but
// the table does not give that version to any of its labels: make chaos
// would not have fetched it.
func expectVersionTabled(cfg Config, version string) {
	GinkgoHelper()
	need, err := versionsNeeded(cfg, [][]string{CurrentSpecReport().Labels()})
	if err != nil {
		Fail(err.Error())
	}
	if cfg.Local() && !slices.Contains(need, version) {
		Fail(fmt.Sprintf("this spec runs Kafka %s, but versionsByLabel gives none of its labels %v that version: add its label there, or make chaos will not fetch it", version, CurrentSpecReport().Labels()))
	}
}

func TestVersionsNeeded(t *testing.T) {
	fv := registerFlags(flag.NewFlagSet("t", flag.ContinueOnError))
	local, err := fv.load()
	if err != nil {
		t.Fatal(err)
	}
	zk, err := zooKeeperLayoutVersion()
	if err != nil {
		t.Fatal(err)
	}
	existing := local
	existing.Target.Kubeconfig = "/somewhere/kubeconfig"
	older := local
	older.Target.KafkaVersion = "3.9.2"
	unsafe, err := unsafeKafkaVersion()
	if err != nil || unsafe == "3.9.2" {
		t.Fatalf("unsafe-kafka.yaml's version %q (%v): the case below wants another", unsafe, err)
	}
	own, from := local.Target.KafkaVersion, local.Upgrade.From
	for _, tc := range []struct {
		name   string
		cfg    Config
		labels [][]string
		want   []string
	}{
		{"the gate needs the suite's own version only", local, [][]string{{"gate", "pod-kill"}, {"gate", "pause"}}, []string{own}},
		{"nothing selected still brings up the suite's Kafka", local, nil, []string{own}},
		{"an upgrade spec adds the version it starts from, once", local, [][]string{{"upgrade"}, {"upgrade", "upgrade-rollback"}}, []string{own, from}},
		{"the transactional upgrade too", local, [][]string{{"transactions", "txn-upgrade"}}, []string{own, from}},
		{"ZooKeeper mode adds its layout's version", local, [][]string{{"zookeeper-mode"}, {"gate"}}, []string{own, zk}},
		{"the negative spec's unsafe Kafka, on a suite of another version", older, [][]string{{"negative"}}, []string{"3.9.2", unsafe}},
		{"an existing cluster pulls images: nothing to fetch", existing, [][]string{{"upgrade"}, {"zookeeper-mode"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := versionsNeeded(tc.cfg, tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.want; !slices.Equal(got, want) {
				t.Errorf("versionsNeeded = %v, want %v", got, want)
			}
		})
	}
}

// TestVersionLabelsAreSpecLabels fails when a label of the table is on
// no spec (renamed, say): its specs would then miss their versions.
func TestVersionLabelsAreSpecLabels(t *testing.T) {
	fv := registerFlags(flag.NewFlagSet("t", flag.ContinueOnError))
	cfg, err := fv.load()
	if err != nil {
		t.Fatal(err)
	}
	table, err := versionsByLabel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(raw)
	}
	for label := range table {
		// In a Label(...) call, among its other labels.
		re := regexp.MustCompile(`\bLabel\([^)]*"` + regexp.QuoteMeta(label) + `"`)
		if !re.MatchString(src.String()) {
			t.Errorf("versionsByLabel names label %q, which no spec carries", label)
		}
	}
}
