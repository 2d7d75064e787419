package riverui

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/workflow"
)

// forksShown is how many of a run's forks its page lists, newest first.
const forksShown = 20

// forkForm serves the "Fork from this step" forms of a run's page
// (workflow.Client.Fork with the form's step): on to the new run's page,
// or the run's page again with what was wrong (as runForm).
func (h *Handler) forkForm() http.Handler {
	return h.byID(func(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
		if err := parseForm(r); err != nil {
			return err
		}
		step := r.PostFormValue("step")
		if step == "" {
			return badField("step", "is missing; choose the step to fork from on the run's page")
		}
		fork, err := h.wf.Fork(r.Context(), id, step)
		if err != nil {
			return err
		}
		h.seeOther(w, r, "/runs/"+fork.ID.String(), "forked", nil)
		return nil
	}, func(w http.ResponseWriter, r *http.Request, err error) {
		status, msg := h.statusOf(err)
		id, idErr := parseID(r, "run")
		if idErr != nil || h.showRun(w, r, id, status, msg) != nil {
			h.errorPage(w, r, status, msg)
		}
	})
}

// forksOf are the newest forks of run, for its page.
func (h *Handler) forksOf(ctx context.Context, run *workflow.Run) ([]*workflow.Run, error) {
	return h.wf.ListRuns(ctx, &workflow.ListParams{ForkedFrom: &run.ID, Limit: forksShown})
}
