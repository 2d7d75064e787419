package engine

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Grant is a row of execution_grants as the engine reads it.
type Grant struct {
	ID           uuid.UUID
	Subject      string
	Scopes       []string
	ExpiresAt    *time.Time
	RevokedAt    *time.Time
	RevokeReason string
	CreatedAt    time.Time
}

// grantColumns are the columns scanGrant reads.
const grantColumns = `id, subject, scopes, expires_at, revoked_at, revoke_reason, created_at`

// scanGrant reads a row of grantColumns into g; ErrNotFound when there is
// none.
func scanGrant(row pgx.Row, g *Grant) error {
	err := row.Scan(&g.ID, &g.Subject, &g.Scopes, &g.ExpiresAt, &g.RevokedAt, &g.RevokeReason, &g.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

func scanOneGrant(row pgx.Row) (*Grant, error) {
	var g Grant
	if err := scanGrant(row, &g); err != nil {
		return nil, err
	}
	return &g, nil
}

// The statements of execution grants.
var (
	grantByIDStmt = define(`SELECT ` + grantColumns + ` FROM {s}execution_grants WHERE id = $1`)

	grantsByIDStmt = define(`SELECT ` + grantColumns + ` FROM {s}execution_grants WHERE id = ANY($1::uuid[])`)

	insertGrantStmt = define(`INSERT INTO {s}execution_grants (id, subject, scopes, expires_at, created_at) VALUES ($1, $2, $3, $4, coalesce($5::timestamptz, now())) RETURNING ` + grantColumns)

	listGrantsStmt = define(`SELECT ` + grantColumns + ` FROM {s}execution_grants
WHERE ($1 = '' OR subject = $1) AND ($2::uuid IS NULL OR id < $2) AND ($3 OR revoked_at IS NULL)
ORDER BY id DESC LIMIT $4`)

	grantSchedulesStmt = define(`SELECT ` + scheduleColumns + ` FROM {s}schedules WHERE grant_id = $1 ORDER BY id LIMIT $2`)

	revokeGrantStmt = define(`UPDATE {s}execution_grants SET revoked_at = coalesce(revoked_at, $3::timestamptz, now()), revoke_reason = $2 WHERE id = $1 RETURNING ` + grantColumns)
)

// GrantByID reads a grant; ErrNotFound when there is none.
func (q *Queries) GrantByID(ctx context.Context, db DBTX, id uuid.UUID) (*Grant, error) {
	return scanOneGrant(queryRow(ctx, db, q.sql(grantByIDStmt), id))
}

// GrantsByID reads the grants of ids, in one query, in no particular
// order; a grant that does not exist is absent.
func (q *Queries) GrantsByID(ctx context.Context, db DBTX, ids []uuid.UUID) ([]Grant, error) {
	rows, err := db.Query(ctx, q.sql(grantsByIDStmt), ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Grant, error) {
		var g Grant
		err := scanGrant(row, &g)
		return g, err
	})
}

// InsertGrantParams are the columns of a new grant.
type InsertGrantParams struct {
	ID        uuid.UUID
	Subject   string
	Scopes    []string
	ExpiresAt *time.Time // nil: it never expires
	Now       *time.Time // its creation; nil: the database's now()
}

// InsertGrant inserts a grant and returns it as stored.
func (q *Queries) InsertGrant(ctx context.Context, db DBTX, p *InsertGrantParams) (*Grant, error) {
	return scanOneGrant(queryRow(ctx, db, q.sql(insertGrantStmt), p.ID, p.Subject, p.Scopes, p.ExpiresAt, p.Now))
}

// RevokeGrant revokes a grant with reason and returns it; a grant revoked
// already keeps its revoked_at (the reason is replaced); now is the
// revocation's time (nil: the database's now()). ErrNotFound when there is
// none.
func (q *Queries) RevokeGrant(ctx context.Context, db DBTX, id uuid.UUID, reason string, now *time.Time) (*Grant, error) {
	return scanOneGrant(queryRow(ctx, db, q.sql(revokeGrantStmt), id, reason, now))
}

// ListGrantsParams filter and page ListGrants.
type ListGrantsParams struct {
	Subject string     // "" for any
	After   *uuid.UUID // newest first, after this id
	Revoked bool       // include revoked grants
	Limit   int
}

// ListGrants lists grants newest first (by id).
func (q *Queries) ListGrants(ctx context.Context, db DBTX, p *ListGrantsParams) ([]Grant, error) {
	rows, err := db.Query(ctx, q.sql(listGrantsStmt), p.Subject, p.After, p.Revoked, p.Limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Grant, error) {
		var g Grant
		err := scanGrant(row, &g)
		return g, err
	})
}

// GrantSchedules reads up to limit schedules that run under grant id.
func (q *Queries) GrantSchedules(ctx context.Context, db DBTX, id uuid.UUID, limit int) ([]Schedule, error) {
	return scanSchedules(db.Query(ctx, q.sql(grantSchedulesStmt), id, limit))
}
