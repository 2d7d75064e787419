package schedule

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/runmeta"
)

func TestGrantCheck(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	id := uuid.MustParse("01a1ffb2-3fa1-781c-b9a9-3cd3e9d01250")

	for _, tt := range []struct {
		name  string
		grant *Grant
		want  string // the skip reason; "" when the grant allows the run
	}{
		{"ScopeOfTheType", &Grant{ID: id, Scopes: []string{ScopeExecute("report")}}, ""},
		{"Wildcard", &Grant{ID: id, Scopes: []string{"*"}}, ""},
		{"ExpiresLater", &Grant{ID: id, Scopes: []string{"*"}, ExpiresAt: &future}, ""},
		{"ScopeOfAnotherType", &Grant{ID: id, Scopes: []string{ScopeExecute("other")}}, SkipReasonGrantOutOfScope},
		{"Expired", &Grant{ID: id, Scopes: []string{"*"}, ExpiresAt: &past}, SkipReasonGrantExpired},
		{"ExpiresAtThatInstant", &Grant{ID: id, Scopes: []string{"*"}, ExpiresAt: &now}, SkipReasonGrantExpired},
		{"Revoked", &Grant{ID: id, Scopes: []string{"*"}, RevokedAt: &past}, SkipReasonGrantRevoked},
		// Revoked first, then expired, then the scope.
		{"RevokedExpiredOutOfScope", &Grant{ID: id, Scopes: []string{"x"}, ExpiresAt: &past, RevokedAt: &past}, SkipReasonGrantRevoked},
		{"ExpiredOutOfScope", &Grant{ID: id, Scopes: []string{"x"}, ExpiresAt: &past}, SkipReasonGrantExpired},
		{"NotFound", nil, SkipReasonGrantRevoked},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			err := tt.grant.Check("report", now)

			// Firing decides by the same rule: admit skips with the reason
			// Check gives, and otherwise records the grant on the run.
			var meta runmeta.Meta
			require.Equal(t, tt.want, tt.grant.admit("report", now, &meta))

			if tt.want == "" {
				require.NoError(t, err)
				require.Equal(t, runmeta.Meta{GrantID: id.String()}, meta)
				return
			}
			require.True(t, meta.IsZero())
			var grantErr *GrantError
			require.True(t, errors.As(err, &grantErr), "%T is not a *GrantError", err)
			require.Equal(t, tt.want, grantErr.Reason)
			require.Equal(t, "report", grantErr.Workflow)
			if tt.grant == nil {
				require.Equal(t, uuid.Nil, grantErr.GrantID)
				require.EqualError(t, err, `schedule: the execution grant no longer exists, so a run of workflow type "report" is skipped (grant revoked)`)
				return
			}
			require.Equal(t, id, grantErr.GrantID)
			require.EqualError(t, err, `schedule: execution grant 01a1ffb2-3fa1-781c-b9a9-3cd3e9d01250 does not allow a run of workflow type "report" (`+tt.want+`)`)
		})
	}
}
