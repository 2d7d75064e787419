package workflow

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// DefaultVersion is the version Version returns for a run that passed the
// point of the call before the call was added: the run's history goes on
// past that point without a version record. Keep the code path such runs
// took under it.
const DefaultVersion = -1

// versionPrefix names a version record: "version:" + the change.
const versionPrefix = "version:"

// Version lets a workflow change while runs of it are in flight. Replay
// matches a run's steps to its recorded history in order, so renaming,
// inserting or reordering steps fails runs recorded by the old code with a
// *DivergenceError. Instead, put the change behind a Version call and keep
// the old path for the runs that need it:
//
//	v, err := workflow.Version(ctx, "send-sms", workflow.DefaultVersion, 1)
//	if err != nil {
//		return "", err
//	}
//	if v == workflow.DefaultVersion {
//		_, err = workflow.Step(ctx, "email", sendEmail) // what runs in flight did
//	} else {
//		_, err = workflow.Step(ctx, "sms", sendSMS) // the new code path
//	}
//
// What Version returns, at the point of the run it is called at:
//
//   - In a run that reaches this point for the first time, maxSupported. The
//     choice is recorded in the run's history (a step record of kind
//     "version" named "version:" + change), with the same guarantee as a
//     step's result (MEMO_BEFORE_PROGRESS): every later replay of the run
//     returns the same version, also under code with a higher
//     maxSupported.
//   - In a run recorded before the call was added, whose history goes on
//     past this point, DefaultVersion. Nothing is recorded: the run's
//     history stays as it was, so the steps after the call still match.
//   - Called again with the same change in the same run, the same version,
//     without a record of its own: one change may guard several places.
//
// Versions outside minSupported..maxSupported fail the run with a
// *DivergenceError, not retried: raise minSupported once no run in flight
// needs an old path, and such a run is caught instead of taking a path
// that no longer exists. A version above maxSupported means the run was
// recorded by newer code (a rollback).
//
// The life of a change: deploy Version(ctx, change, DefaultVersion, 1)
// with both paths; once every run that took DefaultVersion has finished,
// deploy Version(ctx, change, 1, 1) with the new path only. The call may
// then stay, or go once no run in flight recorded it: a version record the
// code no longer asks for is passed over on replay. For the next change of
// the same code, raise maxSupported (a run's recorded version then tells
// which of several paths it took) or use a new change name.
//
// change names the change: stable, unique in the workflow, at most 192
// bytes. Version is a step boundary like Step: call it from the workflow
// function, in the same order on every replay, not from inside a step. A
// bad change name or range fails the run with a *ValidationError.
func Version(ctx Context, change string, minSupported, maxSupported int) (int, error) {
	w := ctx.state()
	name := versionPrefix + change
	if err := validateVersion(change, minSupported, maxSupported); err != nil {
		return 0, w.fail(name, NonRetryable(err))
	}
	asked := fmt.Sprintf("a version from %d to %d", minSupported, maxSupported)
	if v, ok := w.chosenVersion(change); ok {
		return w.checkVersion(change, v, minSupported, maxSupported, asked)
	}

	seq, place, err := w.check(name, StepKindVersion, asked)
	if err != nil {
		return 0, err
	}
	defer w.leave()

	var v int
	switch place {
	case placeAhead:
		v = DefaultVersion
	case placeRecorded:
		m := w.memo(name)
		if m.Kind != StepKindVersion {
			return 0, w.diverge(name, m, asked)
		}
		if err := json.Unmarshal(m.Output, &v); err != nil {
			return 0, w.diverge(name, m, asked+" (the record does not decode: "+err.Error()+")")
		}
	default:
		v = maxSupported
		m := &memo{Name: name, Kind: StepKindVersion, Status: StepStatusCompleted, ResultType: "int", Output: []byte(strconv.Itoa(v)), Seq: &seq}
		at := w.c.now().UTC()
		w.deferMemo(m, at, at, w.memo(name) == nil)
		w.setMemo(m)
	}
	w.chooseVersion(change, v)
	return w.checkVersion(change, v, minSupported, maxSupported, asked)
}

func validateVersion(change string, minSupported, maxSupported int) error {
	switch {
	case change == "":
		return &ValidationError{Field: "version change", Problem: `is empty; name the change, such as "send-sms"`}
	case len(versionPrefix)+len(change) > maxStepNameLength:
		return &ValidationError{Field: "version change", Problem: fmt.Sprintf("%q is %d bytes, the limit is %d", change[:32]+"…", len(change), maxStepNameLength-len(versionPrefix))}
	case maxSupported < 0:
		return &ValidationError{Field: "version range", Problem: fmt.Sprintf("maxSupported of change %q is %d; it is the version new runs record, from 0 up", change, maxSupported)}
	case minSupported < DefaultVersion || minSupported > maxSupported:
		return &ValidationError{Field: "version range", Problem: fmt.Sprintf("minSupported of change %q is %d; it must be from DefaultVersion (-1) to maxSupported (%d)", change, minSupported, maxSupported)}
	}
	return nil
}

// checkVersion fails the run when v, the version the run took, is outside
// the range the code supports.
func (w *wfContext) checkVersion(change string, v, minSupported, maxSupported int, asked string) (int, error) {
	if v >= minSupported && v <= maxSupported {
		return v, nil
	}
	err := &DivergenceError{Step: versionPrefix + change, Replayed: asked}
	if v == DefaultVersion {
		err.Recorded = "no version (the run passed this point before the change)"
		err.hint = fmt.Sprintf("this code no longer supports runs from before change %q: deploy code that still handles DefaultVersion for it, "+
			"or cancel the run and start a new one", change)
	} else {
		err.Recorded = "version " + strconv.Itoa(v)
		err.hint = fmt.Sprintf("deploy code that supports version %d of change %q, or cancel the run and start a new one", v, change)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return 0, w.divergeLocked(err)
}

// chosenVersion is the version a Version call of change returned earlier
// in this attempt.
func (w *wfContext) chosenVersion(change string) (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	v, ok := w.versions[change]
	return v, ok
}

func (w *wfContext) chooseVersion(change string, v int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.versions == nil {
		w.versions = make(map[string]int)
	}
	w.versions[change] = v
}
