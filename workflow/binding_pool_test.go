package workflow

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// A binding that asks for connections of its own (wfruntime.Binding.Conns)
// gets a pool of that size while the client is started, and the client's
// pool before Start and after Stop.
func TestBindingPool(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	c, err := NewClient(db.Pool, testConfig(t, db))
	require.NoError(t, err)
	rt := wfruntime.Of(c)
	require.NoError(t, rt.Bind(&wfruntime.Binding{Name: "pooled", Conns: 2}))
	require.NoError(t, rt.Bind(&wfruntime.Binding{Name: "plain"}))
	require.Same(t, db.Pool, rt.BindingPool("pooled"), "before Start")

	require.NoError(t, c.Start(context.Background()))
	own := rt.BindingPool("pooled")
	require.NotSame(t, db.Pool, own)
	require.EqualValues(t, 2, own.Config().MaxConns)
	require.Same(t, db.Pool, rt.BindingPool("plain"), "a binding without Conns uses the client's pool")
	require.NoError(t, own.Ping(ctxT(t)), "its connections reach the client's database")

	stopClient(t, c)
	require.Same(t, db.Pool, rt.BindingPool("pooled"), "after Stop")
	require.Zero(t, own.Stat().TotalConns(), "Stop closes the binding's pool")
}

// The client's own pools, the batch pool and a binding's, open all their
// connections as the client starts, before any work asks for them, and
// keep them however long they idle (warmPool): a burst at a slot does not
// open them.
func TestOwnPoolsOpenTheirConnectionsAtStart(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	c, err := NewClient(db.Pool, testConfig(t, db))
	require.NoError(t, err)
	rt := wfruntime.Of(c)
	require.NoError(t, rt.Bind(&wfruntime.Binding{Name: "pooled", Conns: 2}))

	require.NoError(t, c.Start(context.Background()))
	defer stopClient(t, c)
	batch, own := c.batchPool.Load(), rt.BindingPool("pooled")
	require.NotNil(t, batch)
	for _, p := range []struct {
		name  string
		conns int32
		stat  func() *pgxpool.Stat
	}{
		{"the batch pool", batchPoolConns, batch.Stat},
		{"the binding's pool", 2, own.Stat},
	} {
		require.Eventually(t, func() bool { return p.stat().TotalConns() == p.conns }, 10*time.Second, 10*time.Millisecond,
			"%s opens its %d connections at Start", p.name, p.conns)
		require.EqualValues(t, p.conns, p.stat().MaxConns())
		require.Zero(t, p.stat().AcquireCount(), "%s was not used", p.name)
	}
	batchConfig := batch.Config()
	require.Equal(t, batchConfig.MinConns, batchConfig.MaxConns, "kept however long they idle")
}
