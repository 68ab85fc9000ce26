package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kafkachaos/kafkachaos/manifests"
)

func newRBACCmd() *cobra.Command {
	var namespaces []string
	var saNamespace string
	cmd := &cobra.Command{
		Use:   "rbac",
		Short: "Print the least-privilege RBAC manifest for running the suite in a cluster",
		Long: `rbac prints manifests/rbac/rbac.yaml for the namespaces the suite may
disrupt: a ServiceAccount "kafkachaos", a Role and RoleBinding in each
namespace (pods, evictions, StatefulSets, claims, PDBs, NetworkPolicies,
the operators' resources), and a ClusterRole for nodes, PersistentVolumes
and get on those namespaces only. Apply it with kubectl apply -f -.

The suite acts as this ServiceAccount on the embedded local cluster, so
make test checks that it is enough, and that it refuses the rest.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if saNamespace == "" {
				saNamespace = namespaces[0]
			}
			raw, err := manifests.RBAC(saNamespace, namespaces...)
			if err != nil {
				return usageError{err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "# kafkachaos rbac --namespace %v --service-account-namespace %s\n", namespaces, saNamespace)
			_, err = cmd.OutOrStdout().Write(raw)
			return err
		},
	}
	cmd.Flags().StringSliceVarP(&namespaces, "namespace", "n", []string{"kafka"}, "namespaces of Kafka the suite may disrupt (repeat or comma-separate)")
	cmd.Flags().StringVar(&saNamespace, "service-account-namespace", "", "namespace of the suite's ServiceAccount (default: the first --namespace)")
	return cmd
}
