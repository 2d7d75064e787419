package riverui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// Example_embed mounts River UI, the dashboard and the JSON API under /ops
// in an application's own server, behind a token.
func Example_embed() {
	db, cleanup := testdb.ForExample()
	defer cleanup()
	ctx := context.Background()

	wf, err := workflow.NewClient(db.Pool, &workflow.Config{Schema: db.Schema})
	if err != nil {
		log.Fatal(err)
	}
	schedules, err := schedule.New(wf, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := schedules.Create(ctx, &schedule.Params{Name: "nightly export", Workflow: "export", Cron: "0 2 * * *", TimeZone: "Europe/Paris"}); err != nil {
		log.Fatal(err)
	}

	ops, err := riverui.New(wf, schedules, &riverui.Config{Prefix: "/ops", Token: "s3cret"})
	if err != nil {
		log.Fatal(err)
	}
	uiCtx, stopUI := context.WithCancel(ctx)
	defer stopUI()
	if err := ops.Start(uiCtx); err != nil { // River UI's background services
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "the application") })
	mux.Handle("/ops/", ops)
	server := httptest.NewServer(mux)
	defer server.Close()

	// A script calls the API with the token.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, server.URL+"/ops/api/schedules", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := server.Client().Do(req)
	if err != nil {
		log.Fatal(err)
	}
	var list struct {
		Schedules []struct {
			Name     string `json:"name"`
			TimeZone string `json:"time_zone"`
		} `json:"schedules"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, list.Schedules[0].Name, list.Schedules[0].TimeZone)

	// A browser without the token is sent to the login page.
	client := server.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, server.URL+"/ops/", nil)
	req.Header.Set("Accept", "text/html")
	resp, err = client.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Location"))

	// Output:
	// 200 nightly export Europe/Paris
	// 303 /ops/login?next=%2Fops%2F
}
