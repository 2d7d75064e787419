package riverui

import (
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/workflow"
)

// forkBody is the body of POST /api/runs/{id}/fork.
type forkBody struct {
	FromStep opt[string]
}

func (b *forkBody) spec() *bodySpec {
	return &bodySpec{what: "a fork", required: true, members: []member{{name: "from_step", dst: &b.FromStep}}}
}

// forkRun answers POST /api/runs/{id}/fork, {"from_step": "charge"}
// (workflow.Client.Fork): 201 and the new run. A run that is not finished
// is 409; a step the run did not record is 400 naming the steps it did.
func (h *Handler) forkRun(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	var b forkBody
	if _, err := b.spec().read(r); err != nil {
		return err
	}
	if b.FromStep.value() == "" {
		return badField("from_step", `is missing; name the step to run again, as the run's steps list it: {"from_step": "charge"}`)
	}
	fork, err := h.wf.Fork(r.Context(), id, b.FromStep.value())
	if errors.Is(err, workflow.ErrStepNotRecorded) {
		return badField("from_step", "%s", err.Error())
	}
	if err != nil {
		return err
	}
	return h.writeRunStatus(w, r, fork.ID, http.StatusCreated)
}
