package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/engine"
)

// listener LISTENs on one channel for as long as its context lives, on a
// connection of its own: not one of the pool's, which it would hold for
// the client's lifetime (a small pool, next to River's own listener, then
// runs out). It reconnects after errors, backing off up to five seconds.
type listener struct {
	logger *slog.Logger
	pool   *pgxpool.Pool // its connection settings are used
	what   string        // for the logs: what the notifications are

	// channel names the channel, once connected (it may depend on the
	// connection's schema).
	channel func(ctx context.Context, conn *pgx.Conn) (string, error)
	// listening is called each time LISTEN is active, after a reconnect
	// too: notifications sent while disconnected are lost.
	listening func()
	// notify is called with each notification's payload.
	notify func(payload string)
}

// run listens until ctx is done.
func (l *listener) run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		l.logger.WarnContext(ctx, "tributary: Listener of "+l.what+" lost its connection; reconnecting", slog.String("err", fmt.Sprint(err)))
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (l *listener) listenOnce(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection is discarded
	channel, err := l.channel(ctx, conn)
	if err != nil {
		return err
	}
	if err := engine.Listen(ctx, conn, channel); err != nil {
		return err
	}
	l.listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.notify(n.Payload)
	}
}

// fixedChannel is a listener.channel that does not depend on the
// connection.
func fixedChannel(name string) func(context.Context, *pgx.Conn) (string, error) {
	return func(context.Context, *pgx.Conn) (string, error) { return name, nil }
}
