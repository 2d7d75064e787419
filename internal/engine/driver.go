package engine

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivershared/baseservice"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"
)

// Completer takes part in River's completer's writes: Driver calls it for
// each batch of jobs River's completer marks completed.
type Completer interface {
	// CompleteWithRiver is given the ids of the jobs River's completer is
	// about to mark completed, and apply, which makes River's own update
	// inside a transaction. When the Completer has work of its own to do
	// for some of those jobs, it opens a transaction, does it, calls apply
	// with that transaction, commits, and returns true: River's update and
	// the Completer's then commit together or not at all. When it has
	// nothing to do, it returns false without calling apply, and River's
	// update runs as it would without the Completer.
	CompleteWithRiver(ctx context.Context, jobIDs []int64, apply func(context.Context, pgx.Tx) error) (bool, error)

	// CompletedByRiver is given the jobs that River's own update, run
	// after CompleteWithRiver returned false, found running and completed:
	// for a workflow job that means the database lost the completion that
	// the Completer had committed (a failover to a standby that had not
	// received it), and the job was completed without its run. It is called
	// after River's update, outside its transaction, and reports its
	// failures itself: River's completer must not retry an update that has
	// committed.
	CompletedByRiver(ctx context.Context, jobs []*rivertype.JobRow)

	// TakeCompleted is given the jobs River's completer is about to mark
	// completed, and returns those whose completion the Completer has
	// committed durably itself, each as River's update would return it
	// (completed, with the finalized_at the Completer wrote), and forgets
	// them: River's update would find them completed and change nothing.
	// A job is returned once. It may wait a moment for completions the
	// Completer is about to commit.
	TakeCompleted(ctx context.Context, jobIDs []int64) map[int64]*rivertype.JobRow
}

// Driver is River's pgx driver with the engine's pilot plugged in: give it
// to river.NewClient instead of riverpgxv5.New. River looks for the plugin
// methods on the driver it is given.
//
// The pilot is River's plugin point for keeping a plugin's writes atomic
// with River's own (River Pro uses it so). River marks it internal, which is
// why only this package touches it.
type Driver struct {
	*riverpgxv5.Driver
	pilot *pilot
}

// NewDriver returns a Driver on pool. completer may be nil: the Driver then
// behaves as riverpgxv5.New(pool).
func NewDriver(pool *pgxpool.Pool, completer Completer) *Driver {
	d := &Driver{Driver: riverpgxv5.New(pool)}
	d.pilot = &pilot{completer: completer, driver: d.Driver, pool: pool}
	return d
}

// PluginInit is called by river.NewClient.
func (d *Driver) PluginInit(*baseservice.Archetype) {}

// PluginPilot gives River the engine's pilot.
func (d *Driver) PluginPilot() riverpilot.Pilot { return d.pilot }

// pilot is River's standard pilot, except that its completer's writes go
// through the Completer, and that its producers fetch keyed runs in fair
// turns (fair_fetch.go).
type pilot struct {
	riverpilot.StandardPilot
	completer Completer
	driver    *riverpgxv5.Driver
	pool      *pgxpool.Pool

	fairMu sync.Mutex
	fair   fairTexts // the fair fetch's statements, for the last schema asked
	rates  pilotRates
	limits pilotLimits

	armMu sync.Mutex
	armed map[string]bool // queues with a fetch armed (armFetch), for a rate or a limit

	producersMu sync.Mutex
	producers   map[int64]*fairState // the client's producers, by id, for their reserves

	log *slog.Logger // nil for slog.Default
}

// JobSetStateIfRunningMany is River's completer's write (and River's
// JobCompleteTx's).
func (p *pilot) JobSetStateIfRunningMany(ctx context.Context, exec riverdriver.Executor, params *riverdriver.JobSetStateIfRunningManyParams) ([]*rivertype.JobRow, error) {
	if p.completer == nil {
		return p.StandardPilot.JobSetStateIfRunningMany(ctx, exec, params)
	}
	// takeable are the completions the Completer may answer for: a job
	// with metadata to merge goes to River's update, which merges it even
	// into a finished job.
	var ids, takeable []int64
	for i, id := range params.ID {
		if params.State[i] == rivertype.JobStateCompleted {
			ids = append(ids, id)
			if !params.MetadataDoMerge[i] {
				takeable = append(takeable, id)
			}
		}
	}
	if len(ids) == 0 {
		return p.StandardPilot.JobSetStateIfRunningMany(ctx, exec, params)
	}
	// One writer: a job the Completer has completed durably is answered
	// from memory, not written a second time (its row lock would make the
	// two writers wait on each other). Should the write of the others
	// fail, River's completer retries the whole batch, and River's update
	// then answers for the jobs taken here: completed, with a finalized_at
	// other than River's, so not CompletedByRiver.
	var taken []*rivertype.JobRow
	if done := p.completer.TakeCompleted(ctx, takeable); len(done) > 0 {
		taken = slices.AppendSeq(make([]*rivertype.JobRow, 0, len(params.ID)), maps.Values(done))
		if params = paramsWithout(params, done); len(params.ID) == 0 {
			return taken, nil
		}
		ids = slices.DeleteFunc(ids, func(id int64) bool { return done[id] != nil })
	}
	rows, err := p.completeWithCompleter(ctx, exec, params, ids)
	if err != nil {
		return nil, err
	}
	return append(taken, rows...), nil
}

// completeWithCompleter makes River's update of params, whose jobs ids are
// to be completed, through the Completer: in its transaction when it has
// work of its own for them (CompleteWithRiver), else alone, telling it
// which jobs the update itself completed (CompletedByRiver).
func (p *pilot) completeWithCompleter(ctx context.Context, exec riverdriver.Executor, params *riverdriver.JobSetStateIfRunningManyParams, ids []int64) ([]*rivertype.JobRow, error) {
	if len(ids) == 0 {
		return p.StandardPilot.JobSetStateIfRunningMany(ctx, exec, params)
	}
	var rows []*rivertype.JobRow
	handled, err := p.completer.CompleteWithRiver(ctx, ids, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		rows, err = p.StandardPilot.JobSetStateIfRunningMany(ctx, p.driver.UnwrapExecutor(tx), params)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !handled {
		rows, err := p.StandardPilot.JobSetStateIfRunningMany(ctx, exec, params)
		if err != nil {
			return nil, err
		}
		if done := completedNow(rows, params); len(done) > 0 {
			p.completer.CompletedByRiver(ctx, done)
		}
		return rows, nil
	}
	return rows, nil
}

// paramsWithout returns params less the jobs of skip.
func paramsWithout(params *riverdriver.JobSetStateIfRunningManyParams, skip map[int64]*rivertype.JobRow) *riverdriver.JobSetStateIfRunningManyParams {
	rest := &riverdriver.JobSetStateIfRunningManyParams{Now: params.Now, Schema: params.Schema}
	for i, id := range params.ID {
		if _, ok := skip[id]; ok {
			continue
		}
		rest.ID = append(rest.ID, id)
		rest.Attempt = append(rest.Attempt, params.Attempt[i])
		rest.ErrData = append(rest.ErrData, params.ErrData[i])
		rest.FinalizedAt = append(rest.FinalizedAt, params.FinalizedAt[i])
		rest.MetadataDoMerge = append(rest.MetadataDoMerge, params.MetadataDoMerge[i])
		rest.MetadataUpdates = append(rest.MetadataUpdates, params.MetadataUpdates[i])
		rest.ScheduledAt = append(rest.ScheduledAt, params.ScheduledAt[i])
		rest.State = append(rest.State, params.State[i])
	}
	return rest
}

// completedNow returns those of rows, River's update's result for params,
// that the update itself completed: River's update returns every row asked
// for, and sets a job it completes to the finalized_at it was given, where
// a job completed earlier keeps its own (the engine's completion sets the
// database's clock). Costs a comparison per row, no query. Under a clock
// that stands still (a test's virtual clock), a job completed earlier at
// the same instant is reported too; the Completer checks what it is given
// (a workflow job's run must be unfinished), so that costs a query, not a
// mistake.
func completedNow(rows []*rivertype.JobRow, params *riverdriver.JobSetStateIfRunningManyParams) []*rivertype.JobRow {
	finalizedAt := make(map[int64]time.Time, len(params.ID))
	for i, id := range params.ID {
		if params.State[i] == rivertype.JobStateCompleted && params.FinalizedAt[i] != nil {
			finalizedAt[id] = params.FinalizedAt[i].Truncate(time.Microsecond)
		}
	}
	var done []*rivertype.JobRow
	for _, row := range rows {
		if at, ok := finalizedAt[row.ID]; ok && row.State == rivertype.JobStateCompleted && row.FinalizedAt != nil && row.FinalizedAt.Equal(at) {
			done = append(done, row)
		}
	}
	return done
}
