// Package testwait is how tests wait for what the code under test changes
// in the database, without sleeping: they check a condition, then check it
// again each time something may have changed it (a River job event of the
// clients that work the jobs, which comes after the job's transaction
// committed, or any other signal the test has), until a deadline.
package testwait

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// JobEvents returns a channel that is ready after a job of one of clients
// completed, failed, was cancelled or snoozed (one pending at a time: a
// check is due then, however many events came), and the function that
// stops listening, which the caller defers.
func JobEvents(clients ...*river.Client[pgx.Tx]) (<-chan struct{}, func()) {
	changed := make(chan struct{}, 1)
	stop := make(chan struct{})
	var forwarders sync.WaitGroup
	var cancels []func()
	for _, client := range clients {
		events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
			river.EventKindJobCancelled, river.EventKindJobSnoozed)
		cancels = append(cancels, cancel)
		forwarders.Go(func() {
			for {
				select {
				case _, ok := <-events:
					if !ok {
						return
					}
					select {
					case changed <- struct{}{}:
					default: // a check is due already
					}
				case <-stop:
					return
				}
			}
		})
	}
	return changed, func() {
		close(stop)
		for _, cancel := range cancels {
			cancel()
		}
		forwarders.Wait()
	}
}

// Until checks cond, then again each time one of wake is ready, until cond
// reports nothing missing (nil) or ctx ends, when it returns what cond
// last said was missing. A nil channel in wake is never ready.
func Until(ctx context.Context, cond func(ctx context.Context) error, wake ...<-chan struct{}) error {
	merged := make(chan struct{}, 1)
	stop := make(chan struct{})
	defer close(stop)
	for _, ch := range wake {
		if ch == nil {
			continue
		}
		go func() {
			for {
				select {
				case _, ok := <-ch:
					if !ok {
						return
					}
					select {
					case merged <- struct{}{}:
					default:
					}
				case <-stop:
					return
				}
			}
		}()
	}
	for {
		missing := cond(ctx)
		if missing == nil {
			return nil
		}
		select {
		case <-merged:
		case <-ctx.Done():
			return missing
		}
	}
}
