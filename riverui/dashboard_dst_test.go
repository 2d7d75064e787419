package riverui_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// TestDashboardScheduleDST: the new and edit forms offer a schedule's DST
// policy, its page says the policy when it is not the default, its next
// fire times mark a slot the policy skips, and its ledger says why such a
// slot did not run.
func TestDashboardScheduleDST(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)

	t.Run("NewForm", func(t *testing.T) {
		body := d.page(t, "/schedules/new", nil)
		require.Contains(t, body, "DST gap policy (a time the clocks jump over: jump runs right after the jump, shift runs later by the jump's length, skip does not run and records the slot as skipped)")
		require.Contains(t, body, "DST fold policy (a time that occurs twice: runs at the first, the last, or both)")
		form := formFields(t, body, "new-schedule-form")
		require.Equal(t, "jump", form.Get("dst_gap"), "the default")
		require.Equal(t, "first", form.Get("dst_fold"), "the default")
		form.Del("paused")

		fields := map[string]string{
			"name": "nightly", "workflow": flow.Name(), "cron": "30 2 * * *", "time_zone": "America/New_York",
			"start_at": "2030-03-08T00:00", "dst_gap": "skip", "dst_fold": "both", "owner": "dst-new",
		}

		// A policy the form does not offer is refused beside its select;
		// nothing is created.
		bad := with(with(form, fields), map[string]string{"dst_gap": "later"})
		resp := d.send(t, http.MethodPost, "/schedules/new", bad, map[string]string{"Sec-Fetch-Site": "same-origin"})
		require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
		require.Equal(t, []string{`schedule: invalid DSTGap: &#34;later&#34; is not a DST gap policy; use jump, shift or skip`}, texts(resp.body, "error"))
		require.Equal(t, texts(resp.body, "error"), texts(resp.body, "field-error"))
		require.Regexp(t, `<select name="dst_gap" aria-invalid="true">`, resp.body)
		require.Contains(t, resp.body, `<option value="both" selected>both</option>`, "the fold typed is kept")
		list, err := d.sc.List(t.Context(), &schedule.ListParams{Owner: "dst-new"})
		require.NoError(t, err)
		require.Empty(t, list)

		to := d.post(t, "/schedules/new", with(form, fields))
		list, err = d.sc.List(t.Context(), &schedule.ListParams{Owner: "dst-new"})
		require.NoError(t, err)
		require.Len(t, list, 1)
		s := list[0]
		require.Equal(t, "/schedules/"+s.ID.String()+"?notice=created", to)
		require.Equal(t, schedule.DSTGapSkip, s.DSTGap)
		require.Equal(t, schedule.DSTFoldBoth, s.DSTFold)

		// Its page says the policy, and marks the slot it skips.
		body = d.page(t, to, nil)
		require.Equal(t, []string{"gap skip (a time the clocks jump over does not run; the slot is recorded as skipped), fold both (a time that occurs twice runs at both)"},
			unescapeAll(texts(body, "schedule-dst")))
		fires := regexp.MustCompile(`(?s)<ol class="fires" data-testid="next-fires">(.*?)</ol>`).FindStringSubmatch(body)
		require.NotNil(t, fires)
		require.Equal(t, 1, strings.Count(fires[1], `data-testid="fire-skipped"`))
		require.Contains(t, fires[1], `Sun 2030-03-10 03:00:00 EDT</time>`)
		require.Contains(t, fires[1], `<span class="badge status-skipped" data-testid="fire-skipped">skipped</span> <span class="muted small">named 2030-03-10T02:30:00</span>`)
		require.Contains(t, fires[1], "02:30 does not exist on 2030-03-10 in America/New_York")
		require.NotContains(t, fires[1], `<span class="badge">shifted</span>`)
	})

	t.Run("DefaultNotShown", func(t *testing.T) {
		s := d.createSchedule(t, &schedule.Params{Name: "default", Cron: "30 2 * * *", TimeZone: "America/New_York", StartAt: time.Date(2030, 3, 8, 0, 0, 0, 0, time.UTC)})
		body := d.page(t, "/schedules/"+s.ID.String(), nil)
		require.Empty(t, texts(body, "schedule-dst"), "the default goes without saying")
		require.NotContains(t, body, "DST policy")
		require.Empty(t, texts(body, "fire-skipped"))
		require.Contains(t, body, `<span class="badge">shifted</span> <span class="muted small">named 2030-03-10T02:30:00</span>`)

		// A schedule that follows elapsed time says the policy does not apply.
		hourly := d.createSchedule(t, &schedule.Params{Name: "hourly", Cron: "0 * * * *", TimeZone: "America/New_York", DSTGap: schedule.DSTGapShift})
		require.Equal(t, []string{"gap shift (a time the clocks jump over runs later by the jump's length), fold first (a time that occurs twice runs at the first); this schedule follows elapsed time, so it does not apply"},
			unescapeAll(texts(d.page(t, "/schedules/"+hourly.ID.String(), nil), "schedule-dst")))
	})

	t.Run("EditForm", func(t *testing.T) {
		s := d.createSchedule(t, &schedule.Params{
			Name: "edit dst", Cron: "30 1 * * *", TimeZone: "America/New_York", StartAt: time.Date(2098, 1, 1, 0, 0, 0, 0, time.UTC),
			DSTGap: schedule.DSTGapSkip, DSTFold: schedule.DSTFoldLast,
		})
		path := "/schedules/" + s.ID.String()
		form := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		require.Equal(t, "skip", form.Get("dst_gap"))
		require.Equal(t, "last", form.Get("dst_fold"))

		// A form that does not post the policy (loaded before it was a
		// field) leaves it as it is.
		old := with(form, nil)
		old.Del("dst_gap")
		old.Del("dst_fold")
		require.Equal(t, path+"?notice=unchanged", d.post(t, path+"/edit", old))

		require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"dst_gap": "shift", "dst_fold": "both"})))
		got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, schedule.DSTGapShift, got.DSTGap)
		require.Equal(t, schedule.DSTFoldBoth, got.DSTFold)
		require.Contains(t, unescapeAll(texts(d.page(t, path, nil), "schedule-dst"))[0], "gap shift")

		// Back to the defaults: the page no longer says it.
		require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"dst_gap": "jump", "dst_fold": "first"})))
		require.Empty(t, texts(d.page(t, path, nil), "schedule-dst"))

		resp := d.send(t, http.MethodPost, path+"/edit", with(form, map[string]string{"dst_fold": "twice"}), nil)
		require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
		require.Equal(t, []string{`schedule: invalid DSTFold: &#34;twice&#34; is not a DST fold policy; use first, last or both`}, texts(resp.body, "field-error"))
		require.Regexp(t, `<select name="dst_fold" aria-invalid="true">`, resp.body)
		after, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, schedule.DSTFoldFirst, after.DSTFold, "nothing was written")
	})

	t.Run("Ledger", func(t *testing.T) {
		// A backfill of the spring-forward day records the slot that did
		// not exist as skipped, and the ledger and the run's page say why.
		ny := mustZone(t, "America/New_York")
		s := d.createSchedule(t, &schedule.Params{Name: "ledger dst", Cron: "30 2 * * *", TimeZone: "America/New_York", DSTGap: schedule.DSTGapSkip})
		res, err := d.sc.Backfill(t.Context(), schedule.ByID(s.ID), time.Date(2026, 3, 8, 0, 0, 0, 0, ny), time.Date(2026, 3, 9, 0, 0, 0, 0, ny), nil)
		require.NoError(t, err)
		require.Equal(t, map[string]int{schedule.SkipReasonDSTGap: 1}, res.Skipped)

		body := d.page(t, "/schedules/"+s.ID.String(), nil)
		require.Len(t, attrs(body, "ledger-row", "data-testid"), 1)
		require.Regexp(t, `Sun 2026-03-08 03:00:00 EDT</time>.*? <span class="muted small">named 2026-03-08T02:30:00</span><br><span class="muted small">02:30 does not exist on 2026-03-08 in America/New_York [^<]*skipped[^<]*</span></td>`, body)
		require.Regexp(t, `status-skipped">skipped</span></td>\s*<td>dst gap</td>`, body)

		run := attrs(body, "run-link", "href")
		require.Len(t, run, 1)
		page := d.page(t, run[0], nil)
		require.Contains(t, page, `(skipped: dst gap)`)
		require.Contains(t, page, `named 2026-03-08T02:30:00`)
	})
}
