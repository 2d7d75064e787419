package riverui

import "slices"

// APIRoutes lists the JSON API's routes as "METHOD /path", for the test
// that checks openapi.json against the router.
func APIRoutes() []string {
	var out []string
	for _, route := range (&Handler{}).apiRoutes() {
		out = append(out, route.method+" "+route.path)
	}
	return out
}

// APIBodyFields maps each route that reads a JSON body ("METHOD /path") to
// the fields its body takes, including the read-only ones a PATCH takes
// and ignores, sorted.
func APIBodyFields() map[string][]string {
	fields := func(spec *bodySpec) []string {
		var out []string
		for _, m := range spec.members {
			out = append(out, m.name)
		}
		if spec.ignoreReadOnly {
			out = append(out, spec.readOnly...)
		}
		slices.Sort(out)
		return out
	}
	return map[string][]string{
		"POST /api/runs":                         fields((&runStartBody{}).spec()),
		"POST /api/runs/{id}/signal":             fields((&signalBody{}).spec()),
		"POST /api/runs/{id}/fork":               fields((&forkBody{}).spec()),
		"POST /api/runs/bulk":                    fields((&runBulkBody{}).spec()),
		"POST /api/schedules/bulk":               fields((&scheduleBulkBody{}).spec()),
		"POST /api/schedules":                    fields((&scheduleBody{}).spec(false)),
		"PATCH /api/schedules/{id}":              fields((&scheduleBody{}).spec(true)),
		"POST /api/schedules/{id}/pause":         fields((&pauseBody{}).spec()),
		"POST /api/schedules/{id}/resume":        fields((&resumeBody{}).spec()),
		"POST /api/schedules/{id}/trigger":       fields((&triggerBody{}).spec()),
		"POST /api/schedules/{id}/backfill":      fields((&backfillBody{}).spec()),
		"PUT /api/tenants/{type}/{tenant}/limit": fields((&tenantLimitBody{}).spec()),
		"POST /api/calendars":                    fields((&calendarBody{}).spec()),
		"POST /api/calendars/{name}/dates":       fields((&calendarDatesBody{}).spec()),
		"DELETE /api/calendars/{name}/dates":     fields((&calendarRemovalBody{}).spec()),
		"PUT /api/tenants/{type}/{tenant}/rate":  fields((&tenantRateBody{}).spec()),
		"POST /api/grants":                       fields((&grantBody{}).spec()),
		"POST /api/grants/{id}/revoke":           fields((&revokeBody{}).spec()),
	}
}
