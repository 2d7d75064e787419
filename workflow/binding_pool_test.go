package workflow

import (
	"context"
	"testing"

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
