package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafkachaos/kafkachaos/localcluster"
)

func newClusterCmd(ctx context.Context) *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Manage the embedded local Kubernetes cluster (no Docker needed)",
		Long: `The embedded local cluster runs etcd and the real upstream kube-apiserver,
kube-controller-manager and kube-scheduler on loopback. Its state (PKI, etcd
data, logs, kubeconfig) lives in --state-dir.

Not yet: the node agent that runs pods, storage and DNS (see the README).`,
	}
	cmd.PersistentFlags().StringVar(&stateDir, "state-dir", "", "cluster state directory (default $HOME/.kafkachaos/local)")
	newCluster := func(cmd *cobra.Command) (*localcluster.Cluster, error) {
		return localcluster.New(localcluster.WithStateDir(stateDir), localcluster.WithLogf(func(f string, a ...any) {
			fmt.Fprintf(cmd.ErrOrStderr(), f+"\n", a...)
		}))
	}

	up := &cobra.Command{
		Use:   "up",
		Short: "Start the control plane (idempotent) and print the kubeconfig path",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newCluster(cmd)
			if err != nil {
				return err
			}
			start := time.Now()
			if err := c.Up(ctx); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "control plane ready in %s\n", time.Since(start).Round(time.Millisecond))
			fmt.Fprintln(cmd.OutOrStdout(), c.KubeconfigPath())
			return nil
		},
	}
	var purge bool
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop every process the cluster started; --purge also deletes its state",
		Args:  cobra.NoArgs,
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
		Args:  cobra.NoArgs,
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
