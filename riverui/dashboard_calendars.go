package riverui

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tributary-go/tributary/schedule"
)

// The calendars pages: GET /calendars lists the holiday calendars with a
// form to create one, GET /calendars/{name} shows one with its dates and
// the forms to add dates, remove one and delete the calendar. Each form
// changes the calendar through the call behind the JSON API's route, and
// a refused form shows its page again with the error and what was typed;
// nothing is written then.

// calendarsView is the calendars page.
type calendarsView struct {
	chrome
	Enabled   bool
	Calendars []*schedule.Calendar
	// The create form as posted, when it failed; FieldErrors holds the
	// error of the field it names.
	Form        calendarForm
	FieldErrors map[string]string
}

// calendarForm is the create form's fields.
type calendarForm struct {
	Name, Description, Dates string
}

// calendarView is the page of a calendar.
type calendarView struct {
	chrome
	C       *schedule.Calendar
	Updated *moment
	// Dates is the add form's textarea as posted, when it failed.
	Dates string
}

// calendarPath is the dashboard path of calendar name's page, with suffix.
func calendarPath(name, suffix string) string {
	return "/calendars/" + url.PathEscape(name) + suffix
}

func (h *Handler) calendarsPage(w http.ResponseWriter, r *http.Request) {
	if err := h.showCalendars(w, r, http.StatusOK, "", nil); err != nil {
		h.failPage(w, r, err)
	}
}

// showCalendars renders the calendars page with status and errMsg, and
// fieldErrs beside the create form's fields. When it returns an error, it
// has written nothing.
func (h *Handler) showCalendars(w http.ResponseWriter, r *http.Request, status int, errMsg string, fieldErrs map[string]string) error {
	v := &calendarsView{chrome: h.chrome(r, "Calendars", "calendars"), Enabled: h.sc != nil, FieldErrors: fieldErrs}
	v.Error = errMsg
	if r.Method == http.MethodPost {
		v.Form = calendarForm{Name: r.PostFormValue("name"), Description: r.PostFormValue("description"), Dates: r.PostFormValue("dates")}
	}
	if v.Enabled {
		var err error
		if v.Calendars, err = h.sc.ListCalendars(r.Context()); err != nil {
			return err
		}
	}
	h.render(w, r, status, calendarsTemplate, v)
	return nil
}

// createCalendarForm serves POST /calendars, a form of name, description
// and dates (see parseDateLines), and opens the new calendar's page.
func (h *Handler) createCalendarForm(w http.ResponseWriter, r *http.Request) {
	err := h.createCalendarFromForm(w, r)
	if err == nil {
		return
	}
	err = calendarError(err, r.PostFormValue("name"), false)
	status, msg := h.statusOf(err)
	var fieldErrs map[string]string
	if field := calendarFormField(err); field != "" {
		fieldErrs = map[string]string{field: msg}
	}
	if h.showCalendars(w, r, status, msg, fieldErrs) != nil {
		h.errorPage(w, r, status, msg)
	}
}

func (h *Handler) createCalendarFromForm(w http.ResponseWriter, r *http.Request) error {
	if h.sc == nil {
		return errNoSchedules
	}
	if err := parseForm(r); err != nil {
		return err
	}
	dates, err := parseDateLines(r.PostFormValue("dates"))
	if err != nil {
		return err
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	if _, err := h.sc.CreateCalendar(r.Context(), &schedule.CalendarParams{
		Name: name, Description: strings.TrimSpace(r.PostFormValue("description")), Dates: dates,
	}); err != nil {
		return err
	}
	h.seeOther(w, r, calendarPath(name, ""), "calendar-created", nil)
	return nil
}

// calendarFormField is the form field a calendar form's error is about:
// name, description or dates; "" for none.
func calendarFormField(err error) string {
	var (
		field    string
		apiErr   *apiError
		fieldErr *fieldError
	)
	switch {
	case errors.As(err, &fieldErr):
		field = fieldErr.field
	case errors.As(err, &apiErr):
		field = apiErr.field
	}
	field, _, _ = strings.Cut(field, "[")
	switch field {
	case "name", "description", "dates":
		return field
	}
	return ""
}

// calendarPageRoute serves a page or a form about the calendar {name}:
// without a schedule client, or when fn fails, it answers the calendar's
// page with the error, or an error page when the calendar cannot be shown.
func (h *Handler) calendarPageRoute(fn func(w http.ResponseWriter, r *http.Request, name string) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.sc == nil {
			h.failPage(w, r, errNoSchedules)
			return
		}
		name := r.PathValue("name")
		err := fn(w, r, name)
		if err == nil {
			return
		}
		status, msg := h.statusOf(calendarError(err, name, false))
		if status == http.StatusNotFound || h.showCalendar(w, r, name, status, msg) != nil {
			h.errorPage(w, r, status, msg)
		}
	})
}

func (h *Handler) calendarPage(w http.ResponseWriter, r *http.Request, name string) error {
	return h.showCalendar(w, r, name, http.StatusOK, "")
}

// showCalendar renders the page of calendar name with status and errMsg,
// and the add form as posted when the request is a POST. When it returns
// an error, it has written nothing.
func (h *Handler) showCalendar(w http.ResponseWriter, r *http.Request, name string, status int, errMsg string) error {
	cal, err := h.sc.GetCalendar(r.Context(), name)
	if err != nil {
		return err
	}
	v := &calendarView{chrome: h.chrome(r, "Calendar "+cal.Name, "calendars"), C: cal}
	v.Updated = momentIn(&cal.UpdatedAt, time.UTC, v.Now)
	v.Error = errMsg
	if r.Method == http.MethodPost {
		v.Dates = r.PostFormValue("dates")
	}
	h.render(w, r, status, calendarTemplate, v)
	return nil
}

// addDatesForm serves POST /calendars/{name}/dates, a form of dates (see
// parseDateLines).
func (h *Handler) addDatesForm(w http.ResponseWriter, r *http.Request, name string) error {
	if err := parseForm(r); err != nil {
		return err
	}
	dates, err := parseDateLines(r.PostFormValue("dates"))
	if err != nil {
		return err
	}
	if len(dates) == 0 {
		return badField("dates", "no dates given; write one date a line, such as 2027-12-24 Christmas Eve, or a range such as 2027-12-24..2027-12-26")
	}
	if _, err := h.addDates(r.Context(), name, dates); err != nil {
		return err
	}
	h.seeOther(w, r, calendarPath(name, ""), "dates-added", nil)
	return nil
}

// removeDateForm serves POST /calendars/{name}/remove, a form of date.
func (h *Handler) removeDateForm(w http.ResponseWriter, r *http.Request, name string) error {
	if err := parseForm(r); err != nil {
		return err
	}
	date := strings.TrimSpace(r.PostFormValue("date"))
	if date == "" {
		return badField("date", "no date given; choose the date to remove from the calendar's list")
	}
	if _, err := h.sc.RemoveCalendarDates(r.Context(), name, []string{date}); err != nil {
		return err
	}
	h.seeOther(w, r, calendarPath(name, ""), "date-removed", nil)
	return nil
}

// deleteCalendarForm serves POST /calendars/{name}/delete: refused, with
// the reason on the calendar's page, while schedules exclude it.
func (h *Handler) deleteCalendarForm(w http.ResponseWriter, r *http.Request, name string) error {
	if err := parseForm(r); err != nil {
		return err
	}
	if err := h.sc.DeleteCalendar(r.Context(), name); err != nil {
		return err
	}
	h.seeOther(w, r, "/calendars", "calendar-deleted", nil)
	return nil
}

// parseDateLines reads the dates of a form's textarea, in the format of
// the CLI's --file (schedule.ParseCalendarLines).
func parseDateLines(text string) ([]schedule.CalendarDate, error) {
	dates, err := schedule.ParseCalendarLines(text)
	if err != nil {
		return nil, inField("dates", badRequest("%v; write one date a line as YYYY-MM-DD, such as 2027-12-24, or a range such as 2027-12-24..2027-12-26, then an optional note", err))
	}
	return dates, nil
}

// calendarNames are the names of the calendars, for the schedule forms.
func (h *Handler) calendarNames(ctx context.Context) ([]string, error) {
	cals, err := h.sc.ListCalendars(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(cals))
	for i, c := range cals {
		names[i] = c.Name
	}
	return names, nil
}

// onExcludedPolicies are the policies for excluded dates, as the forms
// list them: the default first.
var onExcludedPolicies = []schedule.OnExcluded{schedule.ExcludedSkip, schedule.ExcludedNextBusinessDay}

// describeOnExcluded says what a slot on an excluded date of s does.
func describeOnExcluded(on schedule.OnExcluded) string {
	if on == schedule.ExcludedNextBusinessDay {
		return "a slot on one of their dates runs at the same wall time on the next business day (Monday to Friday, not excluded)"
	}
	return "a slot on one of their dates does not run; it is recorded as skipped, naming the date and the calendar"
}
