package schedule

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// Holiday calendars.
//
// A calendar is a named set of local dates, stored in Postgres, that
// schedules exclude (Params.Calendars): a slot whose nominal local date a
// schedule's calendar holds is skipped or moved to the next business day,
// as Params.OnExcluded says (see WithExclusions for the rules). A change
// to a calendar applies to the slots not yet fired: the schedules that
// exclude it get their next slot again, in the same transaction.

// Calendar is a holiday calendar as stored.
type Calendar struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Dates       []CalendarDate `json:"dates"`
	// DateCount is how many dates the calendar holds (ListCalendars
	// leaves Dates empty).
	DateCount int `json:"date_count"`
	// Schedules is how many schedules exclude the calendar.
	Schedules int       `json:"schedules"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// CalendarDate is a date of a calendar: its local date, "2026-12-25", and
// a note such as "Christmas Day". Given to CreateCalendar and
// AddCalendarDates (and RemoveCalendarDates' dates), Date may be a range,
// "2026-12-24..2026-12-26", its first and last day, at most a year apart:
// each of its days is a date of the calendar, with the note.
type CalendarDate struct {
	Date string `json:"date"`
	Note string `json:"note,omitempty"`
}

// CalendarParams are a new calendar's name, description and dates.
type CalendarParams struct {
	// Name names the calendar: 1 to 100 lowercase letters, digits, dots,
	// dashes and underscores, beginning with a letter or digit, such as
	// "us-holidays".
	Name        string
	Description string
	// Dates are its dates; a date given twice keeps its last note.
	Dates []CalendarDate
}

// MaxCalendarDates bounds the dates one call adds to a calendar.
const MaxCalendarDates = 10_000

var calendarNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`)

// checkCalendarName is the *ValidationError of a bad calendar name.
func checkCalendarName(field, name string) error {
	if !calendarNameRE.MatchString(name) {
		return &ValidationError{Field: field, Problem: fmt.Sprintf(
			"%q is not a calendar name; use 1 to 100 lowercase letters, digits, '.', '-' and '_', beginning with a letter or digit, such as us-holidays", name)}
	}
	return nil
}

// parseCalendarDates checks dates and returns their days (00:00 UTC) and
// notes, the last note of a date given twice.
func parseCalendarDates(field string, dates []CalendarDate) ([]time.Time, []string, error) {
	if len(dates) > MaxCalendarDates {
		return nil, nil, &ValidationError{Field: field, Problem: fmt.Sprintf("holds %d dates; add at most %d at a time", len(dates), MaxCalendarDates)}
	}
	byDay := map[time.Time]string{}
	for i, d := range dates {
		first, last, err := dateSpan(d.Date)
		if err != nil {
			hint := "use YYYY-MM-DD, such as 2026-12-25, or a range such as 2026-12-24..2026-12-26"
			if err.ranged {
				hint = "write a range of at most a year, first to last, such as 2026-12-24..2026-12-26"
			}
			return nil, nil, &ValidationError{Field: fmt.Sprintf("%s[%d]", field, i), Problem: err.Error() + "; " + hint}
		}
		if len(d.Note) > 200 {
			return nil, nil, &ValidationError{Field: fmt.Sprintf("%s[%d].Note", field, i), Problem: fmt.Sprintf("is %d bytes, the limit is 200", len(d.Note))}
		}
		for day := first; !day.After(last); day = day.AddDate(0, 0, 1) {
			byDay[day] = d.Note
		}
	}
	days := make([]time.Time, 0, len(byDay))
	for day := range byDay {
		days = append(days, day)
	}
	slices.SortFunc(days, time.Time.Compare)
	notes := make([]string, len(days))
	for i, day := range days {
		notes[i] = byDay[day]
	}
	return days, notes, nil
}

// dateError is what is wrong with the text of a date or a range of dates.
type dateError struct {
	text, problem string
	ranged        bool // the text is a range: its dates are wrong way round, or over a year apart
}

func (e *dateError) Error() string { return fmt.Sprintf("%q %s", e.text, e.problem) }

// dateSpan reads a date, "2027-12-24", or a range of dates, first to last,
// "2027-12-24..2027-12-26", of at most a year, and returns its first and
// last days (00:00 UTC).
func dateSpan(text string) (first, last time.Time, err *dateError) {
	text = strings.TrimSpace(text)
	from, to, ranged := strings.Cut(text, "..")
	first, perr := time.Parse(time.DateOnly, strings.TrimSpace(from))
	if perr != nil {
		return first, last, &dateError{text: text, problem: "is not a date"}
	}
	last = first
	if ranged {
		if last, perr = time.Parse(time.DateOnly, strings.TrimSpace(to)); perr != nil || last.Before(first) {
			return first, last, &dateError{text: text, problem: "is not a range of dates, first to last", ranged: true}
		}
		if last.Sub(first) > 366*24*time.Hour {
			return first, last, &dateError{text: text, problem: "is longer than a year", ranged: true}
		}
	}
	return first, last, nil
}

// ParseCalendarLines reads a list of dates as people write them, the
// format of the tributary command's --file and of the dashboard's dates
// form: a date (YYYY-MM-DD) or a range of dates, first to last
// (2027-12-24..2027-12-26, at most a year), a line, then an optional note;
// blank lines and lines beginning with # are skipped. A range gives one
// CalendarDate per day, each with the line's note. The error names the
// line and says what is wrong with it.
func ParseCalendarLines(text string) ([]CalendarDate, error) {
	var out []CalendarDate
	for n, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		date, note, _ := strings.Cut(strings.ReplaceAll(line, "\t", " "), " ")
		days, err := ExpandCalendarDate(strings.TrimSuffix(date, ","))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		for _, day := range days {
			out = append(out, CalendarDate{Date: day, Note: strings.TrimSpace(note)})
		}
	}
	return out, nil
}

// ExpandCalendarDate returns the days a CalendarDate's Date names, as
// YYYY-MM-DD: the date itself, or each day of a range "2027-12-24..2027-12-26"
// (first to last, at most a year). The error quotes the text and says what
// is wrong with it ("is not a date", "is not a range of dates, first to
// last", "is longer than a year").
func ExpandCalendarDate(text string) ([]string, error) {
	first, last, err := dateSpan(text)
	if err != nil {
		return nil, err
	}
	var days []string
	for day := first; !day.After(last); day = day.AddDate(0, 0, 1) {
		days = append(days, day.Format(time.DateOnly))
	}
	return days, nil
}

// ErrCalendarNotFound is returned for a calendar that does not exist.
var ErrCalendarNotFound = errors.New("schedule: calendar not found")

// CalendarInUseError reports a calendar that DeleteCalendar refuses to
// delete: schedules exclude it, and deleting it would change when they
// run. Remove it from them first (Update with Calendars).
type CalendarInUseError struct {
	Name      string
	Schedules int      // how many exclude it
	IDs       []string // some of them
}

func (e *CalendarInUseError) Error() string {
	return fmt.Sprintf("schedule: calendar %q is excluded by %d schedules (%s); remove it from them first (tributary schedule update <id> --calendars …), then delete it",
		e.Name, e.Schedules, strings.Join(e.IDs, ", "))
}

// CreateCalendar creates a calendar with its dates. A name taken is a
// *ValidationError naming Name; nothing is written.
func (c *Client) CreateCalendar(ctx context.Context, p *CalendarParams) (*Calendar, error) {
	return c.calendarTx(ctx, func(tx pgx.Tx) (*Calendar, error) { return c.CreateCalendarTx(ctx, tx, p) })
}

// CreateCalendarTx is like CreateCalendar, within tx.
func (c *Client) CreateCalendarTx(ctx context.Context, tx pgx.Tx, p *CalendarParams) (*Calendar, error) {
	if p == nil {
		return nil, &ValidationError{Field: "CalendarParams", Problem: "is nil"}
	}
	if err := checkCalendarName("Name", p.Name); err != nil {
		return nil, err
	}
	if len(p.Description) > 1000 {
		return nil, &ValidationError{Field: "Description", Problem: fmt.Sprintf("is %d bytes, the limit is 1000", len(p.Description))}
	}
	days, notes, err := parseCalendarDates("Dates", p.Dates)
	if err != nil {
		return nil, err
	}
	if err := c.q.InsertCalendar(ctx, tx, p.Name, p.Description, c.sqlNow()); err != nil {
		if errors.Is(err, engine.ErrCalendarExists) {
			return nil, &ValidationError{Field: "Name", Problem: fmt.Sprintf("calendar %q exists already; add dates to it (AddCalendarDates), or pick another name", p.Name)}
		}
		return nil, err
	}
	if len(days) > 0 {
		if _, err := c.q.AddCalendarDays(ctx, tx, p.Name, days, notes, c.sqlNow()); err != nil {
			return nil, err
		}
	}
	return c.GetCalendarTx(ctx, tx, p.Name)
}

// AddCalendarDates adds dates to a calendar (a date it has keeps one entry,
// with the new note). The schedules that exclude it get their next slot
// again: a slot on a date added does not run as it was. ErrCalendarNotFound
// when there is none.
func (c *Client) AddCalendarDates(ctx context.Context, name string, dates []CalendarDate) (*Calendar, error) {
	return c.calendarTx(ctx, func(tx pgx.Tx) (*Calendar, error) { return c.AddCalendarDatesTx(ctx, tx, name, dates) })
}

// AddCalendarDatesTx is like AddCalendarDates, within tx.
func (c *Client) AddCalendarDatesTx(ctx context.Context, tx pgx.Tx, name string, dates []CalendarDate) (*Calendar, error) {
	days, notes, err := parseCalendarDates("dates", dates)
	if err != nil {
		return nil, err
	}
	found, err := c.q.AddCalendarDays(ctx, tx, name, days, notes, c.sqlNow())
	return c.calendarChangedTx(ctx, tx, name, found, err)
}

// calendarChangedTx ends a change to calendar name's dates (found: the
// calendar exists, err: the change's error): the schedules that exclude
// it get their next slot again, and it returns the calendar as changed.
func (c *Client) calendarChangedTx(ctx context.Context, tx pgx.Tx, name string, found bool, err error) (*Calendar, error) {
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %q", ErrCalendarNotFound, name)
	}
	if err := c.recalendarTx(ctx, tx, name); err != nil {
		return nil, err
	}
	return c.GetCalendarTx(ctx, tx, name)
}

// RemoveCalendarDates removes dates ("2026-12-25") from a calendar; the
// schedules that exclude it get their next slot again.
// ErrCalendarNotFound when there is none.
func (c *Client) RemoveCalendarDates(ctx context.Context, name string, dates []string) (*Calendar, error) {
	return c.calendarTx(ctx, func(tx pgx.Tx) (*Calendar, error) { return c.RemoveCalendarDatesTx(ctx, tx, name, dates) })
}

// RemoveCalendarDatesTx is like RemoveCalendarDates, within tx.
func (c *Client) RemoveCalendarDatesTx(ctx context.Context, tx pgx.Tx, name string, dates []string) (*Calendar, error) {
	given := make([]CalendarDate, len(dates))
	for i, d := range dates {
		given[i] = CalendarDate{Date: d}
	}
	days, _, err := parseCalendarDates("dates", given)
	if err != nil {
		return nil, err
	}
	found, err := c.q.RemoveCalendarDays(ctx, tx, name, days, c.sqlNow())
	return c.calendarChangedTx(ctx, tx, name, found, err)
}

// GetCalendar reads a calendar with its dates; ErrCalendarNotFound when
// there is none.
func (c *Client) GetCalendar(ctx context.Context, name string) (*Calendar, error) {
	return c.GetCalendarTx(ctx, nil, name)
}

// GetCalendarTx is like GetCalendar, within tx (nil: the pool).
func (c *Client) GetCalendarTx(ctx context.Context, tx pgx.Tx, name string) (*Calendar, error) {
	rows, err := c.q.Calendars(ctx, c.db(tx), []string{name})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrCalendarNotFound, name)
	}
	return calendarOf(&rows[0]), nil
}

// ListCalendars lists every calendar, by name, without its dates (Dates
// is empty, DateCount says how many; see GetCalendar).
func (c *Client) ListCalendars(ctx context.Context) ([]*Calendar, error) {
	rows, err := c.q.AllCalendars(ctx, c.rt.Pool())
	if err != nil {
		return nil, err
	}
	counts, err := c.q.CalendarDayCounts(ctx, c.rt.Pool())
	if err != nil {
		return nil, err
	}
	out := make([]*Calendar, len(rows))
	for i := range rows {
		out[i] = calendarOf(&rows[i])
		out[i].DateCount = counts[rows[i].Name].Days
	}
	return out, nil
}

// DeleteCalendar deletes a calendar and its dates; a *CalendarInUseError
// while schedules exclude it, ErrCalendarNotFound when there is none.
func (c *Client) DeleteCalendar(ctx context.Context, name string) error {
	_, err := c.calendarTx(ctx, func(tx pgx.Tx) (*Calendar, error) { return nil, c.DeleteCalendarTx(ctx, tx, name) })
	return err
}

// DeleteCalendarTx is like DeleteCalendar, within tx.
func (c *Client) DeleteCalendarTx(ctx context.Context, tx pgx.Tx, name string) error {
	cal, err := c.GetCalendarTx(ctx, tx, name)
	if err != nil {
		return err
	}
	if cal.Schedules > 0 {
		ids, err := c.q.CalendarSchedules(ctx, tx, name, 5)
		if err != nil {
			return err
		}
		inUse := &CalendarInUseError{Name: name, Schedules: cal.Schedules}
		for _, id := range ids {
			inUse.IDs = append(inUse.IDs, id.String())
		}
		return inUse
	}
	_, err = c.q.DeleteCalendar(ctx, tx, name)
	return err
}

func (c *Client) calendarTx(ctx context.Context, fn func(tx pgx.Tx) (*Calendar, error)) (*Calendar, error) {
	var cal *Calendar
	err := pgx.BeginFunc(ctx, c.rt.Pool(), func(tx pgx.Tx) error {
		var err error
		cal, err = fn(tx)
		return err
	})
	return cal, err
}

func calendarOf(r *engine.Calendar) *Calendar {
	cal := &Calendar{Name: r.Name, Description: r.Description, Schedules: r.Schedules, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Dates: make([]CalendarDate, len(r.Days)), DateCount: len(r.Days)}
	for i, day := range r.Days {
		cal.Dates[i] = CalendarDate{Date: day.Format(time.DateOnly), Note: r.Notes[i]}
	}
	return cal
}

// calendarDates reads the dates of the calendars names, as excluded
// dates by calendar; a name without a calendar is absent.
func (c *Client) calendarDates(ctx context.Context, db engine.DBTX, names []string) (map[string][]ExcludedDate, error) {
	out := map[string][]ExcludedDate{}
	if len(names) == 0 {
		return out, nil
	}
	rows, err := c.q.Calendars(ctx, db, names)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		dates := make([]ExcludedDate, len(r.Days))
		for i, day := range r.Days {
			dates[i] = ExcludedDate{Date: day, Calendar: r.Name}
		}
		out[r.Name] = dates
	}
	return out, nil
}

// recalendarTx gives the running schedules that exclude calendar name
// their next slot again, after its dates changed: from their pending slot
// (or now, when that is later), the first slot of their spec as it is
// now. A schedule whose next slot moves gets the new slot's fire job; the
// old one finds itself stale and fires nothing.
func (c *Client) recalendarTx(ctx context.Context, tx pgx.Tx, name string) error {
	rows, err := schedulesOf(c.q.LockCalendarSchedulesTx(ctx, tx, name))
	if err != nil || len(rows) == 0 {
		return err
	}
	if err := c.loadCalendarsTx(ctx, tx, rows...); err != nil {
		return err
	}
	now := c.now()
	var ids []uuid.UUID
	var next []time.Time
	for _, s := range rows {
		spec, err := s.Spec()
		if err != nil {
			continue // the fire path pauses a schedule that no longer parses, saying why
		}
		from := now
		if s.NextFireAt.Before(from) {
			from = s.NextFireAt.Add(-time.Second) // overdue: the pending slot stays due if it still is one
		}
		first, ok := firstSlot(spec, deref(s.StartAt), deref(s.EndAt), from)
		if !ok || first.Equal(*s.NextFireAt) {
			continue
		}
		ids, next = append(ids, s.ID), append(next, first)
	}
	if len(ids) == 0 {
		return nil
	}
	if err := c.q.SetNextFireTx(ctx, tx, ids, next, c.sqlNow()); err != nil {
		return err
	}
	return c.seedTx(ctx, tx, next...)
}

// loadCalendars reads the dates of the calendars of schedules (one query
// for all of them) into them, for Spec.
func (c *Client) loadCalendarsTx(ctx context.Context, db engine.DBTX, schedules ...*Schedule) error {
	var names []string
	for _, s := range schedules {
		for _, name := range s.Calendars {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		for _, s := range schedules {
			s.calendarsRead = true
		}
		return nil
	}
	dates, err := c.calendarDates(ctx, db, names)
	if err != nil {
		return err
	}
	for _, s := range schedules {
		s.excluded = nil
		for _, name := range s.Calendars {
			s.excluded = append(s.excluded, dates[name]...)
		}
		s.calendarsRead = true
	}
	return nil
}

// checkCalendars checks the calendars a schedule names against their
// dates as read (cal), and returns the names, each once, in order, and
// their dates. A name without a calendar is a *ValidationError.
func checkCalendars(names []string, cal map[string][]ExcludedDate) ([]string, []ExcludedDate, error) {
	var out []string
	var dates []ExcludedDate
	for _, name := range names {
		if slices.Contains(out, name) {
			continue
		}
		if err := checkCalendarName("Calendars", name); err != nil {
			return nil, nil, err
		}
		d, ok := cal[name]
		if !ok {
			return nil, nil, &ValidationError{Field: "Calendars", Problem: fmt.Sprintf(
				"there is no calendar %q; create it first (tributary calendar create %s, or Client.CreateCalendar)", name, name)}
		}
		out, dates = append(out, name), append(dates, d...)
	}
	if out == nil {
		out = []string{}
	}
	return out, dates, nil
}
