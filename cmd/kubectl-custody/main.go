// Command kubectl-custody is the kubectl plugin of Custody: `kubectl custody` joins member
// clusters to the hub, shows the hub's volumes, sync targets and Fences, cordons targets and
// fences lost ones. Put it on PATH (make plugin builds it into bin/) and kubectl finds it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/custody-dev/custody/cmd/kubectl-custody/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Run(ctx, os.Args[1:], genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	stop()
	os.Exit(code)
}
