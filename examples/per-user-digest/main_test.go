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

func TestPerUserDigest(t *testing.T) {
	t.Parallel()

	db, got := testdb.RunExample(t, run)
	ctx := context.Background()

	// 08:00 in each zone, and the same instant in UTC.
	require.Regexp(t, `ada\s+America/New_York\s+created, next \w{3} \d+ \w{3} 08:00 E[SD]T = \w{3} \d+ \w{3} 1[23]:00 UTC`, got)
	require.Regexp(t, `bruno\s+Europe/Berlin\s+created, next \w{3} \d+ \w{3} 08:00 CES?T = \w{3} \d+ \w{3} 0[67]:00 UTC`, got)
	require.Regexp(t, `kenji\s+Asia/Tokyo\s+created, next \w{3} \d+ \w{3} 08:00 JST = \w{3} \d+ \w{3} 23:00 UTC`, got)
	require.Contains(t, got, `Schedules owned by kenji: "daily digest for Kenji" key=daily-digest paused=true note="on holiday"`)
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

// TestPerUserDigestRunThreeTimes runs the example three times against one
// database, as a service restarts: each user keeps exactly one schedule,
// and the later runs find them by their keys.
func TestPerUserDigestRunThreeTimes(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := context.Background()

	outputs := make([]string, 3)
	for i := range outputs {
		outputs[i] = runOn(t, db)
	}
	for _, u := range users {
		require.Regexp(t, `\n  `+u.ID+`\s+\S+\s+created, next `, outputs[0])
		for _, out := range outputs[1:] {
			require.Regexp(t, `\n  `+u.ID+`\s+\S+\s+existed, next `, out)
			require.NotContains(t, out, "created")
		}
	}

	type row struct {
		Owner, Key string
		Count      int
	}
	rows, err := db.Pool.Query(ctx, `SELECT owner, key, count(*) FROM schedules GROUP BY owner, key ORDER BY owner`)
	require.NoError(t, err)
	var perUser []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.Owner, &r.Key, &r.Count))
		perUser = append(perUser, r)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []row{{"ada", "daily-digest", 1}, {"bruno", "daily-digest", 1}, {"kenji", "daily-digest", 1}}, perUser)

	// Each run triggered Ada's digest once.
	var sent int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM digest_outbox WHERE user_id = 'ada'`).Scan(&sent))
	require.Equal(t, 3, sent)
}

// runOn runs the example against db, which stays from one call to the
// next as a DATABASE_URL's does, with RunExample's deadline, and returns
// what it printed.
func runOn(t *testing.T, db *testdb.DB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, db.Pool, &out)
	t.Log("\n" + out.String())
	require.NoError(t, err)
	return out.String()
}
