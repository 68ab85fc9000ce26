package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/chaos"
)

func newRecoverCmd(ctx context.Context) *cobra.Command {
	var kubeconfig, kubeContext, runID string
	var namespaces []string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "recover",
		Short: "Undo what faults left in the cluster, from their ledger annotations",
		Long: `Faults record what they change in the ` + chaos.LedgerAnnotation + ` annotation of the
object they touch. recover finds those records on Nodes, StatefulSets, Pods and
the NetworkPolicies of partitions, and undoes them: it uncordons nodes a drain
cordoned (never a node someone else cordoned), restores env vars a config
change set, rolls an upgrade that was not committed back to its previous image
(a binary downgrade: safe only while metadata.version is the old one, which is
why the upgrade specs commit before they raise it), scales a scaled StatefulSet back, resumes a paused broker (SIGCONT
through pods/exec), deletes a partition's NetworkPolicy, and drops the
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
			lines, err := chaos.RecoverAll(ctx, cs, exec, namespaces, runID, dryRun)
			for _, l := range lines {
				fmt.Fprintln(cmd.OutOrStdout(), l)
			}
			if err != nil {
				return err
			}
			if len(lines) == 0 {
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
	return cmd
}
