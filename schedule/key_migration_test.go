package schedule

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/migrations"
)

// TestKeysOnAnExistingDatabase: a schedule made before migration 012 (by
// the build before keys, here its row as that build inserted it) survives
// the migration without a key, reads and acts as before, and keys can be
// given next to it; migrating down and up again keeps it.
func TestKeysOnAnExistingDatabase(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, 60*time.Second)
	migrator, err := migrations.New(db.Pool, &migrations.Config{Schema: db.Schema})
	require.NoError(t, err)
	_, err = migrator.Down(ctx, &migrations.DownOpts{TargetVersion: 11})
	require.NoError(t, err)

	old := uuid.Must(uuid.NewV7())
	_, err = db.Pool.Exec(ctx, `INSERT INTO schedules (id, name, owner, workflow_type, cron, time_zone, next_fire_at)
		VALUES ($1, 'nightly report', 'acme', 'tick', '0 2 * * *', 'Europe/Paris', now() + interval '1 day')`, old)
	require.NoError(t, err)
	_, err = migrator.Up(ctx)
	require.NoError(t, err)

	sc := insertOnly(t, db)
	s, err := sc.Get(ctx, ByID(old))
	require.NoError(t, err)
	require.Empty(t, s.Key)
	require.Empty(t, s.DeclaredBy)
	require.Equal(t, "created by application code", s.Origin())
	_, err = sc.Pause(ctx, ByID(old), "still works")
	require.NoError(t, err)

	// The same name with a key is another schedule: an old schedule has no
	// key to be found by.
	keyedNow, err := sc.Create(ctx, keyed("acme", "nightly-report"))
	require.NoError(t, err)
	require.False(t, keyedNow.Existing)
	listed, err := sc.List(ctx, &ListParams{Owner: "acme"})
	require.NoError(t, err)
	require.Len(t, listed, 2)

	// Down removes the keys, and the schedules stay.
	_, err = migrator.Down(ctx, &migrations.DownOpts{TargetVersion: 11})
	require.NoError(t, err)
	require.Equal(t, 2, countOf(t, db, "SELECT count(*) FROM schedules WHERE owner = 'acme'"))
	_, err = migrator.Up(ctx)
	require.NoError(t, err)
	again, err := sc.Create(ctx, keyed("acme", "nightly-report"))
	require.NoError(t, err)
	require.False(t, again.Existing, "the key went with migration 012's columns")
}
