package wire

import (
	"github.com/google/uuid"

	"github.com/tributary-go/tributary/workflow"
)

// Bulk is what a bulk action on runs did (workflow.BulkResult on the
// wire), or would do for a dry run.
type Bulk struct {
	Action   workflow.BulkAction     `json:"action"`
	FromStep string                  `json:"from_step"`
	DryRun   bool                    `json:"dry_run"`
	Matched  int                     `json:"matched"`
	ByStatus map[workflow.Status]int `json:"by_status"`
	Eligible int                     `json:"eligible"`
	Changed  []uuid.UUID             `json:"changed"`
	Forks    []uuid.UUID             `json:"forks"`
	Skipped  []workflow.SkippedRun   `json:"skipped"`
	Batches  int                     `json:"batches"`
}

// NewBulk is res on the wire.
func NewBulk(res *workflow.BulkResult) *Bulk {
	out := &Bulk{
		Action: res.Action, FromStep: res.FromStep, DryRun: res.DryRun, Matched: res.Matched, ByStatus: res.ByStatus,
		Eligible: res.Eligible, Changed: res.Changed, Forks: res.Forks, Skipped: res.Skipped, Batches: res.Batches,
	}
	if out.ByStatus == nil {
		out.ByStatus = map[workflow.Status]int{}
	}
	if out.Changed == nil {
		out.Changed = []uuid.UUID{}
	}
	if out.Forks == nil {
		out.Forks = []uuid.UUID{}
	}
	if out.Skipped == nil {
		out.Skipped = []workflow.SkippedRun{}
	}
	return out
}
