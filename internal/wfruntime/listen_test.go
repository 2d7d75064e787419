package wfruntime

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// listenerUnderTest runs a listener on a channel of its own and reports
// each LISTEN and each notification.
type listenerUnderTest struct {
	channel   string
	listening chan struct{}
	payloads  chan string
}

func startListener(t *testing.T, pool *pgxpool.Pool) *listenerUnderTest {
	t.Helper()
	lt := &listenerUnderTest{
		channel:   "tributary_listen_test_" + uuid.NewString()[:8],
		listening: make(chan struct{}, 100),
		payloads:  make(chan string, 100),
	}
	l := &Listener{
		Logger: testLogger(t), Pool: pool, What: "a test's notifications", Channel: FixedChannel(lt.channel),
		Listening: func() { lt.listening <- struct{}{} },
		Notify:    func(payload string) { lt.payloads <- payload },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return lt
}

// waitListening waits for the listener's next LISTEN.
func (lt *listenerUnderTest) waitListening(t *testing.T, within time.Duration, what string) {
	t.Helper()
	select {
	case <-lt.listening:
	case <-time.After(within):
		t.Fatalf("the listener did not listen again within %s %s", within, what)
	}
}

// TestListenerAfterEveryCut terminates the listener's connection ten times
// in a row: it listens again within two seconds each time, the tenth as
// fast as the first (its retry starts afresh after a connection that
// worked, where River v0.51's notifier keeps growing its backoff), and
// then delivers notifications.
func TestListenerAfterEveryCut(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t)
	lt := startListener(t, db.Pool)
	lt.waitListening(t, 10*time.Second, "at start")

	var longest time.Duration
	for i := range 10 {
		var killed bool
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1",
			"LISTEN "+pgx.Identifier{lt.channel}.Sanitize()).Scan(&killed))
		require.True(t, killed, "cut %d", i+1)
		cutAt := time.Now()
		lt.waitListening(t, 2*time.Second, fmt.Sprintf("after cut %d", i+1))
		longest = max(longest, time.Since(cutAt))
	}
	t.Logf("longest time from a cut to LISTEN again: %s", longest.Round(time.Millisecond))

	_, err := db.Pool.Exec(ctx, "SELECT pg_notify($1, 'after the cuts')", lt.channel)
	require.NoError(t, err)
	select {
	case payload := <-lt.payloads:
		require.Equal(t, "after the cuts", payload)
	case <-ctx.Done():
		t.Fatal("no notification after the cuts")
	}
}

// TestListenerNoticesASilentConnection cuts the listener off without a
// word: a proxy between it and Postgres stops passing bytes on the
// connection but keeps it open, as a dropped network path or a stateful
// firewall does. The listener's ping finds out, and it connects again
// (through the proxy, which passes new connections) within
// listenerPingInterval + listenerPingTimeout and some margin.
func TestListenerNoticesASilentConnection(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	proxy := startFreezingProxy(t, db.Pool.Config().ConnConfig)
	config := db.Pool.Config().Copy()
	config.ConnConfig.Host, config.ConnConfig.Port = "127.0.0.1", proxy.port
	config.ConnConfig.Fallbacks = nil
	pool, err := pgxpool.NewWithConfig(ctxT(t), config)
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	lt := startListener(t, pool)
	lt.waitListening(t, 10*time.Second, "at start")
	proxy.freeze()
	frozenAt := time.Now()
	lt.waitListening(t, listenerPingInterval+listenerPingTimeout+5*time.Second, "after its connection went silent")
	t.Logf("listening again %s after the connection went silent", time.Since(frozenAt).Round(time.Millisecond))
}

// freezingProxy passes TCP connections to Postgres until freeze, which
// stops every connection open at that moment without closing it.
type freezingProxy struct {
	port   uint16
	mu     sync.Mutex
	frozen chan struct{} // closed by freeze; new connections get a new one
}

func startFreezingProxy(t *testing.T, target *pgx.ConnConfig) *freezingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	p := &freezingProxy{port: uint16(ln.Addr().(*net.TCPAddr).Port), frozen: make(chan struct{})}
	address := net.JoinHostPort(target.Host, strconv.Itoa(int(target.Port)))
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", address)
			if err != nil {
				_ = client.Close()
				continue
			}
			t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
			p.mu.Lock()
			frozen := p.frozen
			p.mu.Unlock()
			go p.pass(client, server, frozen)
			go p.pass(server, client, frozen)
		}
	}()
	return p
}

// pass copies from src to dst until frozen is closed; then it stops
// reading, leaving both connections open and silent.
func (p *freezingProxy) pass(dst io.Writer, src io.Reader, frozen <-chan struct{}) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		select {
		case <-frozen:
			return
		default:
		}
		if n > 0 {
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// freeze silences the connections open now.
func (p *freezingProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.frozen)
	p.frozen = make(chan struct{})
}
