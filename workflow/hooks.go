package workflow

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/wfhook"
)

// Package schedule reaches a workflow client through wfhook.Of, which
// returns the client as a wfhook.Engine: the methods it needs are not part
// of Client's exported API.
func init() {
	wfhook.Of = func(wf any) wfhook.Engine { return (*hooks)(wf.(*Client)) }
}

// hooks is a Client seen as a wfhook.Engine.
type hooks Client

func (h *hooks) client() *Client { return (*Client)(h) }

func (h *hooks) Bind(ext *wfhook.Extension) error { return h.client().bind(ext) }

func (h *hooks) Now() time.Time { return h.client().now() }

func (h *hooks) StartScheduledTx(ctx context.Context, tx pgx.Tx, s *wfhook.ScheduledStart) (*wfhook.Started, error) {
	return h.client().startScheduledTx(ctx, tx, s)
}

func (h *hooks) StartScheduledManyTx(ctx context.Context, tx pgx.Tx, starts []*wfhook.ScheduledStart) ([]wfhook.Started, error) {
	return h.client().startScheduledManyTx(ctx, tx, starts)
}

func (h *hooks) WakeAtTx(ctx context.Context, tx pgx.Tx, w *wfhook.Wake) error {
	return h.client().wakeAtTx(ctx, tx, w)
}

func (h *hooks) CancelScheduleRunsTx(ctx context.Context, tx pgx.Tx, s *wfhook.ScheduleRuns) (int, error) {
	return h.client().cancelScheduleRunsTx(ctx, tx, s)
}

// bind adds ext to the River client before Start (River reads its workers
// bundle without a lock once started). A client that does not work jobs
// has nothing to add: it only inserts.
func (c *Client) bind(ext *wfhook.Extension) error {
	c.startStopMu.Lock()
	defer c.startStopMu.Unlock()
	if c.started {
		return fmt.Errorf("the workflow client is started already; create the %s client before calling the workflow client's Start", ext.Name)
	}
	if slices.Contains(c.extensions, ext.Name) {
		return fmt.Errorf("this workflow client has a %s client already; make one %s client per workflow client and share it", ext.Name, ext.Name)
	}
	if !c.works {
		c.extensions = append(c.extensions, ext.Name)
		return nil
	}
	if ext.Register != nil {
		if err := ext.Register(c.riverWorkers); err != nil {
			return fmt.Errorf("register the %s workers: %w", ext.Name, err)
		}
	}
	if ext.Queue != "" {
		if !slices.Contains(c.riverQueues, ext.Queue) {
			if err := c.river.Queues().Add(ext.Queue, river.QueueConfig{MaxWorkers: ext.QueueWorkers}); err != nil {
				return fmt.Errorf("add River queue %q: %w", ext.Queue, err)
			}
			c.riverQueues = append(c.riverQueues, ext.Queue)
			c.registry.addQueue(ext.Queue)
		}
		c.armQueues = append(c.armQueues, ext.Queue)
	}
	if c.leaderElection {
		for _, job := range ext.PeriodicJobs {
			if _, err := c.river.PeriodicJobs().AddSafely(job); err != nil {
				return fmt.Errorf("add the %s periodic job: %w", ext.Name, err)
			}
		}
	}
	c.extensions = append(c.extensions, ext.Name)
	return nil
}
