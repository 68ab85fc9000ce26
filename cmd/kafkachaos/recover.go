package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

func newRecoverCmd(ctx context.Context) *cobra.Command {
	var kubeconfig, kubeContext, runID, stateDir string
	var namespaces, bootstrap []string
	var dryRun bool
	var sec securityFlags
	var retryFor time.Duration
	cmd := &cobra.Command{
		Use:   "recover",
		Short: "Undo what faults left in the cluster, from their ledger annotations",
		Long: `Faults record what they change in the ` + chaos.LedgerAnnotation + ` annotation of the
object they touch. recover finds those records on Nodes, StatefulSets, Pods and
the NetworkPolicies of partitions, and undoes them: it uncordons nodes a drain
cordoned (never a node someone else cordoned), restores env vars a config
change set, rolls an upgrade that was not committed back to its previous image
(a binary downgrade: safe only while metadata.version is the old one, which is
why the upgrade specs commit before they raise it), moves partitions a scale-out spread onto its brokers back (with --bootstrap;
without it such a scale-out is kept and reported), scales a scaled StatefulSet back, resumes a paused broker or Java client (SIGCONT
to its JVM through pods/exec), gives a stopped broker's container its image back
(a stop runs the pause image in its place), deletes a partition's NetworkPolicy, and drops the
records. Run it after a suite was killed before it could recover.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("namespace") && len(namespaces) == 0 {
				return usageError{fmt.Errorf("--namespace is empty: name a namespace, or leave the flag out to scan all")}
			}
			for _, ns := range namespaces {
				if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
					return usageError{fmt.Errorf("--namespace %q: %s", ns, strings.Join(errs, "; "))}
				}
			}
			for _, b := range bootstrap {
				if err := steadystate.CheckAddress(b); err != nil {
					return usageError{fmt.Errorf("--bootstrap: %w", err)}
				}
			}
			security, err := sec.s.Resolve()
			if err != nil {
				return usageError{err}
			}
			if retryFor <= 0 {
				return usageError{fmt.Errorf("--retry-for %s: want a positive duration", retryFor)}
			}
			if stateDir != "" && kubeconfig == "" {
				kubeconfig = filepath.Join(stateDir, "kubeconfig")
			}
			cfg, err := loadRESTConfig(kubeconfig, kubeContext)
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return usageError{fmt.Errorf("kubeconfig: %w", err)}
			}
			exec, err := chaos.NewExec(cfg)
			if err != nil {
				return err
			}
			access := chaos.Access{Exec: exec}
			if len(bootstrap) > 0 {
				opts := append([]kgo.Opt{kgo.SeedBrokers(bootstrap...)}, security.Opts()...)
				if stateDir != "" {
					// The local cluster's names resolve through its node agents' hosts file.
					opts = append(opts, kgo.Dialer(nodeagent.Resolver{Path: filepath.Join(stateDir, nodeagent.HostsPath)}.DialContext))
				}
				cl, err := kgo.NewClient(opts...)
				if err != nil {
					return usageError{fmt.Errorf("--bootstrap: %w", err)}
				}
				defer cl.Close()
				access.Kafka = kafkaadmin.New(cl)
			}
			// An API server that is restarting or overloaded gets retried
			// for --retry-for; each attempt prints what it recovered.
			rctx, cancel := context.WithTimeout(ctx, retryFor)
			defer cancel()
			recovered := 0
			err = chaos.RetryTransient(rctx, "recover", func(ctx context.Context) error {
				lines, err := chaos.RecoverAll(ctx, cs, access, namespaces, runID, dryRun)
				for _, l := range lines {
					fmt.Fprintln(cmd.OutOrStdout(), l)
				}
				recovered += len(lines)
				return err
			}, func(err error, next time.Duration) {
				fmt.Fprintf(cmd.ErrOrStderr(), "the Kubernetes API could not serve the recovery (%v); trying again in %s\n", err, next.Round(time.Millisecond))
			})
			if err != nil {
				return err
			}
			if recovered == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "nothing to recover")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, else ~/.kube/config, else ~/.kafkachaos/local/kubeconfig)")
	cmd.Flags().StringVar(&kubeContext, "context", "", "kubeconfig context (default: the current context)")
	cmd.Flags().StringSliceVar(&namespaces, "namespace", nil, "namespace whose StatefulSets, Pods and NetworkPolicies to scan, repeatable (default: all; Nodes are always scanned)")
	cmd.Flags().StringVar(&runID, "run-id", "", "recover only the entries of this run (default: any run)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be recovered and change nothing")
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "a local cluster's state dir (kafkachaos cluster up --state-dir): its kubeconfig unless --kubeconfig is given, and its names for --bootstrap")
	cmd.Flags().StringSliceVar(&bootstrap, "bootstrap", nil, "host:port of seed brokers, comma-separated: needed to move back partitions a scale-out spread onto its brokers")
	cmd.Flags().DurationVar(&retryFor, "retry-for", 2*time.Minute, "keep retrying this long while the Kubernetes API server cannot be reached or cannot serve")
	sec.register(cmd.Flags())
	return cmd
}
