package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/localcluster"
	"github.com/kafkachaos/kafkachaos/manifests"
)

func newClusterCmd(ctx context.Context) *cobra.Command {
	var stateDir string
	var nodes int
	var kafkaLibs, kafkaCache string
	var images map[string]string
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Manage the embedded local Kubernetes cluster (no Docker needed)",
		Long: `The embedded local cluster runs etcd and the real upstream kube-apiserver,
kube-controller-manager and kube-scheduler on loopback. Its state (PKI, etcd
data, logs, kubeconfig) lives in --state-dir.

A node agent (virtual-kubelet; the kafkachaos-node binary, which make build
puts next to kafkachaos) registers --nodes nodes (zones zone-a, zone-b,
zone-c) and runs each pod's containers as host processes, with a loopback IP,
a private mount namespace for its volumes, and the pod's hostname. A default
StorageClass provisions PVs as directories in the state dir. apache/kafka
images run the Maven-fetched Kafka jars (make kafka-dist).

cluster up also deploys Kafka from manifests/kafka (--kafka), and waits for
its pods to be Ready.`,
	}
	cmd.PersistentFlags().StringVar(&stateDir, "state-dir", "", "cluster state directory (default $HOME/.kafkachaos/local)")
	cmd.PersistentFlags().StringToStringVar(&images, "image", nil, "map an image repository to a host program the nodes run for it (repo=/path), repeatable")
	cmd.PersistentFlags().StringVar(&kafkaLibs, "kafka-libs", "", "Kafka jars that every apache/kafka pod runs, whatever its tag (default: each pod runs the version its tag names, from --kafka-cache)")
	cmd.PersistentFlags().StringVar(&kafkaCache, "kafka-cache", "", "fetched Kafka versions, <dir>/<version>/libs, that apache/kafka pods run by tag (default: the repository's .cache/kafka)")
	cmd.PersistentFlags().IntVar(&nodes, "nodes", 3, "nodes the node agent registers (zones zone-a, zone-b, zone-c in turn)")
	newCluster := func(cmd *cobra.Command) (*localcluster.Cluster, error) {
		if nodes < 1 || nodes > 32 {
			return nil, usageError{fmt.Errorf("--nodes %d: want 1 to 32", nodes)}
		}
		opts := []localcluster.Option{localcluster.WithStateDir(stateDir), localcluster.WithNodes(nodes), localcluster.WithKafkaLibs(kafkaLibs), localcluster.WithKafkaCache(kafkaCache)}
		for repo, prog := range images {
			opts = append(opts, localcluster.WithImage(repo, prog))
		}
		return localcluster.New(append(opts, localcluster.WithLogf(func(f string, a ...any) {
			fmt.Fprintf(cmd.ErrOrStderr(), f+"\n", a...)
		}))...)
	}

	var kafka, kafkaVersion, manifest string
	up := &cobra.Command{
		Use:   "up",
		Short: "Start the cluster and deploy Kafka (idempotent); print the kubeconfig path",
		Long: `Start the cluster, then deploy a Kafka layout of manifests/kafka (--kafka),
or your own manifests instead (--manifest: a file, a directory of .yaml,
.yml and .json files, or a kustomization), and wait until their pods are
Ready. Then test your own with the suite:

  make chaos ARGS='-kafkachaos.state-dir=DIR -kafkachaos.namespace=NS'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var layout *manifests.Layout
			var own []*unstructured.Unstructured
			switch {
			case manifest != "":
				if cmd.Flags().Changed("kafka") && kafka != "none" || kafkaVersion != "" {
					return usageError{errors.New("--manifest deploys your own Kafka instead of a layout: leave out --kafka and --kafka-version (the manifests' image tags choose the versions)")}
				}
				var err error
				if own, err = readOwnManifests(manifest, kafkaLibs, kafkaCache); err != nil {
					return usageError{err}
				}
			case kafka != "none":
				l, err := manifests.LayoutNamed(kafka)
				if err != nil {
					return usageError{fmt.Errorf("--kafka: %w, or none", err)}
				}
				l = l.WithKafkaVersion(kafkaVersion)
				if v, err := l.KafkaVersion(); err == nil {
					if err := l.CheckKafkaVersion(v); err != nil {
						return usageError{fmt.Errorf("--kafka-version: %w", err)}
					}
				}
				if err := checkKafkaJars(l, kafkaLibs, kafkaCache, kafkaVersion != ""); err != nil {
					return usageError{err}
				}
				layout = &l
			}
			c, err := newCluster(cmd)
			if err != nil {
				return err
			}
			if _, err := c.AgentBinary(); err != nil {
				return usageError{err}
			}
			start := time.Now()
			if err := c.Up(ctx); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "cluster ready in %s\n", time.Since(start).Round(time.Millisecond))
			switch {
			case layout != nil:
				if err := deployKafka(ctx, c, *layout, cmd.ErrOrStderr()); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "Kafka (%s) ready in namespace %s, %s after start\n", layout.Name, layout.Namespace, time.Since(start).Round(time.Millisecond))
			case own != nil:
				if err := deploy(ctx, c, manifest, own, cmd.ErrOrStderr()); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s ready, %s after start; test it with\n", manifest, time.Since(start).Round(time.Millisecond))
				for _, ns := range kube.Namespaces(own) {
					if kube.PodsOf(own, ns) > 0 {
						fmt.Fprintf(cmd.ErrOrStderr(), "  make chaos ARGS='-kafkachaos.state-dir=%s -kafkachaos.namespace=%s'\n", c.StateDir(), ns)
					}
				}
			}
			fmt.Fprintln(cmd.OutOrStdout(), c.KubeconfigPath())
			return nil
		},
	}
	up.Flags().StringVar(&kafka, "kafka", "combined", "Kafka layout to deploy from manifests/kafka: combined, separate-controllers, zookeeper (Kafka 3.9 in ZooKeeper mode), dynamic-quorum (KIP-853), or none")
	up.Flags().StringVar(&kafkaVersion, "kafka-version", "", "Kafka version the layout runs, as its apache/kafka image tag (default: the manifest's, "+kafkadist.DefaultVersion+"); fetch it first with make kafka-dist KAFKA_VERSION=...")
	up.Flags().StringVar(&manifest, "manifest", "", "deploy your own manifests instead of a layout: a file, a directory of .yaml/.yml/.json files, or a kustomization")
	var purge bool
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop every process the cluster started; --purge also deletes its state",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newCluster(cmd)
			if err != nil {
				return err
			}
			return c.Down(ctx, purge)
		},
	}
	down.Flags().BoolVar(&purge, "purge", false, "also delete the state dir (PKI, etcd data, logs)")
	status := &cobra.Command{
		Use:   "status",
		Short: "Print which components are running",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newCluster(cmd)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "state dir: %s\nkubeconfig: %s\n\n", c.StateDir(), c.KubeconfigPath())
			fmt.Fprintln(tw, "COMPONENT\tSTATE\tPID\tLOG")
			for _, s := range c.Status() {
				state, pid := "stopped", "-"
				if s.Running {
					state, pid = "running", fmt.Sprint(s.PID)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, state, pid, s.Log)
			}
			return tw.Flush()
		},
	}
	cmd.AddCommand(up, down, status)
	return cmd
}

// kafkaReadyTimeout bounds the wait for Kafka's pods after cluster up
// applied the manifest; kafkaReadyPoll is how often it looks.
const (
	kafkaReadyTimeout = 5 * time.Minute
	kafkaReadyPoll    = time.Second
	kafkaProgress     = 10 * time.Second
	// A container crash-looping this many times will not turn Ready by
	// waiting: cluster up --manifest stops and shows its last log lines.
	crashLoopAfter = 3
	crashLogLines  = 10
)

// checkKafkaJars fails early, before anything starts, when the layout's
// apache/kafka pods would have no jars to run: pinned jars (--kafka-libs)
// that are not there, or a version that is not in the cache.
func checkKafkaJars(l manifests.Layout, libs, cache string, versionGiven bool) error {
	version, err := l.KafkaVersion()
	if err != nil {
		return err
	}
	if _, err := kafkadist.LineOf(version); err != nil {
		return fmt.Errorf("--kafka-version: %w", err)
	}
	if libs != "" {
		d, err := kafkadist.OpenLibs(libs)
		if err != nil {
			return fmt.Errorf("--kafka-libs: %w", err)
		}
		if versionGiven && d.Version != version {
			return fmt.Errorf("--kafka-libs holds Kafka %s, and --kafka-version asks for %s: give one of them", d.Version, version)
		}
		return nil
	}
	if cache == "" {
		cache = kafkadist.CacheDir()
	}
	if cache == "" {
		return fmt.Errorf("no Kafka jars for the apache/kafka:%s pods: run `%s` at the repository root, pass --kafka-cache, or --kafka=none", version, kafkadist.FetchCommand(version))
	}
	if _, err := kafkadist.InCache(cache, version); err != nil {
		return fmt.Errorf("--kafka-version: %w", err)
	}
	return nil
}

// deployKafka applies layout's manifest and waits until its pods are Ready,
// printing progress to w.
func deployKafka(ctx context.Context, c *localcluster.Cluster, layout manifests.Layout, w io.Writer) error {
	objs, err := layout.Objects()
	if err != nil {
		return err
	}
	return deploy(ctx, c, layout.File, objs, w)
}

// readOwnManifests reads --manifest before anything starts, and checks
// that its apache/kafka pods will have jars to run.
func readOwnManifests(path, libs, cache string) ([]*unstructured.Unstructured, error) {
	objs, err := kube.ReadObjects(path)
	if err != nil {
		return nil, fmt.Errorf("--manifest: %w", err)
	}
	if len(kube.Namespaces(objs)) == 0 {
		return nil, fmt.Errorf("--manifest %s: no object names a namespace: put your Kafka in a namespace of its own", path)
	}
	if hp := hostPaths(objs); len(hp) > 0 {
		return nil, fmt.Errorf("--manifest %s: hostPath volumes would be this machine's own directories (the local cluster's pods run on the host): %s; use a PersistentVolumeClaim or an emptyDir", path, strings.Join(hp, ", "))
	}
	if libs != "" {
		return objs, nil // every apache/kafka pod runs the pinned jars
	}
	if cache == "" {
		cache = kafkadist.CacheDir()
	}
	for _, v := range manifests.KafkaVersions(objs) {
		if _, err := kafkadist.LineOf(v); err != nil {
			return nil, fmt.Errorf("--manifest %s: %s:%s: %w", path, manifests.KafkaImage, v, err)
		}
		if cache == "" {
			return nil, fmt.Errorf("--manifest %s: no Kafka jars for its %s:%s pods: run `%s` at the repository root, or pass --kafka-cache", path, manifests.KafkaImage, v, kafkadist.FetchCommand(v))
		}
		if _, err := kafkadist.InCache(cache, v); err != nil {
			return nil, fmt.Errorf("--manifest %s: %w", path, err)
		}
	}
	return objs, nil
}

// hostPaths names the objects of objs that mount or are a hostPath
// volume: Pods and workloads' pod templates, and PersistentVolumes.
func hostPaths(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		name := o.GetKind() + " " + o.GetName()
		if _, found, _ := unstructured.NestedMap(o.Object, "spec", "hostPath"); found && o.GetKind() == "PersistentVolume" {
			out = append(out, name)
			continue
		}
		for _, path := range [][]string{{"spec", "volumes"}, {"spec", "template", "spec", "volumes"}, {"spec", "jobTemplate", "spec", "template", "spec", "volumes"}} {
			vols, _, _ := unstructured.NestedSlice(o.Object, path...)
			for _, v := range vols {
				if m, ok := v.(map[string]any); ok && m["hostPath"] != nil {
					out = append(out, fmt.Sprintf("%s (volume %v)", name, m["name"]))
				}
			}
		}
	}
	return out
}

// deploy applies objs (a layout's, or your own manifests at path) and
// waits, namespace by namespace, for the pods their StatefulSets and
// Deployments ask for to be Ready. On a cluster brought up again, etcd
// still holds the pods' Ready conditions from before: only what the
// running node agent reported counts.
func deploy(ctx context.Context, c *localcluster.Cluster, path string, objs []*unstructured.Unstructured, w io.Writer) error {
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	cs, err := c.Clientset()
	if err != nil {
		return err
	}
	applied, err := kube.ApplyObjects(ctx, cfg, objs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "applied %s: %d objects\n", path, len(applied))
	since, err := c.NodeAgentStarted()
	if err != nil {
		return err
	}
	for _, ns := range kube.Namespaces(objs) {
		want := kube.PodsOf(objs, ns)
		if want == 0 {
			continue
		}
		fmt.Fprintf(w, "waiting for %d Ready pods in namespace %s\n", want, ns)
		err := kube.WaitPodsReady(ctx, cs, ns, want, kube.Wait{Timeout: kafkaReadyTimeout, Poll: kafkaReadyPoll, ProgressEvery: kafkaProgress,
			Progress: func(seen string) { fmt.Fprintf(w, "  %s\n", seen) }, Since: since, CrashLoopAfter: crashLoopAfter})
		var cl *kube.CrashLoopError
		switch {
		case errors.As(err, &cl):
			tail := int64(crashLogLines)
			raw, logErr := cs.CoreV1().Pods(ns).GetLogs(cl.Pod, &corev1.PodLogOptions{Container: cl.Container, Previous: true, TailLines: &tail}).DoRaw(ctx)
			if logErr != nil {
				raw = []byte(logErr.Error())
			}
			return fmt.Errorf("%w; its last run ended with:\n%s", err, raw)
		case errors.Is(err, kube.ErrNotReady):
			return fmt.Errorf("%w (logs: kubectl logs -n %s, or %s/pods)", err, ns, c.StateDir())
		case err != nil:
			return err
		}
	}
	return nil
}
