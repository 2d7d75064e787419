package wfruntime

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/engine"
)

// Listener LISTENs on one channel for as long as its context lives, on a
// connection of its own: not one of the pool's, which it would hold for
// the client's lifetime (a small pool, next to River's own listener, then
// runs out).
//
// It does not depend on River's notifier. It reconnects after an error
// at once (listenerRetryMin), backing off up to listenerRetryMax only while
// connecting keeps failing: a connection that worked starts the next
// failure afresh, so the hundredth cut costs what the first did. A
// connection that goes quiet for listenerPingInterval is pinged, so that
// one that died without a word (a network path dropped with no reset, a
// proxy's idle timeout) is noticed within listenerPingInterval +
// listenerPingTimeout.
type Listener struct {
	Logger *slog.Logger
	Pool   *pgxpool.Pool // its connection settings are used
	What   string        // for the logs: what the notifications are

	// Channel names the channel, once connected (it may depend on the
	// connection's schema).
	Channel func(ctx context.Context, conn *pgx.Conn) (string, error)
	// Listening is called each time LISTEN is active, after a reconnect
	// too: notifications sent while disconnected are lost.
	Listening func()
	// Notify is called with each notification's payload.
	Notify func(payload string)
}

const (
	// listenerRetryMin and listenerRetryMax bound the wait before a
	// listener connects again.
	listenerRetryMin = 100 * time.Millisecond
	listenerRetryMax = 5 * time.Second

	// listenerPingInterval is how long a listener waits for a
	// notification before it pings its connection; listenerPingTimeout
	// is how long the ping may take.
	listenerPingInterval = 5 * time.Second
	listenerPingTimeout  = 2 * time.Second
)

// Run listens until ctx is done.
func (l *Listener) Run(ctx context.Context) {
	retry := listenerRetryMin
	for ctx.Err() == nil {
		listened, err := l.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if listened {
			retry = listenerRetryMin
		}
		l.Logger.WarnContext(ctx, "tributary: Listener of "+l.What+" lost its connection; reconnecting",
			slog.String("err", fmt.Sprint(err)), slog.Duration("retry_in", retry))
		select {
		case <-time.After(retry):
		case <-ctx.Done():
			return
		}
		retry = min(retry*2, listenerRetryMax)
	}
}

// listenOnce connects, listens and delivers notifications until the
// connection fails. listened reports whether LISTEN was active.
func (l *Listener) listenOnce(ctx context.Context) (listened bool, _ error) {
	conn, err := pgx.ConnectConfig(ctx, l.Pool.Config().ConnConfig.Copy())
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection is discarded
	channel, err := l.Channel(ctx, conn)
	if err != nil {
		return false, err
	}
	if err := engine.Listen(ctx, conn, channel); err != nil {
		return false, err
	}
	l.Listening()
	for {
		waitCtx, cancel := context.WithTimeout(ctx, listenerPingInterval)
		n, err := conn.WaitForNotification(waitCtx)
		quiet := waitCtx.Err() != nil && ctx.Err() == nil
		cancel()
		switch {
		case err == nil:
			l.Notify(n.Payload)
		case quiet:
			// A timed-out wait leaves the connection usable (pgconn
			// closes it on any error but a timeout): is it alive?
			pingCtx, cancel := context.WithTimeout(ctx, listenerPingTimeout)
			err := conn.Ping(pingCtx)
			cancel()
			if err != nil {
				return true, fmt.Errorf("no answer to a ping after %s without notifications: %w", listenerPingInterval, err)
			}
		default:
			return true, err
		}
	}
}

// FixedChannel is a Listener.Channel that does not depend on the
// connection.
func FixedChannel(name string) func(context.Context, *pgx.Conn) (string, error) {
	return func(context.Context, *pgx.Conn) (string, error) { return name, nil }
}
