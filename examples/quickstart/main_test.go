package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func TestQuickstart(t *testing.T) {
	t.Parallel()

	_, got := testdb.RunExample(t, run)
	require.Contains(t, got, "run onboard completed: Welcome aboard, Ada! Your account number is 1.")
	require.Contains(t, got, "step create_account")
	require.Contains(t, got, "step send_email")
}
