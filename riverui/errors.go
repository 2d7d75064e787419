package riverui

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// apiError is an error with the HTTP status to answer.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// errNoSchedules answers the schedule routes of a Handler built without a
// schedule client.
var errNoSchedules = &apiError{status: http.StatusNotFound, msg: "schedules are not served here: this handler was built without a schedule client"}

// statusOf maps err to the HTTP status and the message to answer, for the
// JSON API and the dashboard alike. Unexpected errors are logged and
// answered 500 without their text, which may name database internals.
func (h *Handler) statusOf(err error) (int, string) {
	var apiErr *apiError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.status, apiErr.msg
	case errors.Is(err, workflow.ErrNotFound), errors.Is(err, schedule.ErrNotFound), errors.Is(err, schedule.ErrGrantNotFound):
		return http.StatusNotFound, err.Error()
	case errors.Is(err, workflow.ErrInvalid), errors.Is(err, schedule.ErrInvalid), errors.Is(err, workflow.ErrUnknownType):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, workflow.ErrRunFinished), errors.Is(err, workflow.ErrRunNotRetryable):
		return http.StatusConflict, err.Error()
	default:
		h.logger.Error("riverui: request failed", "error", err)
		return http.StatusInternalServerError, "internal error; see the server's log"
	}
}
