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

	"github.com/tributary-go/tributary/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.DefaultEnv())
	stop()
	os.Exit(code)
}
