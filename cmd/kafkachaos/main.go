// Command kafkachaos is the CLI of the kafkachaos resilience suite.
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

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1 // a bound was violated, or the run failed
	exitBadInput = 2 // bad flags or configuration; nothing was touched
)

// usageError marks an error in the user's input.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// failedError marks a run that completed but whose verdict is "fail"; its
// details were already printed.
var errVerdictFailed = errors.New("steady-state hypothesis violated")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI and returns its exit code.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	root := newRootCmd(ctx, sigs, cancel, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	return exitCode(err, stderr)
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if !errors.Is(err, errVerdictFailed) {
		fmt.Fprintln(stderr, "kafkachaos:", err)
	}
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, steadystate.ErrInvalidConfig) {
		return exitBadInput
	}
	return exitFailed
}

func newRootCmd(ctx context.Context, sigs <-chan os.Signal, cancel context.CancelFunc, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "kafkachaos",
		Short:         "Chaos and resilience tests for Apache Kafka on Kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newSteadyStateCmd(ctx, sigs, cancel), newClusterCmd(ctx))
	return root
}
