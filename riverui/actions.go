package riverui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
)

// The dashboard's forms post to these actions. Each one parses the id and
// the form, changes the run or schedule through the same client call as
// the JSON API, and answers like a form should: a 303 redirect to the page
// with a flash notice, or the page again with the error, under the status
// the JSON API would answer (statusOf).

// runForm serves the POST of a form on a run's page: do, then back to the
// page with notice.
func (h *Handler) runForm(do op, notice string) http.Handler {
	return h.byID("run", func(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
		if err := parseForm(r); err != nil {
			return err
		}
		if err := do(r, id); err != nil {
			return err
		}
		h.seeOther(w, r, "/runs/"+id.String(), notice, nil)
		return nil
	}, func(w http.ResponseWriter, r *http.Request, err error) {
		status, msg := h.statusOf(err)
		id, idErr := parseID(r, "run")
		if idErr != nil || h.showRun(w, r, id, status, msg) != nil {
			h.errorPage(w, r, status, msg)
		}
	})
}

// scheduleForm serves the POST of a form on a schedule's page: do changes
// the schedule and redirects.
func (h *Handler) scheduleForm(do idHandler) http.Handler {
	return h.byID("schedule", func(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
		if err := parseForm(r); err != nil {
			return err
		}
		return do(w, r, id)
	}, func(w http.ResponseWriter, r *http.Request, err error) {
		status, msg := h.statusOf(err)
		id, idErr := parseID(r, "schedule")
		if idErr != nil || h.showSchedule(w, r, id, status, msg) != nil {
			h.errorPage(w, r, status, msg)
		}
	})
}

func (h *Handler) pauseForm(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	if _, err := h.sc.Pause(r.Context(), id, strings.TrimSpace(r.PostFormValue("note"))); err != nil {
		return err
	}
	h.seeOther(w, r, "/schedules/"+id.String(), "paused", nil)
	return nil
}

func (h *Handler) resumeForm(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	opts := &schedule.ResumeOpts{Missed: schedule.MissedPolicy(r.PostFormValue("missed"))}
	if _, err := h.sc.Resume(r.Context(), id, opts); err != nil {
		return err
	}
	h.seeOther(w, r, "/schedules/"+id.String(), "resumed", nil)
	return nil
}

func (h *Handler) triggerForm(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	runID, err := h.sc.Trigger(r.Context(), id, nil)
	if err != nil {
		return err
	}
	h.seeOther(w, r, "/schedules/"+id.String(), "triggered", url.Values{"run": {runID.String()}})
	return nil
}

func (h *Handler) deleteForm(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	if err := h.sc.Delete(r.Context(), id); err != nil {
		return err
	}
	h.seeOther(w, r, "/", "deleted", nil)
	return nil
}

// signalForm sends the signal of the form's name and payload, a JSON value
// or nothing.
func (h *Handler) signalForm(r *http.Request, id uuid.UUID) error {
	var payload any
	if text := strings.TrimSpace(r.PostFormValue("payload")); text != "" {
		if !json.Valid([]byte(text)) {
			return badRequest("the payload is not valid JSON; leave it empty or write a JSON value such as {\"approved\": true}")
		}
		payload = json.RawMessage(text)
	}
	return h.wf.Signal(r.Context(), id, strings.TrimSpace(r.PostFormValue("name")), payload)
}

// parseForm reads a form's body, answering 413 for one too large.
func parseForm(r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		if tooLarge := tooLargeError(err); tooLarge != nil {
			return tooLarge
		}
		return badRequest("the form could not be read: %v", err)
	}
	return nil
}
