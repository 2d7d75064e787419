package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func TestQuickstart(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var out bytes.Buffer
	require.NoError(t, run(ctx, db.Pool, &out))
	require.Contains(t, out.String(), "run onboard completed: Welcome aboard, Ada! Your account number is 1.")
	require.Contains(t, out.String(), "step create_account")
	require.Contains(t, out.String(), "step send_email")
}
