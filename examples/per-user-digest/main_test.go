package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func TestPerUserDigest(t *testing.T) {
	t.Parallel()

	db, got := testdb.RunExample(t, run)
	ctx := context.Background()

	// 08:00 in each zone, and the same instant in UTC.
	require.Regexp(t, `ada\s+America/New_York\s+next \w{3} \d+ \w{3} 08:00 E[SD]T = \w{3} \d+ \w{3} 1[23]:00 UTC`, got)
	require.Regexp(t, `bruno\s+Europe/Berlin\s+next \w{3} \d+ \w{3} 08:00 CES?T = \w{3} \d+ \w{3} 0[67]:00 UTC`, got)
	require.Regexp(t, `kenji\s+Asia/Tokyo\s+next \w{3} \d+ \w{3} 08:00 JST = \w{3} \d+ \w{3} 23:00 UTC`, got)
	require.Contains(t, got, `Schedules owned by kenji: "daily digest for Kenji" paused=true note="on holiday"`)
	require.Regexp(t, `Resumed: paused=false, next \w{3} \d+ \w{3} 08:00 JST`, got)
	require.Contains(t, got, "Triggered ada's digest: run completed, sent:\nGood morning Ada! 2 new items for ")
	require.Contains(t, got, "  - Grace commented on \"Q3 plan\"\n")

	var user, body string
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT user_id, body FROM digest_outbox`).Scan(&user, &body))
	require.Equal(t, "ada", user)
	require.Contains(t, body, "Your invoice #1042 was paid")

	var paused int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM schedules WHERE paused`).Scan(&paused))
	require.Zero(t, paused)
}
