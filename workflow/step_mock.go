package workflow

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// stepMocks are the step functions a test put in place of a workflow
// type's own (package tributarytest, through wfruntime.Runtime.MockStep),
// by type and step name. A client no test touched has none, and Step pays
// one atomic load to know it.
type stepMocks struct {
	some atomic.Bool // fns is not empty

	mu  sync.Mutex
	fns map[[2]string]any
}

// set puts fn in place of step name of workflow type typ; a nil fn removes
// the mock.
func (m *stepMocks) set(typ, name string, fn any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fns == nil {
		m.fns = map[[2]string]any{}
	}
	if fn == nil {
		delete(m.fns, [2]string{typ, name})
	} else {
		m.fns[[2]string{typ, name}] = fn
	}
	m.some.Store(len(m.fns) > 0)
}

// of returns the mock of step name of type typ, or nil.
func (m *stepMocks) of(typ, name string) any {
	if !m.some.Load() {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fns[[2]string{typ, name}]
}

// mocked returns the function a test put in place of step name, when
// there is one, as the step's own function type F; ok is false when there
// is none. A mock of another type is an error that names both.
func mocked[F any](w *wfContext, name, resultType string) (fn F, ok bool, err error) {
	mock := w.c.mocks.of(w.info.Type, name)
	if mock == nil {
		return fn, false, nil
	}
	if fn, ok = mock.(F); !ok {
		return fn, false, NonRetryable(fmt.Errorf("workflow: the test's mock of step %q of %s is a %T; the step returns %s: mock it with a func(context.Context) (%s, error)",
			name, w.info.Type, mock, resultType, resultType))
	}
	return fn, true, nil
}
