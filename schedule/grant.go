package schedule

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/runmeta"
)

// ErrGrantNotFound is returned for an execution grant that does not exist.
var ErrGrantNotFound = errors.New("schedule: execution grant not found")

// Grant is an execution grant: the authority a schedule's runs act under,
// instead of a user's session (GRANT_NOT_SESSION). Its scopes name what it
// allows: "workflow:execute:<type>" for one workflow type, or "*".
type Grant struct {
	ID           uuid.UUID  `json:"id"`
	Subject      string     `json:"subject"`
	Scopes       []string   `json:"scopes"`
	ExpiresAt    *time.Time `json:"expires_at,omitempty"`
	RevokedAt    *time.Time `json:"revoked_at,omitempty"`
	RevokeReason string     `json:"revoke_reason,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
}

// GrantParams describe a grant to create.
type GrantParams struct {
	// Subject is who the runs act for, such as a user id. Required.
	Subject string
	// Scopes are what the grant allows. Required.
	Scopes []string
	// ExpiresAt, when set, ends the grant.
	ExpiresAt time.Time
}

// ScopeExecute is the scope that allows running workflow type typ.
func ScopeExecute(typ string) string { return "workflow:execute:" + typ }

// Skip reasons of slots whose grant does not allow the run.
const (
	SkipReasonGrantExpired    = "grant expired"
	SkipReasonGrantOutOfScope = "grant out of scope"
	SkipReasonGrantRevoked    = "grant revoked"
)

// CreateGrant creates an execution grant.
func (c *Client) CreateGrant(ctx context.Context, p *GrantParams) (*Grant, error) {
	return c.CreateGrantTx(ctx, nil, p)
}

// CreateGrantTx is like CreateGrant, within tx; the caller commits or rolls
// back.
func (c *Client) CreateGrantTx(ctx context.Context, tx pgx.Tx, p *GrantParams) (*Grant, error) {
	switch {
	case p == nil || strings.TrimSpace(p.Subject) == "":
		return nil, &ValidationError{Field: "GrantParams.Subject", Problem: "is empty; name who the runs act for"}
	case len(p.Subject) > 200:
		return nil, &ValidationError{Field: "GrantParams.Subject", Problem: "is longer than 200 bytes"}
	case len(p.Scopes) == 0:
		return nil, &ValidationError{Field: "GrantParams.Scopes", Problem: `is empty; grant "workflow:execute:<type>" or "*"`}
	case !p.ExpiresAt.IsZero() && !p.ExpiresAt.After(c.now()):
		return nil, &ValidationError{Field: "GrantParams.ExpiresAt", Problem: "is in the past"}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	return grantOf(c.q.InsertGrant(ctx, c.db(tx), &engine.InsertGrantParams{
		ID: id, Subject: p.Subject, Scopes: p.Scopes, ExpiresAt: nullTime(p.ExpiresAt), Now: c.sqlNow(),
	}))
}

// GetGrant reads a grant.
func (c *Client) GetGrant(ctx context.Context, id uuid.UUID) (*Grant, error) {
	return grantOf(c.q.GrantByID(ctx, c.rt.Pool(), id))
}

// ListGrantsParams filter and page ListGrants.
type ListGrantsParams struct {
	// Subject lists only the grants of this subject; "" for any.
	Subject string
	// Revoked includes revoked grants, which are left out by default.
	Revoked bool
	// After pages: the grants older than this one (by id).
	After *uuid.UUID
	// Limit is how many, 1 to 1000; 0 is 50.
	Limit int
}

// ListGrants lists grants, newest first.
func (c *Client) ListGrants(ctx context.Context, p *ListGrantsParams) ([]*Grant, error) {
	if p == nil {
		p = &ListGrantsParams{}
	}
	limit := p.Limit
	switch {
	case limit == 0:
		limit = 50
	case limit < 1 || limit > 1000:
		return nil, &ValidationError{Field: "ListGrantsParams.Limit", Problem: fmt.Sprintf("is %d; use 1 to 1000", limit)}
	}
	rows, err := c.q.ListGrants(ctx, c.rt.Pool(), &engine.ListGrantsParams{Subject: p.Subject, After: p.After, Revoked: p.Revoked, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]*Grant, len(rows))
	for i := range rows {
		out[i] = grantFrom(&rows[i])
	}
	return out, nil
}

// GrantSchedules returns up to limit schedules that run under grant id,
// oldest first, with their calendars read (as Get returns them): for an
// operator auditing a grant, and to warn of one that expires before a
// schedule's next slot.
func (c *Client) GrantSchedules(ctx context.Context, id uuid.UUID, limit int) ([]*Schedule, error) {
	if limit < 1 || limit > 1000 {
		return nil, &ValidationError{Field: "limit", Problem: fmt.Sprintf("is %d; use 1 to 1000", limit)}
	}
	out, err := schedulesOf(c.q.GrantSchedules(ctx, c.rt.Pool(), id, limit))
	if err != nil {
		return nil, err
	}
	return out, c.loadCalendarsTx(ctx, c.rt.Pool(), out...)
}

// RevokeGrant revokes a grant: from the next slot on, the schedules under
// it record their slots as skipped ("grant revoked"), and their chains go on.
// Revoking is final; reason is kept for the ledger.
func (c *Client) RevokeGrant(ctx context.Context, id uuid.UUID, reason string) (*Grant, error) {
	return c.RevokeGrantTx(ctx, nil, id, reason)
}

// RevokeGrantTx is like RevokeGrant, within tx; the caller commits or rolls
// back.
func (c *Client) RevokeGrantTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, reason string) (*Grant, error) {
	return grantOf(c.q.RevokeGrant(ctx, c.db(tx), id, reason, c.sqlNow()))
}

// GrantError reports that an execution grant does not allow a run: a slot
// that meets it is recorded as skipped, with Reason as its skip reason, and
// the schedule's chain goes on (GRANT_NOT_SESSION).
type GrantError struct {
	// GrantID is the grant's id; uuid.Nil when the grant no longer exists.
	GrantID uuid.UUID

	// Reason is the skip reason firing records: SkipReasonGrantRevoked (also
	// for a grant that no longer exists), SkipReasonGrantExpired or
	// SkipReasonGrantOutOfScope.
	Reason string

	// Workflow is the workflow type of the run the grant does not allow.
	Workflow string
}

func (e *GrantError) Error() string {
	if e.GrantID == uuid.Nil {
		return fmt.Sprintf("schedule: the execution grant no longer exists, so a run of workflow type %q is skipped (%s)", e.Workflow, e.Reason)
	}
	return fmt.Sprintf("schedule: execution grant %s does not allow a run of workflow type %q (%s)", e.GrantID, e.Workflow, e.Reason)
}

// Check says whether grant g allows a run of workflowType at at: nil when
// it does, else a *GrantError whose Reason is the skip reason. It is the
// rule firing applies to every slot of a schedule under a grant (and
// Trigger, Backfill and Resume to the runs they start), so a slot at at is
// skipped with exactly that reason; Create and Update refuse a grant it
// rejects. In that order: a revoked grant, an expired one (ExpiresAt at or
// before at), then one without the scope ScopeExecute(workflowType) or "*".
// A nil g is a grant that no longer exists, which allows nothing and is
// reported as SkipReasonGrantRevoked, as firing records it.
func (g *Grant) Check(workflowType string, at time.Time) error {
	if reason := g.skipReason(workflowType, at); reason != "" {
		e := &GrantError{Reason: reason, Workflow: workflowType}
		if g != nil {
			e.GrantID = g.ID
		}
		return e
	}
	return nil
}

// skipReason is Check's Reason, or "" when g allows the run.
func (g *Grant) skipReason(typ string, at time.Time) string {
	switch {
	case g == nil || g.RevokedAt != nil:
		return SkipReasonGrantRevoked
	case g.ExpiresAt != nil && !g.ExpiresAt.After(at):
		return SkipReasonGrantExpired
	case !slices.Contains(g.Scopes, "*") && !slices.Contains(g.Scopes, ScopeExecute(typ)):
		return SkipReasonGrantOutOfScope
	}
	return ""
}

// checkGrant checks the schedule's execution grant for one run (a trigger, a
// backfilled or resumed slot): the skip reason when it does not allow the
// run (GRANT_NOT_SESSION), else "" with the grant's subject added to the
// run's metadata. Firing checks a batch's grants at once (checkGrants).
func (c *Client) checkGrant(ctx context.Context, tx pgx.Tx, s *Schedule, now time.Time, meta *runmeta.Meta) (string, error) {
	if s.GrantID == nil {
		return "", nil
	}
	g, err := grantOf(c.q.GrantByID(ctx, tx, *s.GrantID))
	if errors.Is(err, ErrGrantNotFound) {
		g, err = nil, nil
	}
	if err != nil {
		return "", err
	}
	return g.admit(s.Workflow, now, meta), nil
}

// admit decides a run of type typ under grant g (nil: the grant is gone) at
// now by the rule of Check: the skip reason when g does not allow it, else
// "" with g's subject and id added to the run's metadata.
func (g *Grant) admit(typ string, now time.Time, meta *runmeta.Meta) string {
	if reason := g.skipReason(typ, now); reason != "" {
		return reason
	}
	meta.GrantSubject, meta.GrantID = g.Subject, g.ID.String()
	return ""
}

// grantsByID reads the grants of ids, by id, in one query; a grant that
// does not exist is absent from the map.
func (c *Client) grantsByID(ctx context.Context, tx pgx.Tx, ids []uuid.UUID) (map[uuid.UUID]*Grant, error) {
	grants, err := c.q.GrantsByID(ctx, tx, ids)
	if err != nil {
		return nil, fmt.Errorf("schedule: read %d grants: %w", len(ids), err)
	}
	byID := make(map[uuid.UUID]*Grant, len(grants))
	for i := range grants {
		byID[grants[i].ID] = grantFrom(&grants[i])
	}
	return byID, nil
}

// requireUsableGrant refuses, with a *ValidationError, a grant under which
// every slot of a schedule of workflow type typ would be skipped: unknown,
// revoked, expired or without a scope that covers typ. Grants never regain
// what they lack (scopes are fixed, a revocation is final), so such a
// schedule could never run.
func (c *Client) requireUsableGrant(ctx context.Context, tx pgx.Tx, id uuid.UUID, typ string) error {
	g, err := grantOf(c.q.GrantByID(ctx, tx, id))
	if err != nil {
		return &ValidationError{Field: "GrantID", Problem: fmt.Sprintf("%s: %v; create the grant first", id, err)}
	}
	if reason := g.skipReason(typ, c.now()); reason != "" {
		return &ValidationError{Field: "GrantID", Problem: fmt.Sprintf(
			"grant %s (subject %q) would skip every slot (%q); use a grant that is live and has scope %q or \"*\"",
			id, g.Subject, reason, ScopeExecute(typ))}
	}
	return nil
}

// grantOf converts an engine row into a Grant, engine.ErrNotFound into
// ErrGrantNotFound.
func grantOf(row *engine.Grant, err error) (*Grant, error) {
	if errors.Is(err, engine.ErrNotFound) {
		return nil, ErrGrantNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("schedule: read grant: %w", err)
	}
	return grantFrom(row), nil
}

func grantFrom(row *engine.Grant) *Grant {
	return &Grant{
		ID: row.ID, Subject: row.Subject, Scopes: row.Scopes, ExpiresAt: row.ExpiresAt, RevokedAt: row.RevokedAt,
		RevokeReason: row.RevokeReason, CreatedAt: row.CreatedAt,
	}
}

// db is tx, or the pool when tx is nil.
func (c *Client) db(tx pgx.Tx) engine.DBTX {
	if tx != nil {
		return tx
	}
	return c.rt.Pool()
}
