package riverui

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// apiError is an error with the HTTP status to answer and, when it is
// about one field of a request body or query, the field's name as the API
// spells it.
type apiError struct {
	status int
	msg    string
	field  string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// badField is a 400 about the field named name (as the API spells it); the
// message starts with the name.
func badField(name, format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, msg: name + ": " + fmt.Sprintf(format, args...), field: name}
}

// badParam is a 400 about the query parameter name.
func badParam(name, format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...), field: name}
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
	case errors.Is(err, workflow.ErrNotFound), errors.Is(err, schedule.ErrNotFound), errors.Is(err, schedule.ErrGrantNotFound),
		errors.Is(err, schedule.ErrCalendarNotFound):
		return http.StatusNotFound, err.Error()
	case errors.Is(err, workflow.ErrInvalid), errors.Is(err, schedule.ErrInvalid), errors.Is(err, workflow.ErrUnknownType),
		errors.Is(err, workflow.ErrStepNotRecorded):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, workflow.ErrRunFinished), errors.Is(err, workflow.ErrRunNotRetryable), errors.Is(err, workflow.ErrRunNotFinished),
		errors.As(err, new(*workflow.NoWorkerError)),
		errors.Is(err, schedule.ErrKeyConflict), errors.As(err, new(*schedule.CalendarInUseError)):
		return http.StatusConflict, err.Error()
	default:
		h.logger.Error("riverui: request failed", "error", err)
		return http.StatusInternalServerError, "internal error; see the server's log"
	}
}

// apiErrorBody is the body of every error the JSON API answers (see the
// package documentation and the Error schema of openapi.json).
type apiErrorBody struct {
	// Error says what was wrong and what to do.
	Error string `json:"error"`
	// Field, when the error is about one field of the request body or one
	// query parameter, is its name as the API spells it.
	Field string `json:"field,omitempty"`
}

// apiErrorOf is the JSON answer of err: statusOf's status and message,
// with the field the error is about in the API's words. A validation error
// of the Go API names its field as Go does ("schedule: invalid EndAt: …");
// the API names it as its bodies do ("invalid end_at: …").
func (h *Handler) apiErrorOf(err error) (int, apiErrorBody) {
	status, msg := h.statusOf(err)
	body := apiErrorBody{Error: msg}
	var (
		apiErr  *apiError
		sv      *schedule.ValidationError
		wv      *workflow.ValidationError
		cronErr *schedule.CronError
		rrErr   *schedule.RRuleError
		zoneErr *schedule.ZoneError
		noOcc   *schedule.NoOccurrenceError
	)
	switch {
	case errors.As(err, &apiErr):
		body.Field = apiErr.field
	case errors.As(err, &sv):
		body.Field, body.Error = apiValidation(sv.Field, sv.Problem, msg)
	case errors.As(err, &wv):
		body.Field, body.Error = apiValidation(wv.Field, wv.Problem, msg)
	case errors.As(err, &cronErr), errors.As(err, &noOcc):
		body.Field, body.Error = "cron", "cron: "+strings.TrimPrefix(msg, "schedule: ")
	case errors.As(err, &rrErr):
		body.Field, body.Error = "rrule", "rrule: "+strings.TrimPrefix(msg, "schedule: ")
	case errors.As(err, &zoneErr):
		body.Field, body.Error = "time_zone", "time_zone: "+strings.TrimPrefix(msg, "schedule: ")
	}
	return status, body
}

// apiValidation rewords a Go validation error about field (a Go name such
// as "EndAt" or "BackfillOpts.Overlap") in the API's words; msg is kept for
// the errors that are about no one field ("range", "Params").
func apiValidation(field, problem, msg string) (string, string) {
	if rest, ok := strings.CutPrefix(field, "StartOpts.Debounce"); ok { // a start's "debounce"
		name := "debounce"
		if rest != "" {
			name += "." + snakeCase(strings.TrimPrefix(rest, "."))
		}
		problem = strings.NewReplacer("IdempotencyKey", "idempotency_key", "MaxDelay", "max_delay", "Period", "period").Replace(problem)
		return name, "invalid " + name + ": " + problem
	}
	if strings.HasSuffix(field, "Retry") || strings.Contains(field, "Retry.") { // a "retry"
		name, problem := retryProblem(field, problem)
		return name, "invalid " + name + ": " + problem
	}
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		field = field[i+1:]
	}
	if field == "Cron" || field == "RRule" { // "set it as RRule"
		problem = strings.NewReplacer("RRule", "rrule", "Cron", "cron").Replace(problem)
	}
	name := apiName(field)
	switch name {
	case "", "params", "range", "run", "pool", "fn":
		return "", msg
	}
	return name, "invalid " + name + ": " + problem
}

// apiName is the API's name of a Go field name: its snake case, but for
// RRule, which the API spells rrule (as RFC 5545 does), not r_rule.
func apiName(field string) string {
	if field == "RRule" {
		return "rrule"
	}
	return snakeCase(field)
}

// snakeCase spells a Go field name as the API does: CatchUpWindow is
// catch_up_window, GrantID is grant_id.
func snakeCase(s string) string {
	var b strings.Builder
	runes := []rune(s)
	for i, r := range runes {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && !unicode.IsUpper(runes[i-1]) && runes[i-1] != '_'
			nextLower := i > 0 && i+1 < len(runes) && unicode.IsLower(runes[i+1]) && unicode.IsUpper(runes[i-1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
