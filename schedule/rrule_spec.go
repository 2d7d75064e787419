package schedule

// ParseRRule parses an RFC 5545 recurrence rule for a time zone: a
// "DTSTART:YYYYMMDDTHHMMSS" line, the local wall time of the first
// occurrence, and the rule, such as
//
//	DTSTART:20270105T090000
//	RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU
//
// (every other Tuesday at 09:00). See parseRRule for the parts it takes.
// The spec fires at the rule's wall times in zone, as a cron spec does: a
// rule of FREQ=DAILY or coarser is fixed-time and follows its DST policy
// (WithDST), a finer one follows real elapsed time; excluded dates
// (WithExclusions) apply as to any spec. zone is as for ParseSpec.
//
// The error is an *RRuleError or a *ZoneError; both match ErrInvalid.
func ParseRRule(text, zone string) (*Spec, error) {
	r, err := parseRRule(text)
	if err != nil {
		return nil, err
	}
	loc, err := LoadZone(zone)
	if err != nil {
		return nil, err
	}
	return &Spec{
		expr: r.String(), loc: loc, dst: DSTPolicy{Gap: DSTGapJump, Fold: DSTFoldFirst},
		rule: r, rrule: r, fixed: r.freq >= rrDaily,
	}, nil
}
