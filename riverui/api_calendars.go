package riverui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

// Holiday calendars (schedule.Calendar) on the wire: GET and POST
// /api/calendars list and create them, GET and DELETE
// /api/calendars/{name} read and delete one, and POST and DELETE
// /api/calendars/{name}/dates add and remove its dates. Schedules name
// the calendars they exclude in "calendars" (see scheduleBody).

// calendarDateJSON is a date of a body that adds dates: wire.CalendarDate,
// read as a body's fields are read.
type calendarDateJSON wire.CalendarDate

// UnmarshalJSON reads a date of a body as a body's fields are read: an
// unknown or null member, or a value of the wrong kind, is a *memberError
// naming it.
func (d *calendarDateJSON) UnmarshalJSON(raw []byte) error {
	var date, note opt[string]
	return readObject(raw, calendarDateWant, "a date", "date and note", []member{{name: "date", dst: &date}, {name: "note", dst: &note}}, func() {
		d.Date, d.Note = date.value(), note.value()
	})
}

// calendarDateWant is what an item of "dates" takes.
const calendarDateWant = `a JSON object such as {"date": "2027-12-24", "note": "Christmas Eve"}`

// calendarDateList is the "dates" of a body that adds dates.
type calendarDateList []calendarDateJSON

// calendarDateListWant is what "dates" takes.
const calendarDateListWant = `an array of dates such as [{"date": "2027-12-24", "note": "Christmas Eve"}]`

// UnmarshalJSON reads the dates, naming the item an error is about:
// "[2].note".
func (l *calendarDateList) UnmarshalJSON(raw []byte) error {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return &wire.ValueError{Msg: fmt.Sprintf("%s is not %s", clip(raw), calendarDateListWant)}
	}
	out := make(calendarDateList, len(items))
	for i, item := range items {
		if err := json.Unmarshal(item, &out[i]); err != nil {
			var me *memberError
			var ve *wire.ValueError
			switch {
			case errors.As(err, &me):
				return &memberError{fmt.Sprintf("[%d].%s", i, me.member), me.msg}
			case errors.As(err, &ve):
				return &memberError{fmt.Sprintf("[%d]", i), ve.Msg}
			}
			return &memberError{fmt.Sprintf("[%d]", i), fmt.Sprintf("%s is not %s", clip(item), calendarDateWant)}
		}
	}
	*l = out
	return nil
}

// calendarBody is the body of POST /api/calendars.
type calendarBody struct {
	Name, Description opt[string]
	Dates             opt[calendarDateList]
}

// calendarReadOnly are the fields of a calendar that only the server sets.
var calendarReadOnly = []string{"date_count", "schedules", "created_at", "updated_at"}

func (b *calendarBody) spec() *bodySpec {
	return &bodySpec{what: "a calendar", required: true, readOnly: calendarReadOnly, members: []member{
		{name: "name", dst: &b.Name}, {name: "description", dst: &b.Description}, {name: "dates", dst: &b.Dates},
	}}
}

// calendarDatesBody is the body of POST /api/calendars/{name}/dates.
type calendarDatesBody struct {
	Dates opt[calendarDateList]
}

func (b *calendarDatesBody) spec() *bodySpec {
	return &bodySpec{what: "the dates to add", required: true, members: []member{{name: "dates", dst: &b.Dates}}}
}

// calendarRemovalBody is the body of DELETE /api/calendars/{name}/dates.
type calendarRemovalBody struct {
	Dates opt[[]string]
}

func (b *calendarRemovalBody) spec() *bodySpec {
	return &bodySpec{what: "the dates to remove", required: true, members: []member{{name: "dates", dst: &b.Dates}}}
}

// calendarDates is dates as the Go API takes them.
func calendarDates(dates calendarDateList) []schedule.CalendarDate {
	out := make([]schedule.CalendarDate, len(dates))
	for i, d := range dates {
		out[i] = schedule.CalendarDate(d)
	}
	return out
}

// calendarRoute serves a calendar route: it answers errNoSchedules without
// a schedule client, and an error of fn in JSON, in the calendars' words
// (calendarError).
func (h *Handler) calendarRoute(fn func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.sc == nil {
			h.failJSON(w, r, errNoSchedules)
			return
		}
		if err := fn(w, r); err != nil {
			h.failJSON(w, r, calendarError(err, r.PathValue("name"), true))
		}
	})
}

func (h *Handler) listCalendars(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	cals, err := h.sc.ListCalendars(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewCalendarList(cals))
	return nil
}

// createCalendar answers POST /api/calendars, {"name", "description",
// "dates": [{"date": "2027-12-24", "note": "…"}]}: 201 and the calendar. A
// name taken is a 400 naming name; nothing is written.
func (h *Handler) createCalendar(w http.ResponseWriter, r *http.Request) error {
	var b calendarBody
	if _, err := b.spec().read(r); err != nil {
		return err
	}
	if !b.Name.set {
		return badField("name", `is missing; name the calendar: {"name": "us-holidays", "dates": [{"date": "2027-12-24", "note": "Christmas Eve"}]}`)
	}
	cal, err := h.sc.CreateCalendar(r.Context(), &schedule.CalendarParams{
		Name: b.Name.value(), Description: b.Description.value(), Dates: calendarDates(b.Dates.value()),
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, wire.NewCalendar(cal))
	return nil
}

func (h *Handler) getCalendar(w http.ResponseWriter, r *http.Request) error {
	cal, err := h.sc.GetCalendar(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewCalendar(cal))
	return nil
}

// addCalendarDates answers POST /api/calendars/{name}/dates, {"dates":
// [{"date": "2027-12-24", "note": "…"}]}: the calendar with them. A date
// it has keeps one entry, with the new note.
func (h *Handler) addCalendarDates(w http.ResponseWriter, r *http.Request) error {
	var b calendarDatesBody
	if _, err := b.spec().read(r); err != nil {
		return err
	}
	if len(b.Dates.value()) == 0 {
		return badField("dates", `is missing or empty; send the dates to add: {"dates": [{"date": "2027-12-24", "note": "Christmas Eve"}]}`)
	}
	cal, err := h.addDates(r.Context(), r.PathValue("name"), calendarDates(b.Dates.value()))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewCalendar(cal))
	return nil
}

// addDates adds dates to calendar name. schedule.Client.AddCalendarDates
// fails with a foreign key violation, not ErrCalendarNotFound, for a
// calendar that does not exist: asking first answers that with a 404
// rather than a 500 (one deleted in between is still a 500).
func (h *Handler) addDates(ctx context.Context, name string, dates []schedule.CalendarDate) (*schedule.Calendar, error) {
	if _, err := h.sc.GetCalendar(ctx, name); err != nil {
		return nil, err
	}
	return h.sc.AddCalendarDates(ctx, name, dates)
}

// removeCalendarDates answers DELETE /api/calendars/{name}/dates,
// {"dates": ["2027-12-24"]}: the calendar without them. A date it does not
// have is no error.
func (h *Handler) removeCalendarDates(w http.ResponseWriter, r *http.Request) error {
	var b calendarRemovalBody
	if _, err := b.spec().read(r); err != nil {
		return err
	}
	if len(b.Dates.value()) == 0 {
		return badField("dates", `is missing or empty; send the dates to remove: {"dates": ["2027-12-24"]}`)
	}
	cal, err := h.sc.RemoveCalendarDates(r.Context(), r.PathValue("name"), b.Dates.value())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewCalendar(cal))
	return nil
}

// deleteCalendar answers DELETE /api/calendars/{name}: 204, or 409 while
// schedules exclude the calendar.
func (h *Handler) deleteCalendar(w http.ResponseWriter, r *http.Request) error {
	if err := h.sc.DeleteCalendar(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// calendarError is err of a calendar call about calendar name in the
// words of the API (api) or of the dashboard: a calendar not found is a
// 404 that says where the calendars are listed, one in use a 409 that says
// which schedules exclude it and how to free it, and a validation error
// names its field as the API's bodies do ("dates[2].note").
func calendarError(err error, name string, api bool) error {
	var (
		inUse   *schedule.CalendarInUseError
		invalid *schedule.ValidationError
	)
	switch {
	case errors.Is(err, schedule.ErrCalendarNotFound):
		where := "GET /api/calendars lists the calendars"
		if !api {
			where = "the Calendars page lists them"
		}
		return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("there is no calendar %q; %s", name, where)}
	case errors.As(err, &inUse):
		todo := `remove it from their "calendars" first (PATCH /api/schedules/{id}), then delete it`
		if !api {
			todo = "remove it from their calendars first (each schedule's Edit page), then delete it"
		}
		return &apiError{status: http.StatusConflict, msg: fmt.Sprintf("calendar %q is excluded by %d schedule%s (%s); %s",
			inUse.Name, inUse.Schedules, plural(inUse.Schedules), strings.Join(inUse.IDs, ", "), todo)}
	case errors.As(err, &invalid) && invalid.Field != "CalendarParams":
		parts := strings.Split(invalid.Field, ".")
		for i, p := range parts {
			parts[i] = snakeCase(p)
		}
		field := strings.Join(parts, ".")
		return &apiError{status: http.StatusBadRequest, msg: "invalid " + field + ": " + invalid.Problem, field: field}
	}
	return err
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
