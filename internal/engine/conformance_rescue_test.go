package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
)

// listen returns a connection of its own listening on db's channel topic,
// as River names it: the schema, a dot, the topic.
func listen(t *testing.T, db *testdb.DB, topic string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx(t), db.URL)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	_, err = conn.Exec(ctx(t), "LISTEN "+pgx.Identifier{db.Schema + "." + topic}.Sanitize())
	require.NoError(t, err)
	return conn
}

func nextPayload(t *testing.T, conn *pgx.Conn) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := conn.WaitForNotification(ctx)
	require.NoError(t, err, "no notification within 10s")
	var payload map[string]any
	require.NoError(t, json.Unmarshal([]byte(n.Payload), &payload))
	return payload
}

// TestRescue pins River's JobRescueMany as RescueTx uses it: the dead
// clients' running jobs of the kinds asked for are made available again
// (or discarded, without attempts left), with the attempt's error, and
// their queues' producers are notified; nothing else moves.
func TestRescue(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	jobs := engine.NewJobs(engine.NewQueries(db.Schema))
	notifications := listen(t, db, "river_insert")

	retried := insertJob(t, db, "workflow:x", "running", 1, 5, "alive", "dead")
	discarded := insertJob(t, db, "tributary:fire", "running", 3, 3, "dead")
	appJob := insertJob(t, db, "app_job", "running", 1, 5, "dead")
	movedOn := insertJob(t, db, "workflow:x", "running", 2, 5, "dead", "alive")
	waiting := insertJob(t, db, "workflow:x", "available", 1, 5, "dead")

	var res *engine.RescuedJobs
	require.NoError(t, pgx.BeginFunc(ctx(t), db.Pool, func(tx pgx.Tx) error {
		var err error
		res, err = jobs.RescueTx(ctx(t), tx, []string{"dead"}, []string{"workflow:%", "tributary:%"}, "rescuer")
		return err
	}))
	require.Equal(t, map[string]int{"dead": 2}, res.ByClient)
	require.Equal(t, []string{"q"}, res.Queues)

	got := readJob(t, db, retried)
	require.Equal(t, "available", got.state)
	require.False(t, got.finalized)
	require.WithinDuration(t, time.Now(), got.scheduledAt, time.Minute)
	require.Len(t, got.errors, 1)
	require.Contains(t, got.errors[0], "client dead died while working this job")
	require.EqualValues(t, 1, got.metadata["river:rescue_count"], "River counts the rescue as its rescuer does")

	got = readJob(t, db, discarded)
	require.Equal(t, "discarded", got.state)
	require.True(t, got.finalized)

	for _, id := range []int64{appJob, movedOn} {
		require.Equal(t, "running", readJob(t, db, id).state, "job %d is not the dead client's Tributary job", id)
	}
	require.Equal(t, "available", readJob(t, db, waiting).state)

	require.Equal(t, map[string]any{"queue": "q"}, nextPayload(t, notifications))
}

// TestResignLeader pins River's LeaderResign: the leader's row goes, the
// resignation is announced on River's leadership topic, and a running River
// client, which would otherwise wait for the dead leader's term to expire
// (an hour here), takes the lead.
func TestResignLeader(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	jobs := engine.NewJobs(engine.NewQueries(db.Schema))
	_, err := db.Pool.Exec(ctx(t), `INSERT INTO river_leader (leader_id, elected_at, expires_at) VALUES ('dead', now(), now() + interval '1 hour')`)
	require.NoError(t, err)
	notifications := listen(t, db, "river_leadership")

	// Only the leader enqueues periodic jobs: the job's completion tells
	// that the client leads.
	workers := river.NewWorkers()
	river.AddWorker(workers, noopWorker{})
	periodic := river.NewPeriodicJob(river.PeriodicInterval(time.Hour), func() (river.JobArgs, *river.InsertOpts) {
		return noopArgs{}, &river.InsertOpts{Queue: "q"}
	}, &river.PeriodicJobOpts{RunOnStart: true})
	client := startRiver(t, db, nil, &river.Config{Workers: workers, PeriodicJobs: []*river.PeriodicJob{periodic}})
	events, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()

	inTx := func(f func(tx pgx.Tx) error) error { return pgx.BeginFunc(ctx(t), db.Pool, f) }
	var resigned string
	require.NoError(t, inTx(func(tx pgx.Tx) (err error) {
		resigned, err = jobs.ResignLeaderTx(ctx(t), tx, []string{"alive"})
		return err
	}))
	require.Empty(t, resigned, "a client that does not lead resigns nothing")
	require.NoError(t, inTx(func(tx pgx.Tx) (err error) {
		resigned, err = jobs.ResignLeaderTx(ctx(t), tx, []string{"dead", "other"})
		return err
	}))
	require.Equal(t, "dead", resigned)
	require.Equal(t, map[string]any{"leader_id": "dead", "action": "resigned"}, nextPayload(t, notifications))

	select {
	case <-events:
	case <-ctx(t).Done():
		t.Fatal("the running River client did not take the lead within 30s of the resignation (the dead leader's term runs for an hour)")
	}
}

// TestNotifyQueueWakesProducer pins River's insert notification: a queue's
// idle producer fetches at once on {"queue": q}, long before its next poll.
func TestNotifyQueueWakesProducer(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	jobs := engine.NewJobs(engine.NewQueries(db.Schema))
	workers := river.NewWorkers()
	river.AddWorker(workers, noopWorker{})
	client := startRiver(t, db, nil, &river.Config{Workers: workers, FetchPollInterval: time.Hour})
	events, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()

	// A first job, inserted through River, shows the producer has fetched.
	first, err := client.Insert(ctx(t), noopArgs{}, &river.InsertOpts{Queue: "q"})
	require.NoError(t, err)
	waitCompleted(t, events, first.Job.ID)

	// A job River was not told about waits for the next poll, an hour away,
	// unless the notification wakes the producer.
	id := insertJob(t, db, "conformance_noop", "available", 0, 3)
	require.NoError(t, pgx.BeginFunc(ctx(t), db.Pool, func(tx pgx.Tx) error { return jobs.NotifyQueueTx(ctx(t), tx, "q") }))
	waitCompleted(t, events, id)
}

func waitCompleted(t *testing.T, events <-chan *river.Event, id int64) {
	t.Helper()
	for {
		select {
		case ev := <-events:
			if ev.Job.ID == id {
				return
			}
		case <-ctx(t).Done():
			t.Fatalf("job %d was not worked within 30s", id)
		}
	}
}
