package wire

import (
	"time"

	"github.com/tributary-go/tributary/schedule"
)

// Calendar is a holiday calendar: schedule.Calendar on the wire, every
// field present. In a listing, dates is [] and date_count says how many.
type Calendar struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Dates       []CalendarDate `json:"dates"`
	DateCount   int            `json:"date_count"`
	Schedules   int            `json:"schedules"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// CalendarDate is a date of a calendar: schedule.CalendarDate, its note ""
// for none.
type CalendarDate struct {
	Date string `json:"date"`
	Note string `json:"note"`
}

// NewCalendar is c on the wire.
func NewCalendar(c *schedule.Calendar) *Calendar {
	out := &Calendar{
		Name: c.Name, Description: c.Description, Dates: make([]CalendarDate, len(c.Dates)), DateCount: c.DateCount,
		Schedules: c.Schedules, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(),
	}
	for i, d := range c.Dates {
		out.Dates[i] = CalendarDate(d)
	}
	return out
}

// CalendarList is the listing of calendars.
type CalendarList struct {
	Calendars []*Calendar `json:"calendars"`
}

// NewCalendarList is cals on the wire.
func NewCalendarList(cals []*schedule.Calendar) *CalendarList {
	out := &CalendarList{Calendars: make([]*Calendar, 0, len(cals))}
	for _, c := range cals {
		out.Calendars = append(out.Calendars, NewCalendar(c))
	}
	return out
}
