// Command per-user-digest sends each user a daily digest at 08:00 in the
// user's own time zone: one schedule per user, all starting the same digest
// workflow.
//
//	go run ./examples/per-user-digest
//
// It gives three users, in New York, Berlin and Tokyo, a schedule "0 8 * * *"
// in their zone, owned by the user (Params.Owner) under the key
// "daily-digest" (Params.Key), and prints whether it created each one or
// found it, and when each fires next in the user's zone and in UTC. It
// pauses one user's digests, lists that user's schedules to show it, and
// resumes them. Rather than wait for 08:00, it then triggers one user's
// digest now and prints what was "sent": a row of the digest_outbox table,
// written in one transaction with the step's memo (StepTx), so a retry
// never sends a digest twice.
//
// It uses DATABASE_URL, or starts a throw-away Postgres when that is unset.
// In a database that stays, so do the three schedules, as in a real service:
// running the example again finds each user's by its key and creates none,
// and `tributary schedule delete daily-digest --owner ada` removes Ada's.
package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	_ "time/tzdata" // the users' zones resolve on machines without zone files too

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/devdb"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// DigestInput is the digest workflow's input; each user's schedule stores
// its own.
type DigestInput struct {
	UserID   string `json:"user_id"`
	Name     string `json:"name"`
	TimeZone string `json:"time_zone"`
}

// newDigest defines the digest workflow, which returns the digest it sent.
// Its steps read from pool: a workflow's dependencies are whatever its
// function captures.
func newDigest(pool *pgxpool.Pool) *workflow.Definition[DigestInput, string] {
	return workflow.Define("digest", func(ctx workflow.Context, in DigestInput) (string, error) {
		items, err := workflow.Step(ctx, "load_items", func(ctx context.Context) ([]string, error) {
			rows, _ := pool.Query(ctx, `SELECT title FROM digest_items WHERE user_id = $1 ORDER BY id`, in.UserID)
			return pgx.CollectRows(rows, pgx.RowTo[string])
		})
		if err != nil {
			return "", err
		}

		// The digest is dated by the slot it was scheduled for, in the
		// user's zone, so a replay renders the same text.
		info := ctx.Run()
		body, err := workflow.Step(ctx, "render", func(context.Context) (string, error) {
			loc, err := schedule.LoadZone(in.TimeZone) // the zone the schedule fires in
			if err != nil {
				return "", workflow.NonRetryable(err)
			}
			day := time.Now()
			if info.FireAt != nil {
				day = *info.FireAt
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Good morning %s! %d new items for %s:\n", in.Name, len(items), day.In(loc).Format("Monday 2 January"))
			for _, item := range items {
				fmt.Fprintf(&b, "  - %s\n", item)
			}
			return b.String(), nil
		})
		if err != nil {
			return "", err
		}

		// "Sending" is an insert into an outbox that a mailer drains: the row
		// and the step's memo commit together, exactly once per run.
		return workflow.StepTx(ctx, "send", func(ctx context.Context, tx pgx.Tx) (string, error) {
			_, err := tx.Exec(ctx, `INSERT INTO digest_outbox (user_id, run_id, body) VALUES ($1, $2, $3)`, in.UserID, info.ID, body)
			return body, err
		})
	}, nil)
}

type user struct{ ID, Name, Zone string }

var users = []user{
	{"ada", "Ada", "America/New_York"},
	{"bruno", "Bruno", "Europe/Berlin"},
	{"kenji", "Kenji", "Asia/Tokyo"},
}

const setupSQL = `
CREATE TABLE IF NOT EXISTS digest_items (id bigint PRIMARY KEY, user_id text NOT NULL, title text NOT NULL);
CREATE TABLE IF NOT EXISTS digest_outbox (id bigserial PRIMARY KEY, user_id text NOT NULL, run_id uuid NOT NULL UNIQUE, body text NOT NULL);
INSERT INTO digest_items (id, user_id, title) VALUES
	(1, 'ada', 'Your invoice #1042 was paid'), (2, 'ada', 'Grace commented on "Q3 plan"'),
	(3, 'bruno', 'New login from Munich'), (4, 'kenji', 'Weekly usage report is ready')
ON CONFLICT (id) DO NOTHING`

func main() { devdb.Main("per-user-digest", run) } // DATABASE_URL, or a throw-away Postgres; Ctrl-C stops it

func run(ctx context.Context, pool *pgxpool.Pool, out io.Writer) error {
	if _, err := pool.Exec(ctx, setupSQL); err != nil {
		return err
	}

	digest := newDigest(pool)
	client, err := workflow.NewClient(pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}}},
		Workflows: []workflow.Registrable{digest},
	})
	if err != nil {
		return err
	}
	schedules, err := schedule.New(client, nil)
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer client.Stop(context.WithoutCancel(ctx)) //nolint:errcheck // best effort on the way out

	fmt.Fprintln(out, "Daily digests at 08:00 in each user's zone:")
	for _, u := range users {
		s, err := ensureSchedule(ctx, schedules, u)
		if err != nil {
			return err
		}
		made := "created"
		if s.Existing {
			made = "existed" // a run before this one created it
		}
		next, err := schedules.Next(ctx, schedule.ByID(s.ID), 1)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-5s %-16s %s, next %s = %s\n", u.ID, u.Zone, made, inZone(s, next[0].At), next[0].At.UTC().Format(dayTime))
	}

	// Kenji goes on holiday: pausing stops his slots, nobody else's. His
	// schedule's name is his id and the key, so nothing needs to remember
	// its id.
	kenji := digestOf("kenji")
	if _, err := schedules.Pause(ctx, kenji, "on holiday"); err != nil {
		return err
	}
	owned, err := schedules.List(ctx, &schedule.ListParams{Owner: "kenji"})
	if err != nil {
		return err
	}
	for _, s := range owned {
		fmt.Fprintf(out, "Schedules owned by kenji: %q key=%s paused=%t note=%q\n", s.Name, s.Key, s.Paused, s.PauseNote)
	}
	resumed, err := schedules.Resume(ctx, kenji, nil) // slots missed while paused are skipped
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Resumed: paused=%t, next %s\n", resumed.Paused, inZone(resumed, *resumed.NextFireAt))

	// No need to wait for 08:00: trigger Ada's digest now, outside the cron.
	runID, err := schedules.Trigger(ctx, digestOf("ada"), nil)
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sent, err := digest.Handle(client, runID).Result(waitCtx)
	if err != nil {
		return fmt.Errorf("digest run %s: %w", runID, err)
	}
	fmt.Fprintf(out, "Triggered ada's digest: run completed, sent:\n%s", sent)
	return nil
}

// digestKey names each user's digest schedule among that user's
// schedules. The owner is the user, so that List, the dashboard's owner
// filter and `--owner ada` find a user's schedules; the key says which of
// them this is, the same for every user, so that code finds any user's
// digest from the user's id alone (digestOf), and another kind of
// schedule per user would take another key.
const digestKey = "daily-digest"

// digestOf names u's digest schedule.
func digestOf(userID string) schedule.Ref { return schedule.ByKey(userID, digestKey) }

// ensureSchedule creates the user's digest schedule, or returns it with
// Existing set when the user has it already: the key makes creating it at
// every start-up safe, and running the example twice against the same
// database does not give a user two digests a day. A stored schedule
// whose spec differs from this one (say the cron changed in the code) is
// a *schedule.KeyConflictError, which names the fields; Update changes
// it.
func ensureSchedule(ctx context.Context, schedules *schedule.Client, u user) (*schedule.Schedule, error) {
	return schedules.Create(ctx, &schedule.Params{
		Name:     "daily digest for " + u.Name,
		Owner:    u.ID,
		Key:      digestKey,
		Workflow: "digest",
		Input:    DigestInput{UserID: u.ID, Name: u.Name, TimeZone: u.Zone},
		Cron:     "0 8 * * *",
		TimeZone: u.Zone,
	})
}

const dayTime = "Mon 2 Jan 15:04 MST"

// inZone formats t in the schedule's time zone.
func inZone(s *schedule.Schedule, t time.Time) string {
	spec, err := s.Spec()
	if err != nil {
		return t.UTC().Format(dayTime)
	}
	return t.In(spec.Location()).Format(dayTime)
}
