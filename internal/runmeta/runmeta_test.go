package runmeta

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeysMatchTags holds the Key constants equal to Meta's JSON tags, so
// that each key is spelled once.
func TestKeysMatchTags(t *testing.T) {
	t.Parallel()

	keys := map[string]string{
		"GrantSubject": KeyGrantSubject, "GrantID": KeyGrantID, "Zone": KeyZone, "FireAt": KeyFireAt,
		"Nominal": KeyNominal, "DSTNote": KeyDSTNote, "Trigger": KeyTrigger, "Queued": KeyQueued,
		"Backfill": KeyBackfill, "RerunOf": KeyRerunOf, "Trace": KeyTrace,
	}
	typ := reflect.TypeFor[Meta]()
	require.Equal(t, len(keys), typ.NumField())
	for field := range typ.Fields() {
		tag, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		require.Equal(t, keys[field.Name], tag, field.Name)
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()

	m := Decode([]byte(`{"grant_subject": "bot", "schedule_queued": true, "mine": 1, "otel": {"traceparent": "00-x"}}`))
	require.Equal(t, Meta{GrantSubject: "bot", Queued: true, Trace: map[string]string{"traceparent": "00-x"}}, m)
	require.Equal(t, Meta{}, Decode([]byte(`{}`)))
	require.Equal(t, Meta{}, Decode(nil))
	require.True(t, (&Meta{}).IsZero())
	require.False(t, (&Meta{Backfill: true}).IsZero())
	require.True(t, Reserved("schedule_anything"))
	require.True(t, Reserved(KeyGrantID))
	require.False(t, Reserved(KeyTrace))
	require.False(t, Reserved("mine"))
}
