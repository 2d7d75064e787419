// Package runmeta is the one definition of what Tributary itself writes in
// a run's metadata (workflow.RunInfo.Metadata, the workflow_runs.metadata
// column), beside the application's own keys (workflow.StartOpts.Metadata):
// the slot a schedule fired and how, the grant the run acts under, and the
// trace context of its start. Writers fill a Meta; readers Decode one;
// SQL that tests a key names it through the Key constants, which
// TestKeysMatchTags holds equal to Meta's JSON tags.
package runmeta

import (
	"encoding/json"
	"strings"
)

// The keys of Meta's fields, for SQL (metadata ? 'schedule_queued') and
// for the application's metadata, which may not use them.
const (
	KeyGrantSubject = "grant_subject"
	KeyGrantID      = "grant_id"
	KeyZone         = "schedule_zone"
	KeyFireAt       = "schedule_fire_at"
	KeyNominal      = "schedule_nominal"
	KeyDSTNote      = "schedule_dst_note"
	KeyTrigger      = "schedule_trigger"
	KeyQueued       = "schedule_queued"
	KeyBackfill     = "schedule_backfill"
	KeyRerunOf      = "schedule_rerun_of"
	KeyTrace        = "otel"
)

// Meta is Tributary's part of a run's metadata. Zero fields are left out.
type Meta struct {
	// GrantSubject and GrantID name the execution grant a schedule's run
	// acts under (workflow.RunInfo.GrantSubject).
	GrantSubject string `json:"grant_subject,omitempty"`
	GrantID      string `json:"grant_id,omitempty"`

	// Zone and FireAt are the slot of a schedule's run, in the schedule's
	// zone (RFC 3339); Nominal and DSTNote say how a daylight-saving change
	// moved it.
	Zone    string `json:"schedule_zone,omitempty"`
	FireAt  string `json:"schedule_fire_at,omitempty"`
	Nominal string `json:"schedule_nominal,omitempty"`
	DSTNote string `json:"schedule_dst_note,omitempty"`

	// Trigger, Backfill and RerunOf say the slot was started by hand, by a
	// backfill, or run again by a backfill (and why); Queued that the run
	// waits for the schedule's previous run (overlap queue or buffer).
	Trigger  bool   `json:"schedule_trigger,omitempty"`
	Queued   bool   `json:"schedule_queued,omitempty"`
	Backfill bool   `json:"schedule_backfill,omitempty"`
	RerunOf  string `json:"schedule_rerun_of,omitempty"`

	// Trace is the W3C trace context of the run's start (traceparent,
	// tracestate), which its attempts' spans link to (package
	// tributaryotel).
	Trace map[string]string `json:"otel,omitempty"`
}

// IsZero reports whether m has nothing to write.
func (m *Meta) IsZero() bool {
	return m.GrantSubject == "" && m.GrantID == "" && m.Zone == "" && m.FireAt == "" && m.Nominal == "" && m.DSTNote == "" &&
		!m.Trigger && !m.Queued && !m.Backfill && m.RerunOf == "" && len(m.Trace) == 0
}

// Decode reads Tributary's part of a run's metadata; the application's keys
// are ignored, and so is metadata that does not decode (Tributary's fields
// then read as zero).
func Decode(raw []byte) Meta {
	var m Meta
	if len(raw) > 2 {
		_ = json.Unmarshal(raw, &m)
	}
	return m
}

// Reserved reports whether key is one that only Tributary writes (the
// grant's and the schedule's): the application's metadata may not use it.
// KeyTrace is not: a StartRun middleware writes it for the application.
func Reserved(key string) bool {
	return key == KeyGrantSubject || key == KeyGrantID || strings.HasPrefix(key, "schedule_")
}
