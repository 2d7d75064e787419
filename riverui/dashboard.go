package riverui

import (
	"bytes"
	"html/template"
	"net/http"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// dashboardRuns is how many recent runs the dashboard lists.
const dashboardRuns = 50

// dashboardTemplate is the minimal server-rendered dashboard; html/template
// escapes every value.
var dashboardTemplate = template.Must(template.New("dashboard").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Tributary</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; margin-bottom: 2rem; }
th, td { text-align: left; padding: .25rem .75rem; border-bottom: 1px solid #ddd; font-size: .9rem; }
code { font-size: .85rem; }
</style>
</head>
<body>
<h1>Tributary</h1>
<p><a href="{{.Prefix}}/riverui/">River UI</a> · <a href="{{.Prefix}}/api/runs">runs (JSON)</a>{{if .HasSchedules}} · <a href="{{.Prefix}}/api/schedules">schedules (JSON)</a>{{end}}</p>
{{if .HasSchedules}}
<h2>Schedules</h2>
{{if .Schedules}}
<table>
<tr><th>Name</th><th>Workflow</th><th>Cron</th><th>Zone</th><th>State</th><th>Next fire</th><th>Last run</th><th>Runs</th></tr>
{{range .Schedules}}
<tr>
<td><a href="{{$.Prefix}}/api/schedules/{{.ID}}">{{.Name}}</a></td>
<td>{{.Workflow}}</td>
<td><code>{{.Cron}}</code></td>
<td>{{.TimeZone}}</td>
<td>{{if .Paused}}paused{{else}}active{{end}}</td>
<td>{{with .NextFireAt}}{{.UTC.Format "2006-01-02 15:04:05Z"}}{{end}}</td>
<td>{{.LastRunStatus}}</td>
<td><a href="{{$.Prefix}}/api/schedules/{{.ID}}/history">{{.RunCount}}</a></td>
</tr>
{{end}}
</table>
{{else}}<p>No schedules.</p>{{end}}
{{end}}
<h2>Recent runs</h2>
{{if .Runs}}
<table>
<tr><th>Run</th><th>Workflow</th><th>Status</th><th>Attempt</th><th>Created</th><th>River job</th></tr>
{{range .Runs}}
<tr>
<td><a href="{{$.Prefix}}/api/runs/{{.ID}}"><code>{{.ID}}</code></a></td>
<td>{{.Type}}</td>
<td>{{.Status}}</td>
<td>{{.Attempt}}</td>
<td>{{.CreatedAt.UTC.Format "2006-01-02 15:04:05Z"}}</td>
<td>{{if .JobID}}<a href="{{$.Prefix}}/riverui/jobs/{{.JobID}}">{{.JobID}}</a>{{end}}</td>
</tr>
{{end}}
</table>
{{else}}<p>No runs yet.</p>{{end}}
</body>
</html>
`))

type dashboardData struct {
	Prefix       string
	HasSchedules bool
	Schedules    []*schedule.Schedule
	Runs         []*workflow.Run
}

func (h *Handler) dashboard(w http.ResponseWriter, r *http.Request) {
	data := dashboardData{Prefix: h.prefix, HasSchedules: h.sc != nil}
	var err error
	if data.HasSchedules {
		if data.Schedules, err = h.sc.List(r.Context(), nil); err != nil {
			h.fail(w, err)
			return
		}
	}
	if data.Runs, err = h.wf.ListRuns(r.Context(), &workflow.ListParams{Limit: dashboardRuns}); err != nil {
		h.fail(w, err)
		return
	}
	var buf bytes.Buffer
	if err := dashboardTemplate.Execute(&buf, data); err != nil {
		h.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	_, _ = w.Write(buf.Bytes())
}
