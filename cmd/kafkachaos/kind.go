package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafkachaos/kafkachaos/kind"
	"github.com/kafkachaos/kafkachaos/manifests"
)

func newKindCmd(ctx context.Context) *cobra.Command {
	var name, kubeconfigOut string
	cmd := &cobra.Command{
		Use:   "kind",
		Short: "Manage a kind cluster for the suites (needs a running Docker engine)",
		Long: `kind up creates a kind cluster (one control-plane node and three workers in
zones zone-a, zone-b and zone-c; see kind/kind-config.yaml), loads the agent
image into its nodes, deploys Kafka from manifests/kafka (--kafka), waits
until its pods are Ready, and prints the path of the kubeconfig it wrote.
kind down deletes the cluster.

Both need the docker client, a running Docker engine, and kind on $PATH.
Without them they exit 2 at once and change nothing: use the local target
(make chaos, or kafkachaos cluster up), which needs no Docker.`,
	}
	cmd.PersistentFlags().StringVar(&name, "name", kind.DefaultName, "kind cluster name")
	cmd.PersistentFlags().StringVar(&kubeconfigOut, "kubeconfig-out", "", "the cluster's kubeconfig, written by up and removed by down (default ~/.kafkachaos/kind/<name>/kubeconfig)")
	newProvider := func(cmd *cobra.Command, opts ...kind.Option) (*kind.Provider, error) {
		p, err := kind.New(append([]kind.Option{
			kind.WithName(name),
			kind.WithKubeconfig(kubeconfigOut),
			kind.WithLogf(func(f string, a ...any) { fmt.Fprintf(cmd.ErrOrStderr(), f+"\n", a...) }),
		}, opts...)...)
		if err != nil {
			return nil, usageError{err}
		}
		return p, nil
	}

	var kafka, image string
	up := &cobra.Command{
		Use:   "up",
		Short: "Create the kind cluster and deploy Kafka (idempotent); print the kubeconfig path",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			layout, err := manifests.LayoutNamed(kafka)
			if err != nil {
				return usageError{fmt.Errorf("--kafka: %w", err)}
			}
			p, err := newProvider(cmd, kind.WithLayout(layout), kind.WithImage(image))
			if err != nil {
				return err
			}
			start := time.Now()
			path, err := p.Up(ctx)
			if err != nil {
				return missingPrerequisite(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "kind cluster %q with Kafka (%s) in namespace %s ready in %s\n", name, layout.Name, layout.Namespace, time.Since(start).Round(time.Second))
			fmt.Fprintln(cmd.OutOrStdout(), path)
			return nil
		},
	}
	up.Flags().StringVar(&kafka, "kafka", manifests.Layouts()[0].Name, "Kafka layout to deploy from manifests/kafka: combined, separate-controllers or zookeeper")
	up.Flags().StringVar(&image, "image", kind.DefaultImage, `agent image to load into the nodes from the Docker engine ("" loads none)`)
	down := &cobra.Command{
		Use:   "down",
		Short: "Delete the kind cluster and its kubeconfig",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := newProvider(cmd)
			if err != nil {
				return err
			}
			return missingPrerequisite(p.Down(ctx))
		},
	}
	cmd.AddCommand(up, down)
	return cmd
}

// missingPrerequisite makes a missing docker, Docker engine, kind or agent
// image a usage error (exit 2): nothing was touched.
func missingPrerequisite(err error) error {
	for _, e := range []error{kind.ErrNoDocker, kind.ErrNoKind, kind.ErrNoImage} {
		if errors.Is(err, e) {
			return usageError{err}
		}
	}
	return err
}
