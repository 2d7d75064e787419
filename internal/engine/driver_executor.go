package engine

import (
	"github.com/riverqueue/river/riverdriver"
)

// GetExecutor is River's executor on the pool, reading through Pool
// instead of pgxpool's own Query and QueryRow: River's producers fetch,
// its completer completes, its leader re-elects itself and its
// maintenance runs through it for as long as the client works, and
// pgxpool's rows kept the last 128 queries' arguments and rows of each
// connection reachable (see Pool). Every statement still runs on a
// connection of the pool, in one round trip, as River's own executor runs
// it; a transaction River begins on it is a real one.
func (d *Driver) GetExecutor() riverdriver.Executor {
	if d.pilot.pool == nil {
		return d.Driver.GetExecutor()
	}
	return d.Driver.UnwrapExecutor(poolTx{Pool{d.pilot.pool}})
}
