// Command tributary migrates, serves and operates Tributary: durable
// workflows and cron schedules on Postgres, built on River. Run
// `tributary --help` for its commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // schedules name IANA zones; work on machines without zone files too

	"github.com/tributary-go/tributary/cmd/tributary/internal/cli"
)

func main() {
	// The first SIGINT or SIGTERM asks the command to stop gracefully; once
	// it has, signals get their default action again, so a second one ends
	// the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cli.Main(ctx, os.Args[1:], cli.DefaultEnv())
	stop()
	os.Exit(code)
}
