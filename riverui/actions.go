package riverui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
)

// The dashboard's forms post to these actions. Each one reads the id (of a
// schedule, the id or the key) and the form, changes the run or schedule through the same client call as
// the JSON API, and answers like a form should: a 303 redirect to the page
// with a flash notice, or the page again with the error, under the status
// the JSON API would answer (statusOf).

// runForm serves the POST of a form on a run's page: do, then back to the
// page with notice.
func (h *Handler) runForm(do op, notice string) http.Handler {
	return h.byID(func(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
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

// schedulePage renders a page of the schedule ref names with status and
// errMsg, and writes nothing when it returns an error: showSchedule or
// showEdit.
type schedulePage func(w http.ResponseWriter, r *http.Request, ref schedule.Ref, status int, errMsg string) error

// scheduleForm serves the POST of a form on a schedule's page: do changes
// the schedule and redirects, or fails and the page is shown again. A
// schedule's actions, like its pages, take its id or its key with owner=,
// and redirect back to the page under the URL they were posted to.
func (h *Handler) scheduleForm(do refHandler, page schedulePage) http.Handler {
	return h.byRef(func(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
		if err := parseForm(r); err != nil {
			return err
		}
		return do(w, r, ref)
	}, func(w http.ResponseWriter, r *http.Request, err error) {
		status, msg := h.statusOf(err)
		ref, refErr := parseRef(r)
		if refErr != nil || page(w, r, ref, status, msg) != nil {
			h.errorPage(w, r, status, msg)
		}
	})
}

func (h *Handler) pauseForm(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	if _, err := h.sc.Pause(r.Context(), ref, strings.TrimSpace(r.PostFormValue("note"))); err != nil {
		return err
	}
	h.seeOther(w, r, refPath(ref, ""), "paused", nil)
	return nil
}

func (h *Handler) resumeForm(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	opts := &schedule.ResumeOpts{Missed: schedule.MissedPolicy(r.PostFormValue("missed"))}
	if _, err := h.sc.Resume(r.Context(), ref, opts); err != nil {
		return err
	}
	h.seeOther(w, r, refPath(ref, ""), "resumed", nil)
	return nil
}

func (h *Handler) triggerForm(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	runID, err := h.sc.Trigger(r.Context(), ref, nil)
	if err != nil {
		return err
	}
	h.seeOther(w, r, refPath(ref, ""), "triggered", url.Values{"run": {runID.String()}})
	return nil
}

// backfillForm runs the schedule's slots in [from, to) that have not run,
// with schedule.Client.Backfill as POST /api/schedules/{id}/backfill does,
// under the same cap (schedule.MaxBackfill slots, or the range is refused),
// and with the form's overlap policy, or the schedule's when it is empty.
// from and to are wall times in the schedule's zone, as a datetime-local
// input sends them, or RFC 3339 times (see formTime). The notice says how
// many of the range's slots it started or recorded as skipped, and how many
// had their run already.
func (h *Handler) backfillForm(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	s, err := h.sc.Get(r.Context(), ref)
	if err != nil {
		return err
	}
	spec, err := s.Spec()
	if err != nil {
		return err
	}
	fromText, toText := strings.TrimSpace(r.PostFormValue("from")), strings.TrimSpace(r.PostFormValue("to"))
	if fromText == "" || toText == "" {
		return badRequest("enter both ends of the range to backfill, from and to (in %s)", spec.Location())
	}
	from, err := formTime("from", fromText, spec.Location())
	if err != nil {
		return err
	}
	to, err := formTime("to", toText, spec.Location())
	if err != nil {
		return err
	}
	opts := &schedule.BackfillOpts{Overlap: schedule.OverlapPolicy(r.PostFormValue("overlap")), RerunSkipped: r.PostFormValue("rerun_skipped") != ""}
	res, err := h.sc.Backfill(r.Context(), schedule.ByID(s.ID), from, to, opts)
	if err != nil {
		return err
	}
	h.seeOther(w, r, refPath(ref, ""), "backfilled", backfillParams(res))
	return nil
}

func (h *Handler) deleteForm(w http.ResponseWriter, r *http.Request, ref schedule.Ref) error {
	if err := h.sc.Delete(r.Context(), ref); err != nil {
		return err
	}
	h.seeOther(w, r, "/schedules", "deleted", nil)
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
