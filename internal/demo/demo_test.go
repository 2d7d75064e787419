package demo

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func TestRun(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var out bytes.Buffer
	require.NoError(t, Run(ctx, db.Pool, &out, slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.Contains(t, out.String(), "Welcome aboard, Ada")
	require.Contains(t, out.String(), "status: waiting")
	require.Contains(t, out.String(), "laptop (1200) approved by finance and ordered")
	require.Contains(t, out.String(), "cooling_off      sleep   completed")
}
