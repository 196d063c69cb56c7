// Command subprov is the subscriber provisioning service: one binary with the HTTP server,
// the job workers, migrations, fixture loading and a self-contained demo.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, errUsage) {
		fmt.Fprintln(os.Stderr, "subprov:", err)
	}
	os.Exit(exitCode(err))
}
