package riverui

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// The page of a run: its input and output, its steps, the slot of a
// scheduled run, why a held run waits, and what can be done to it.

// runDuration is how long a finished run took from its first attempt's
// start, or "".
func runDuration(run *workflow.Run) string {
	if run.StartedAt == nil || run.FinishedAt == nil {
		return ""
	}
	return durfmt.Human(run.FinishedAt.Sub(*run.StartedAt))
}

// runView is the page of a run.
type runView struct {
	chrome
	Run             *workflow.Run
	Finished        bool
	CanCancel       bool
	CanRetry        bool
	CanSignal       bool
	Input           string
	Output          string
	Metadata        string
	Created         *moment
	Started         *moment
	Ended           *moment
	CancelRequested *moment
	Duration        string
	// NextAttempt is when the next attempt of a run waiting to retry is
	// due, relative to now ("in 40s"); "" for a run not waiting to retry.
	NextAttempt string
	// Retry is how an unfinished run's failed attempts are retried, in
	// words (wire.RetryText); "" for a finished run.
	Retry        string
	Schedule     *schedule.Schedule
	FireAt       *moment
	Triggered    bool
	Nominal      string
	DSTNote      string
	GrantSubject string
	Children     []childRun
	Steps        []stepRow
	Timeline     *timeline
	// Held says why a held run waits: "acme has 5 of 5 running (limit
	// set for the tenant)", or, HeldByRate, "acme is at its rate, 100 per
	// 1m0s; next token in 2.3s (the workflow type's rate)"; TenantLink
	// lists its tenant's standing.
	Held       string
	HeldByRate bool
	TenantLink string
	// WaitsFor is the signal the run waits for, when its step has the
	// default name ("signal:" and the signal's name); WaitStep is the step
	// of a wait named otherwise, whose signal name is not recorded.
	WaitsFor      string
	WaitStep      string
	SignalName    string
	SignalPayload string
	// CanFork offers a "Fork from this step" form on each step of a
	// finished run; Forks are the run's newest forks.
	CanFork bool
	Forks   []*workflow.Run
}

type childRun struct {
	ID   uuid.UUID
	Step string
}

// stepRow is a step record on a run's page.
type stepRow struct {
	Name       string
	Kind       workflow.StepKind
	Status     workflow.StepStatus
	Started    *moment
	Duration   string
	Attempts   int
	WakeAt     *moment
	ChildRunID *uuid.UUID
	Error      *workflow.RunError
	Output     string
}

// showRun renders the page of run id with status and errMsg. When it
// returns an error, it has written nothing.
func (h *Handler) showRun(w http.ResponseWriter, r *http.Request, id uuid.UUID, status int, errMsg string) error {
	ctx := r.Context()
	run, err := h.wf.GetRun(ctx, id)
	if err != nil {
		return err
	}
	v := &runView{chrome: h.chrome(r, run.Type+" run", "runs"), Run: run, Finished: run.Status.Finished()}
	v.Error = errMsg
	now := v.Now
	v.CanCancel, v.CanSignal = !v.Finished, !v.Finished
	v.CanRetry = run.Status == workflow.StatusFailed || run.Status == workflow.StatusCancelled
	v.CanFork = v.Finished
	if v.Forks, err = h.forksOf(ctx, run); err != nil {
		return err
	}
	v.Input, v.Output = prettyJSON(run.Input), prettyJSON(run.Output)
	if string(run.Input) == "null" {
		v.Input = ""
	}
	if len(run.Metadata) > 0 && string(run.Metadata) != "{}" && string(run.Metadata) != "null" {
		v.Metadata = prettyJSON(run.Metadata)
	}
	v.Created = momentIn(&run.CreatedAt, time.UTC, now)
	v.Started, v.Ended = momentIn(run.StartedAt, time.UTC, now), momentIn(run.FinishedAt, time.UTC, now)
	v.CancelRequested = momentIn(run.CancelRequestedAt, time.UTC, now)
	v.Duration = runDuration(run)
	if run.NextAttemptAt != nil {
		v.NextAttempt = durfmt.Relative(*run.NextAttemptAt, now)
	}
	v.Retry = wire.RetryText(run)
	if wire.IsHeld(run) {
		t, err := wire.ReadTenant(ctx, h.wf, run.Type, run.Tenant)
		if err != nil {
			return err
		}
		v.Held, v.HeldByRate = wire.HeldReason(run, t), run.Held == workflow.HeldTenantRate
		switch {
		case v.HeldByRate && t.RateSource != "":
			v.Held += " (" + rateSourceText(t.RateSource) + ")"
		case !v.HeldByRate && t.LimitSource != "":
			v.Held += " (" + limitSourceText(t.LimitSource) + ")"
		}
		v.TenantLink = h.prefix + "/tenants?" + url.Values{"type": {run.Type}, "tenant": {run.Tenant}}.Encode()
	}

	// The slot, in the schedule's zone.
	meta := slotOf(run)
	loc := time.UTC
	if zone, err := schedule.LoadZone(meta.Zone); err == nil {
		loc = zone
	}
	if run.ScheduleID != nil && h.sc != nil {
		s, err := h.sc.Get(ctx, schedule.ByID(*run.ScheduleID))
		switch {
		case errors.Is(err, schedule.ErrNotFound):
		case err != nil:
			return err
		default:
			v.Schedule = s
			_, loc = describe(s)
		}
	}
	v.FireAt = momentIn(run.FireAt, loc, now)
	v.Triggered, v.DSTNote, v.GrantSubject = meta.Trigger, meta.DSTNote, meta.GrantSubject
	if run.FireAt != nil && meta.Nominal != "" && meta.Nominal != run.FireAt.In(loc).Format(nominalLayout) {
		v.Nominal = meta.Nominal
	}

	for i := range run.Steps {
		st := &run.Steps[i]
		row := stepRow{
			Name: st.Name, Kind: st.Kind, Status: st.Status, Started: momentIn(&st.StartedAt, time.UTC, now),
			Attempts: st.Attempts, WakeAt: momentIn(st.WakeAt, time.UTC, now), ChildRunID: st.ChildRunID,
			Error: st.Error, Output: prettyJSON(st.Output),
		}
		if st.FinishedAt != nil {
			row.Duration = durfmt.Human(st.Duration())
		}
		if st.Kind != workflow.StepKindSleep && st.Status != workflow.StepStatusSleeping && st.Status != workflow.StepStatusWaiting {
			// A finished wait's wake time is the timeout it did not
			// reach: "wakes in 58m" on a completed step misleads. A
			// sleep's says when it was due, and stays.
			row.WakeAt = nil
		}
		if st.ChildRunID != nil {
			v.Children = append(v.Children, childRun{ID: *st.ChildRunID, Step: st.Name})
		}
		v.Steps = append(v.Steps, row)
	}

	v.Timeline = runTimeline(run, now)
	if !v.Finished {
		for _, st := range run.Steps {
			if st.Kind == workflow.StepKindSignal && st.Status == workflow.StepStatusWaiting {
				if name, ok := strings.CutPrefix(st.Name, "signal:"); ok {
					v.WaitsFor = name
				} else {
					v.WaitStep = st.Name
				}
				break
			}
		}
	}
	v.live(r, !v.Finished)

	v.SignalName = v.WaitsFor
	if r.Method == http.MethodPost {
		v.SignalName, v.SignalPayload = r.PostFormValue("name"), r.PostFormValue("payload")
	}
	h.render(w, r, status, runTemplate, v)
	return nil
}
