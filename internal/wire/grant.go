package wire

import (
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
)

// Grant is an execution grant: schedule.Grant on the wire, every field
// present (expires_at and revoked_at null for none, revoke_reason "" for
// none).
type Grant struct {
	ID           uuid.UUID  `json:"id"`
	Subject      string     `json:"subject"`
	Scopes       []string   `json:"scopes"`
	ExpiresAt    *time.Time `json:"expires_at"`
	RevokedAt    *time.Time `json:"revoked_at"`
	RevokeReason string     `json:"revoke_reason"`
	CreatedAt    time.Time  `json:"created_at"`
}

// NewGrant is g on the wire.
func NewGrant(g *schedule.Grant) *Grant {
	scopes := g.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return &Grant{
		ID: g.ID, Subject: g.Subject, Scopes: scopes, ExpiresAt: utcPtr(g.ExpiresAt), RevokedAt: utcPtr(g.RevokedAt),
		RevokeReason: g.RevokeReason, CreatedAt: g.CreatedAt.UTC(),
	}
}

// GrantDetail is the answer about one grant: the grant and the ids of the
// schedules under it, oldest first.
type GrantDetail struct {
	*Grant
	Schedules []uuid.UUID `json:"schedules"`
}

// NewGrantDetail is g with schedules, those under it, on the wire.
func NewGrantDetail(g *schedule.Grant, schedules []*schedule.Schedule) *GrantDetail {
	out := &GrantDetail{Grant: NewGrant(g), Schedules: make([]uuid.UUID, len(schedules))}
	for i, s := range schedules {
		out.Schedules[i] = s.ID
	}
	return out
}

// GrantList is a listing of grants; NextAfter, set when the page is full,
// is the after (--after) of the next page.
type GrantList struct {
	Grants    []*Grant   `json:"grants"`
	NextAfter *uuid.UUID `json:"next_after"`
}

// GrantPage is a page of a grant listing asked with limit.
func GrantPage(grants []*schedule.Grant, limit int) *GrantList {
	out := &GrantList{Grants: make([]*Grant, len(grants))}
	for i, g := range grants {
		out.Grants[i] = NewGrant(g)
	}
	if n := len(grants); n > 0 && n == limit {
		out.NextAfter = &grants[n-1].ID
	}
	return out
}
