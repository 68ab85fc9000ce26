package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kafkachaos/kafkachaos/localcluster"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent/kubelet"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent/launcher"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent/sandbox"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1 // the command failed
	exitBadInput = 2 // bad flags or arguments; nothing was touched
)

// usageError marks an error in the caller's input.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command and returns its exit code.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "kafkachaos-node:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitBadInput
	}
	return exitFailed
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "kafkachaos-node",
		Short: "The local cluster's node agent and the programs it runs in pods (kafkachaos cluster up starts it)",
		Long: `kafkachaos-node is the embedded local cluster's node: kafkachaos cluster up
starts its agent, which runs each container of a pod through pod-exec, and
the apache/kafka and zookeeper images through kafka-run and zookeeper-run.
make build puts it in bin/, next to kafkachaos.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.CompletionOptions.DisableDefaultCmd = true // nobody types these commands
	root.AddCommand(newAgentCmd(), newPurgeCmd(), newPodExecCmd(), newKafkaRunCmd(), newZooKeeperRunCmd())
	return root
}

// noArgs rejects positional arguments as a usage error (exit 2).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args)}
	}
	return nil
}

// newAgentCmd is the node agent, in the foreground, until SIGTERM or
// SIGINT; its flags are those localcluster gives it.
func newAgentCmd() *cobra.Command {
	var stateDir, kafkaLibs, kafkaCache string
	var nodes int
	var images map[string]string
	cmd := &cobra.Command{
		Use:   "agent --state-dir DIR [--nodes N] [--kafka-libs DIR] [--kafka-cache DIR] [--image REPO=PROGRAM]...",
		Short: "Run the node agent in the foreground: register the nodes and run their pods",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			if stateDir == "" {
				return usageError{errors.New("agent: --state-dir is required")}
			}
			opts := []localcluster.Option{localcluster.WithStateDir(stateDir), localcluster.WithNodes(nodes), localcluster.WithKafkaLibs(kafkaLibs), localcluster.WithKafkaCache(kafkaCache)}
			for repo, prog := range images {
				opts = append(opts, localcluster.WithImage(repo, prog))
			}
			c, err := localcluster.New(opts...)
			if err != nil {
				return usageError{err}
			}
			cs, err := c.Clientset()
			if err != nil {
				return err
			}
			ports, err := c.NodePorts()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return kubelet.Run(ctx, kubelet.Config{Client: cs, Nodes: c.Nodes(), StateDir: c.StateDir(), Ports: ports, Images: c.Images(),
				KafkaLibs: kafkaLibs, KafkaCache: c.KafkaCache()})
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "the cluster's state dir")
	cmd.Flags().IntVar(&nodes, "nodes", 3, "nodes to register (zones zone-a, zone-b, zone-c in turn)")
	cmd.Flags().StringVar(&kafkaLibs, "kafka-libs", "", "Kafka jars that every apache/kafka pod runs, whatever its tag")
	cmd.Flags().StringVar(&kafkaCache, "kafka-cache", "", "fetched Kafka versions, <dir>/<version>/libs, that apache/kafka pods run by tag")
	cmd.Flags().StringToStringVar(&images, "image", nil, "map an image repository to a host program the nodes run for it (repo=/path), repeatable")
	return cmd
}

// newPurgeCmd removes what an agent that crashed left behind; localcluster
// runs it when it takes the cluster down.
func newPurgeCmd() *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:   "purge --state-dir DIR",
		Short: "Kill the pod processes an agent left behind, and remove its nftables table and pod cgroups",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			if stateDir == "" {
				return usageError{errors.New("purge: --state-dir is required")}
			}
			return kubelet.Purge(stateDir)
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "the cluster's state dir")
	return cmd
}

func newPodExecCmd() *cobra.Command {
	var sb sandbox.Sandbox
	var mounts []string
	cmd := &cobra.Command{
		Use:   "pod-exec --hostname H --scratch DIR [--workdir DIR] [--mount SRC:DST[:ro]]... -- PROGRAM [ARGS...]",
		Short: "Enter a pod's namespaces and exec its program (the node agent runs it)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			for _, s := range mounts {
				m, err := sandbox.ParseMount(s)
				if err != nil {
					return usageError{err}
				}
				sb.Mounts = append(sb.Mounts, m)
			}
			return sandbox.PodExec(sb, args[0], args[1:], os.Environ())
		},
	}
	cmd.Flags().StringVar(&sb.Hostname, "hostname", "", "the pod's hostname")
	cmd.Flags().StringVar(&sb.Scratch, "scratch", "", "the container's directory for the mount point of its writable layer")
	cmd.Flags().StringVar(&sb.WorkDir, "workdir", "", "the container's working directory, in its own filesystem")
	cmd.Flags().StringArrayVar(&mounts, "mount", nil, "volume mount SRC:DST[:ro]")
	return cmd
}

func newKafkaRunCmd() *cobra.Command {
	var libs, version, script string
	cmd := &cobra.Command{
		Use:   "kafka-run --libs DIR [--version X.Y.Z] [--script kafka-server-start.sh|kafka-storage.sh|kafka-verifiable-producer.sh|kafka-verifiable-consumer.sh -- ARGS...]",
		Short: "Launch Kafka inside a pod as the apache/kafka image does, or run one of the distribution's scripts there (the node agent runs it)",
		RunE: func(_ *cobra.Command, args []string) error {
			switch script {
			case launcher.KafkaStartScript:
				return launcher.KafkaServerStart(libs, version, args, os.Environ())
			case launcher.KafkaStorageScript:
				return launcher.KafkaStorage(libs, version, args, os.Environ())
			case "":
			default:
				if _, ok := launcher.ToolClass(script); ok {
					return launcher.KafkaTool(libs, version, script, args, os.Environ())
				}
				return usageError{fmt.Errorf("kafka-run --script: want %s, %s, %s, %s or %s, got %q", launcher.KafkaStartScript, launcher.KafkaStorageScript,
					launcher.VerifiableProducerScript, launcher.VerifiableConsumerScript, launcher.VerifiableShareConsumerScript, script)}
			}
			if len(args) > 0 {
				return usageError{fmt.Errorf("kafka-run takes arguments only with --script, got %q", args)}
			}
			return launcher.KafkaRun(libs, version, os.Environ())
		},
	}
	cmd.Flags().StringVar(&libs, "libs", "", "directory of the Kafka jars")
	cmd.Flags().StringVar(&version, "version", "", "the jars' Kafka version (default: the one their fetch recorded)")
	cmd.Flags().StringVar(&script, "script", "", "run as the distribution's bin/"+launcher.KafkaStartScript+", bin/"+launcher.KafkaStorageScript+" or one of its verifiable clients with the arguments after --")
	return cmd
}

func newZooKeeperRunCmd() *cobra.Command {
	var libs string
	var mounts []string
	cmd := &cobra.Command{
		Use:   "zookeeper-run --libs DIR [--mount PATH]...",
		Short: "Launch a ZooKeeper server inside a pod as the official zookeeper image does (the node agent runs it)",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			return launcher.ZooKeeperRun(libs, mounts, os.Environ())
		},
	}
	cmd.Flags().StringVar(&libs, "libs", "", "directory of the jars of a Kafka 3.9.x, which hold ZooKeeper's")
	// An array, not a slice: a mountPath may hold a comma.
	cmd.Flags().StringArrayVar(&mounts, "mount", nil, "mountPath of one of the container's volumes (repeatable); data dirs elsewhere go to the pod's image layer")
	return cmd
}
