package engine

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestQueryRowOnPool checks that queryRow on a pool reads as the pool's
// QueryRow does (a row, pgx.ErrNoRows, an error) and gives the connection
// back after each Scan.
func TestQueryRowOnPool(t *testing.T) {
	t.Parallel()
	pool := testdb.NewEmpty(t).Pool
	ctx := context.Background()

	row := queryRow(ctx, pool, "SELECT $1::int + 1, 'x'", 41)
	require.IsType(t, &acquiringRow{}, row)
	var (
		n int
		s string
	)
	require.NoError(t, row.Scan(&n, &s))
	require.Equal(t, 42, n)
	require.Equal(t, "x", s)
	require.Zero(t, pool.Stat().AcquiredConns())

	err := queryRow(ctx, pool, "SELECT 1 WHERE false").Scan(&n)
	require.ErrorIs(t, err, pgx.ErrNoRows)
	require.Zero(t, pool.Stat().AcquiredConns())

	err = queryRow(ctx, pool, "SELECT 1/0").Scan(&n)
	require.ErrorContains(t, err, "division by zero")
	require.Zero(t, pool.Stat().AcquiredConns())

	// In a transaction it is the transaction's own QueryRow.
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	row = queryRow(ctx, tx, "SELECT 7")
	_, isAcquiring := row.(*acquiringRow)
	require.False(t, isAcquiring)
	require.NoError(t, row.Scan(&n))
	require.Equal(t, 7, n)
}
