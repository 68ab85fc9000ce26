package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
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
	intr := &interrupts{fn: cancel}
	go func() {
		for range sigs {
			intr.fire()
		}
	}()

	root := newRootCmd(ctx, intr, cancel, stdout, stderr)
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
	if errors.As(err, &ue) || errors.Is(err, steadystate.ErrInvalidConfig) || strings.HasPrefix(err.Error(), "unknown command") {
		return exitBadInput
	}
	return exitFailed
}

// interrupts dispatches SIGINT/SIGTERM: by default they cancel the command's
// context; a command may take them over (steadystate stops gracefully first).
type interrupts struct {
	mu sync.Mutex
	fn func()
}

func (i *interrupts) set(fn func()) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.fn = fn
}

func (i *interrupts) fire() {
	i.mu.Lock()
	fn := i.fn
	i.mu.Unlock()
	fn()
}

// noArgs rejects positional arguments as a usage error (exit 2).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args)}
	}
	return nil
}

func newRootCmd(ctx context.Context, intr *interrupts, cancel context.CancelFunc, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "kafkachaos",
		Short:         "Chaos and resilience tests for Apache Kafka on Kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newSteadyStateCmd(ctx, intr, cancel), newClusterCmd(ctx), newKindCmd(ctx))
	root.AddCommand(newRecoverCmd(ctx), newCompareCmd(), newReportCmd(), newRBACCmd())
	return root
}
