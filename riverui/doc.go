// Package riverui serves Tributary's operator surface over HTTP: River UI
// (riverqueue.com/riverui) for River's jobs and queues, Tributary's
// dashboard for schedules, runs and their steps, and a JSON API, side by
// side under one path prefix.
//
//	h, err := riverui.New(wf, schedules, &riverui.Config{Prefix: "/ops", Token: os.Getenv("TRIBUTARY_TOKEN")})
//	if err != nil { … }
//	if err := h.Start(ctx); err != nil { … } // River UI's background services
//	http.ListenAndServe("127.0.0.1:8080", h)
//
// # Dashboard
//
// Server-rendered HTML pages under Config.Prefix, which need no
// JavaScript; a page that shows a run in flight loads one small script
// that reloads it every 5 s (not while the operator edits a form):
//
//	GET  /                               the overview: in-flight runs by status, the last hour's runs by status and failures
//	GET  /overview                       redirects to / (where the overview was)
//	GET  /schedules                      schedules: ?owner=&workflow=&paused=any|yes|no&after=&limit=
//	GET  /schedules/new                  a form to create a schedule
//	POST /schedules/new                  form: the edit form's fields, key, paused, pause_note
//	GET  /schedules/{id}                 a schedule: a summary, its run ledger (?after=&limit=), spec, key and origin, next 10 fire times
//	GET  /schedules/{id}/edit            a form to change its spec, filled in with it
//	GET  /schedules/{id}/delete          asks to confirm deleting it
//	POST /schedules/{id}/edit            form: name, workflow, description, owner, tenant, rule=cron|rrule, cron or
//	                                     rrule (DTSTART and RRULE lines; "DTSTART:…;RRULE:…" too), time_zone, start_at,
//	                                     end_at, overlap, catch_up, catch_up_window, dst_gap, dst_fold, calendars (one
//	                                     a calendar checked, with calendars_field), on_excluded, max_attempts,
//	                                     priority, queue, timeout, grant_id, input (JSON), retry_delay or retry_base,
//	                                     retry_factor and retry_max, retry_jitter (percent; with retry_field)
//	POST /schedules/{id}/pause           form: note
//	POST /schedules/{id}/resume          form: missed=skip|latest|backfill
//	POST /schedules/{id}/trigger
//	POST /schedules/{id}/backfill        form: from, to, overlap
//	POST /schedules/{id}/delete
//	GET  /calendars                      holiday calendars: their dates and the schedules that exclude them; a form to create one
//	POST /calendars                      form: name, description, dates (a date or a range 2027-12-24..2027-12-26 a line, then a note)
//	GET  /calendars/{name}               a calendar's dates and notes, forms to add dates, remove one, delete it
//	POST /calendars/{name}/dates         form: dates, as above
//	POST /calendars/{name}/remove        form: date
//	POST /calendars/{name}/delete        refused, with the reason, while schedules exclude it
//	GET  /grants                         execution grants: ?subject=&revoked=1&after=; a form to create one
//	POST /grants                         form: subject, scopes (separated by commas, spaces or lines), expires_in
//	                                     (a Go duration) or expires_at (UTC)
//	GET  /grants/{id}                    a grant and the schedules under it (a warning beside each one it skips),
//	                                     a form to revoke it
//	POST /grants/{id}/revoke             form: reason; refused, with the reason, for a grant revoked already
//	GET  /runs                           runs: ?q=&from=&to=&type=&status=&tenant=&schedule=&after=&limit=
//	GET  /runs/{id}                      a run: input, output or error, its steps on a time axis
//	POST /runs/{id}/cancel
//	POST /runs/{id}/retry
//	POST /runs/{id}/signal               form: name, payload (JSON)
//	GET  /tenants                        the tenants of limited and rated workflow types: ?type=&tenant=&limit=
//	GET  /tenants/{name}                 an owner's page: the schedules it owns and the recent runs of the tenant
//	GET  /search                         ?q=: a whole run or schedule id, or owner/key, opens its page; else schedules
//	                                     it owns or keys, runs whose id starts with it, or with it as idempotency key or tenant
//	POST /tenants/limit                  form: type, tenant, max_running; clear removes the tenant's own limit
//	POST /tenants/rate                   form: type, tenant, limit, per (a Go duration); clear removes the tenant's own rate
//	GET  /login, POST /login             form: token, next
//	POST /logout
//
// A schedule's {id} is its id or its key (schedule.Params.Key): a segment
// that parses as a UUID is an id, anything else a key, looked up within
// the owner that ?owner= names (absent: owner ""), as in
// /schedules/digest:user@42?owner=acme and
// /schedules/digest:user@42/edit?owner=acme. An id with a non-empty owner=
// is refused (400): an id names the schedule alone.
//
// The dashboard links a schedule that has a key by its key URL, which
// outlives the id of a declared schedule deleted and declared again, and
// one without a key by its id; so does the key "new", whose URL is the new
// schedule form, and so do the runs pages, which know a run's schedule by
// its id only. The schedules list shows each key; a schedule's page shows
// its key and where it comes from (schedule.Schedule.Origin), and for a
// schedule a service declares in its code (schedule.Client.Declare) says,
// as its edit page does, that an edit lasts only until the service's next
// declaration puts the code's spec back.
//
// A form's action redirects (303) back to its page, under the URL it was
// posted to, with a flash notice, or to the schedules after a delete; when
// it fails, the page is shown again with the error (the edit, backfill and
// signal forms as typed), under the status the JSON API would answer, and
// nothing is written.
//
// The runs page's q= is a run id, an idempotency key (of any type unless
// type= names one; "key:" before one that holds "="), or key=value terms
// that the runs' metadata must all hold (a value that reads as JSON is
// that value, 42 or "42", else text); from= and to= bound the runs'
// creation time, in UTC; tenant= keeps one tenant's runs. Each is served
// by an index (see workflow.ListParams). The runs pages show each run's
// tenant, and a schedule's page the tenant its runs carry (its tenant, or
// its owner's, which it says).
//
// A run held back by its tenant's limit (workflow.DefineOpts.TenantLimit)
// is marked held on the runs pages, and its page says why it waits:
// "Waiting: acme has 5 of 5 running (limit set for the tenant)", with a
// link to the tenant on the tenants page. A ready run waiting for its
// tenant's rate (workflow.DefineOpts.TenantRate) is marked rate-limited,
// and its page says "Waiting for its rate: acme is at its rate, 100 per
// 1m0s; next token in 2.3s (the workflow type's rate)". The tenants page
// lists the tenants with runs working or waiting, or a limit or rate of
// their own (workflow.Client.Tenants), with their runs ready, held and
// rate-limited, their limit and rate and where each comes from, and its
// forms set or clear a tenant's own limit (workflow.Client.SetTenantLimit)
// and rate (workflow.Client.SetTenantRate).
//
// The new schedule form creates it as POST /api/schedules does, so it
// refuses what the API refuses with the same message, shown above the
// form and beside the field it is about (as the edit form's errors are),
// and opens the new schedule's page. The schedule records that it was
// created in the dashboard. With a key its owner has already, it creates
// nothing: it opens that schedule when its spec is the form's, and
// otherwise shows the form again (409) with the fields that differ and a
// link to that schedule.
//
// The edit form updates the schedule as PATCH /api/schedules/{id} does,
// naming only the fields that differ from the schedule: an unchanged start
// or end does not re-time it, and an unchanged grant is not checked again.
// Its start and end, and a backfill's from and to, are wall times in the
// schedule's zone, shown beside them (as a datetime-local input sends them:
// 2026-11-01T09:00), or RFC 3339 times. A backfill, like the API's, runs
// the slots in [from, to) that have no run yet, at most schedule.MaxBackfill
// of them or none, and its notice says how many it started and how many had
// run already.
//
// Every value on a page is escaped by html/template, and the pages'
// Content-Security-Policy allows no inline script, no script but the
// dashboard's own files (GET /assets/refresh.js) and no resource but
// their own inline stylesheet.
//
// # River UI and the JSON API
//
//	GET    /riverui/                     River UI
//	GET    /api/openapi.json             the OpenAPI 3.1 document of the API (openapi.json)
//	GET    /api/runs                     ?type=&status=&tenant=&schedule_id=&limit=&after=
//	POST   /api/runs                     a run's writable fields: {"type": "...", "input": ..., "idempotency_key", "tenant",
//	                                     "max_attempts", "priority", "queue", "tags", "metadata", "require_worker",
//	                                     "debounce": {"key", "period", "max_delay"}, "retry": {"delay": "30s"} or
//	                                     {"base": "1s", "factor": 2, "max": "5m", "jitter": 0.1}}; the answer's "existing" is true
//	                                     when nothing was started (the idempotency key's run, or a debounce window's)
//	GET    /api/runs/{id}                a run with its steps
//	POST   /api/runs/{id}/cancel
//	POST   /api/runs/{id}/retry
//	POST   /api/runs/{id}/signal         {"name": "...", "payload": ...}
//	GET    /api/schedules                ?owner=&workflow=&paused=&limit=&after=
//	POST   /api/schedules                a schedule's writable fields: {"name", "key", "tenant", "workflow", "cron", "time_zone",
//	                                     "input", "overlap", "catch_up_window": "1h", "dst_gap": "skip", …, "require_worker"};
//	                                     "rrule": "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;BYDAY=TU" in place of "cron"
//	                                     "calendars": ["us-holidays"], "on_excluded": "skip|next-business-day"
//	                                     "retry": {"delay": "30s"} (a run's retry policy; null for the type's)
//	GET    /api/schedules/{id}           a schedule with its next 10 fire times
//	PATCH  /api/schedules/{id}           the fields to change; a GET's body as it is changes nothing
//	POST   /api/schedules/{id}/pause     optional {"note": "..."}
//	POST   /api/schedules/{id}/resume    optional {"missed": "skip|latest|backfill"}
//	POST   /api/schedules/{id}/trigger   optional {"input": ..., "overlap": "..."}; answers {"run_id": ...}
//	POST   /api/schedules/{id}/backfill  {"from": "2026-11-01T00:00:00Z", "to": …, "input": …, "overlap": …, "rerun_skipped": …}
//	DELETE /api/schedules/{id}
//	GET    /api/schedules/{id}/history   ?status=&limit=&after=
//	GET    /api/calendars                the holiday calendars, each with date_count and schedules (how many exclude it)
//	POST   /api/calendars                {"name": "us-holidays", "description": …, "dates": [{"date": "2027-12-24", "note": …}]}
//	GET    /api/calendars/{name}         a calendar with its dates
//	DELETE /api/calendars/{name}         409 while schedules exclude it
//	POST   /api/calendars/{name}/dates   {"dates": [{"date": "2027-12-24", "note": …}]}: adds them
//	DELETE /api/calendars/{name}/dates   {"dates": ["2027-12-24"]}: removes them
//	GET    /api/grants                   ?subject=&revoked=true&limit=&after=: execution grants, newest first
//	POST   /api/grants                   {"subject": "user-42", "scopes": ["workflow:execute:send_report"], "expires_in": "720h"}
//	                                     (or "expires_at": an RFC 3339 time, or neither)
//	GET    /api/grants/{id}              a grant with "schedules": the ids of the schedules under it
//	POST   /api/grants/{id}/revoke       optional {"reason": "..."}; 409 for a grant revoked already
//	GET    /api/tenants                  ?type=&tenant=&limit=: the tenants with runs working or waiting, or a limit or rate of their own
//	PUT    /api/tenants/{type}/{tenant}/limit  {"max_running": 5}: a tenant's own limit (0 removes it)
//	DELETE /api/tenants/{type}/{tenant}/limit  removes a tenant's own limit
//	PUT    /api/tenants/{type}/{tenant}/rate   {"limit": 100, "per": "1m"}: a tenant's own rate ({"limit": 0} removes it)
//	DELETE /api/tenants/{type}/{tenant}/rate   removes a tenant's own rate
//
// As on the dashboard, every /api/schedules/{id} route takes a schedule's
// id or its key there, a key with ?owner= (absent: owner ""); an id with a
// non-empty owner= is a 400, and an unknown key a 404 that names the key
// and the owner. A key that holds characters a path reserves is escaped
// (url.PathEscape): /api/schedules/digest:user@42?owner=acme,
// /api/schedules/report%3Fdaily.
//
// POST /api/schedules with a key its owner has already creates nothing:
// it answers 200 with that schedule and "existing": true when the spec
// sent is the one stored, and 409 with a KeyConflict when it differs:
//
//	{"error": "key \"digest\" of owner \"acme\" names schedule 01a1…, whose spec differs (stored → given):
//	           cron \"0 8 * * *\" → \"0 9 * * *\"; nothing was written; to change that schedule,
//	           PATCH /api/schedules/digest?owner=acme with the fields to change; or give this one another key",
//	 "id": "01a1…", "owner": "acme", "key": "digest", "declared_by": "",
//	 "diffs": [{"field": "cron", "stored": "\"0 8 * * *\"", "given": "\"0 9 * * *\""}]}
//
// A new schedule is answered 201 with "existing": false; "existing" is in
// no other answer. A schedule created through the API has created_by
// "api"; every schedule answered carries its key, declared_by,
// undeclared_at, created_by and origin, all read-only but key, which only
// a create sets.
//
// openapi.json, embedded and served at /api/openapi.json (with
// Config.Prefix as its server), describes every route, body and answer;
// a test checks it against the router and every answer the tests receive.
//
// The API speaks one vocabulary, which round-trips:
//
//   - A run is workflow.Run and a schedule is schedule.Schedule, with the
//     Go field names in snake case: a run's workflow type is "type"
//     (Run.Type), a schedule's is "workflow" (Schedule.Workflow), as the
//     listings' filters ?type= and ?workflow= already were; "overlap",
//     "catch_up", "catch_up_window", "parent_id". Every field is always
//     present: null for a time, an id or an output that is absent.
//   - Durations are Go duration strings both ways: answers write
//     "1h30m0s", requests take anything time.ParseDuration reads ("90m").
//     A catch-up window of "0s" is no window; left out of a create, it is
//     the default minute.
//   - Times are RFC 3339: answers in UTC, requests in any offset.
//   - The answer about one run or schedule is the object itself (no
//     envelope). Listings are {"runs": […], "next_after": id|null} and
//     {"schedules": […], "next_after": …}, without the steps and next fire
//     times that the answers about one run or schedule hold; the tenants
//     are {"tenants": […]}, those with the most runs waiting (ready,
//     rate-limited or held) first.
//   - A run held back by its tenant's limit (workflow.DefineOpts.TenantLimit)
//     is pending with "held": "tenant_limit" and "held_reason", why it
//     waits: "acme has 5 of 5 running"; one ready but waiting for its
//     tenant's rate (workflow.DefineOpts.TenantRate) has "held":
//     "tenant_rate" and "held_reason": "acme is at its rate, 100 per 1m0s;
//     next token in 2.3s"; both are "" for a run not held.
//     A tenant is workflow.Tenant: "type", "tenant", "running", "ready",
//     "held", "rate_limited", "limit" and "limit_source" ("tenant", "type"
//     or ""), "rate" ({"limit": 100, "per": "1m0s"} or null), "rate_source"
//     and "next_token" (a Go duration, "" while no run waits for the rate).
//   - What GET /api/schedules/{id} answers, PATCH takes back as it is and
//     changes nothing: it changes only the fields whose value differs from
//     the schedule's, in one transaction with the schedule locked, so an
//     unchanged start or end does not re-time the pending slot, an
//     unchanged (even revoked) grant is not checked again, and updated_at
//     stays. A PATCH ignores the read-only fields (id, paused_at,
//     next_fire_at, last_fire_at, run_count, failure_count,
//     last_run_status, created_at, updated_at, declared_by, undeclared_at,
//     created_by, origin, next_fire_times, worker_live), but an id must be
//     the schedule's; key, paused and pause_note must be the schedule's (a
//     key never changes; the pause and resume routes change the others),
//     and the owner of a schedule with a key does not change. null clears start_at, end_at and grant_id, and makes the input
//     JSON null; a field left out is unchanged.
//   - A POST creates from the same fields without the read-only ones,
//     which it refuses by name: a GET's body without them creates an equal
//     schedule. POST /api/runs takes a run's body without its read-only
//     fields; with the run's idempotency key, it answers that run. Both
//     creates also take require_worker, which is not stored.
//   - Unknown fields and query parameters of the listings are refused, by
//     name. A name of an earlier release is refused with what it is now
//     called.
//
// Compatibility: this vocabulary replaced the one of earlier releases,
// whose answers said "workflow_type", "overlap_policy", "catchup_policy",
// "catchup_window" (nanoseconds) and "parent_run_id", and wrapped one run
// or schedule in {"run": …} or {"schedule": …, "next_fire_times": …}. Two
// former request names are still read, deprecated, until the next release:
// "workflow" for "type" in POST /api/runs, and ?schedule= for ?schedule_id=
// in GET /api/runs.
//
// Every API error is {"error": "...", "field": "..."}: error says what was
// wrong and what to do; field, present when the error is about one field of
// the body or one query parameter, names it as the API does (a validation
// error of the Go API naming EndAt reads "invalid end_at: …"). Statuses:
// 400 for bad input (nothing is written), 401 without credentials, 403 for
// a cross-site state-changing request, 404 for an unknown run, schedule or
// route, 405 for a method the path does not take (with Allow), 409 for a
// run that is finished (a signal) or cannot be retried, a require_worker
// create or start of a type no live client serves, or a create whose key
// names a schedule with another spec (a KeyConflict, which is an error with
// more fields), 413 for a body over
// the limit, 500 otherwise. Cancelling a finished run answers 200 with the
// run as it is, as pausing a paused schedule answers with the schedule.
//
// # Authentication
//
// When Config.Token is set, every request but the login page must carry
// one of:
//
//   - "Authorization: Bearer <token>", for scripts and the CLI;
//   - HTTP Basic authentication with the token as password and any user
//     name (curl -u ops:$TOKEN);
//   - the session cookie that the login page sets after the token is typed
//     in, which also carries River UI's own requests.
//
// The cookie (HttpOnly, SameSite=Strict, Path the prefix, Secure over TLS)
// holds an expiry time 12 hours ahead and an HMAC-SHA256 of it under a key
// derived from the token: never the token itself, unforgeable without it,
// and void once the token changes. Logging out deletes the cookie from the
// browser; a copy made before stays valid until it expires. Tokens are
// compared in constant time. Without credentials, a browser asking for a
// page (GET with Accept: text/html) is sent to /login?next=<the page>, and
// the login page only ever sends it on to a path under the prefix; any
// other request gets 401 with a WWW-Authenticate challenge for Bearer and
// for Basic.
//
// # Cross-site request forgery
//
// A cookie and cached Basic credentials are sent by the browser on its own,
// so every state-changing request (POST, DELETE: the dashboard's forms,
// River UI's actions, the API) that does not carry the bearer token goes
// through http.CrossOriginProtection, which refuses it (403) unless it comes
// from the same origin. That suffices without CSRF tokens: every browser
// released since 2023 sends Sec-Fetch-Site, which a page cannot forge, and
// older ones send Origin on a cross-site POST, which is checked against
// Host; a request with neither header does not come from a browser, and so
// carries no ambient credentials. The SameSite=Strict cookie is a second
// wall, and no GET changes anything. A bearer-token request skips the
// check: a browser never adds an Authorization header to a cross-site
// request by itself.
package riverui
