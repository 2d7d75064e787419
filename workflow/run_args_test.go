package workflow

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// argsOut is what argsEcho saw of its run.
type argsOut struct {
	In       greetIn         `json:"in"`
	Metadata json.RawMessage `json:"metadata"`
	Parent   string          `json:"parent"`
}

var argsEcho = Define("args_echo", func(ctx Context, in greetIn) (argsOut, error) {
	out := argsOut{In: in, Metadata: ctx.Run().Metadata}
	if ctx.Run().ParentID != nil {
		out.Parent = ctx.Run().ParentID.String()
	}
	return out, nil
}, nil)

// TestRunArgs: a run's first job carries its start inline as one JSON text
// ("start") beside the run id and the tenant, not as nested keys and values
// nor with the type name the kind holds, so that River's GIN index of args
// takes a few entries a job (runArgs); the first attempt starts from it,
// and from a job written before it, in the fields it had then.
func TestRunArgs(t *testing.T) {
	t.Parallel()

	ctx := ctxT(t)
	env := newTestEnv(t)
	idle, err := NewClient(env.pool, &Config{Logger: testLogger(t), Schema: env.db.Schema, Workflows: []Registrable{argsEcho}})
	require.NoError(t, err)

	opts := &StartOpts{Tenant: "acme", Metadata: map[string]any{"source": "signup", "n": 3}}
	lean, err := argsEcho.Start(ctx, idle, greetIn{Name: "lean"}, opts)
	require.NoError(t, err)
	old, err := argsEcho.Start(ctx, idle, greetIn{Name: "old"}, opts)
	require.NoError(t, err)

	var args map[string]any
	require.NoError(t, env.pool.QueryRow(ctx, "SELECT args FROM river_job WHERE args->>'run_id' = $1", lean.ID.String()).Scan(&args))
	require.Equal(t, []string{"run_id", "start", "tenant"}, slices.Sorted(maps.Keys(args)), "args: %v", args)
	start, ok := args["start"].(string)
	require.True(t, ok, "start is not a JSON text: %v", args["start"])
	require.JSONEq(t, `{"input": {"name": "lean"}, "metadata": {"n": 3, "source": "signup"}}`, start)

	// A job as versions before runArgs.Start wrote it: the inline start in
	// nested keys, and the type name.
	tag, err := env.pool.Exec(ctx, `UPDATE river_job SET args = args - 'start'
		|| jsonb_build_object('input', '{"name": "old"}'::jsonb, 'metadata', '{"source": "signup", "n": 3}'::jsonb, 'workflow', 'args_echo')
		WHERE args->>'run_id' = $1`, old.ID.String())
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())

	worker := startClient(t, env.db, argsEcho)
	for name, h := range map[string]*Handle[argsOut]{"lean": lean, "old": old} {
		out, err := argsEcho.Handle(worker, h.ID).Result(ctx)
		require.NoError(t, err, name)
		require.Equal(t, name, out.In.Name)
		require.JSONEq(t, `{"n": 3, "source": "signup"}`, string(out.Metadata), name)
		require.Empty(t, out.Parent, name)
	}
}
