package schedule

import (
	"fmt"
)

// DSTGap says what a fixed-time spec does with a wall time the clocks jump
// over (spring forward).
type DSTGap string

// DST gap policies.
const (
	// DSTGapJump, the default, runs at the first instant after the gap:
	// 02:30 runs at 03:00 on a day when clocks jump from 02:00 to 03:00.
	// Several wall times of one gap run once.
	DSTGapJump DSTGap = "jump"
	// DSTGapShift runs at the wall time moved on by the gap's length:
	// 02:30 runs at 03:30.
	DSTGapShift DSTGap = "shift"
	// DSTGapSkip does not run: the slot is recorded as skipped
	// (Occurrence.Skipped), saying that its time did not exist that day.
	DSTGapSkip DSTGap = "skip"
)

// DSTFold says what a fixed-time spec does with a wall time that occurs
// twice (clocks go back).
type DSTFold string

// DST fold policies.
const (
	// DSTFoldFirst, the default, runs once, at the first instant.
	DSTFoldFirst DSTFold = "first"
	// DSTFoldLast runs once, at the second instant.
	DSTFoldLast DSTFold = "last"
	// DSTFoldBoth runs at both instants, each its own slot.
	DSTFoldBoth DSTFold = "both"
)

// DSTPolicy is what a fixed-time spec does on the days clocks change. The
// zero value is the default: jump, first. A spec that is not fixed-time
// follows real elapsed time whatever its policy: nothing in a gap, both
// instants of a fold. Whatever the policy, two slots that fall on the same
// instant are one occurrence.
type DSTPolicy struct {
	Gap  DSTGap  // "" is DSTGapJump
	Fold DSTFold // "" is DSTFoldFirst
}

// withDefaults returns the policy with its zero fields set to the
// defaults, or an error naming a field that is not a policy.
func (p DSTPolicy) withDefaults() (DSTPolicy, error) {
	switch p.Gap {
	case "":
		p.Gap = DSTGapJump
	case DSTGapJump, DSTGapShift, DSTGapSkip:
	default:
		return p, &ValidationError{Field: "DSTGap", Problem: fmt.Sprintf("%q is not a DST gap policy; use jump, shift or skip", p.Gap)}
	}
	switch p.Fold {
	case "":
		p.Fold = DSTFoldFirst
	case DSTFoldFirst, DSTFoldLast, DSTFoldBoth:
	default:
		return p, &ValidationError{Field: "DSTFold", Problem: fmt.Sprintf("%q is not a DST fold policy; use first, last or both", p.Fold)}
	}
	return p, nil
}

// Describe says what the policy does: "gap shift (a time the clocks jump
// over runs later by the jump's length), fold first (a time that occurs
// twice runs at the first)". Zero fields are the defaults.
func (p DSTPolicy) Describe() string {
	gap := "gap jump (a time the clocks jump over runs right after the jump)"
	switch p.Gap {
	case DSTGapShift:
		gap = "gap shift (a time the clocks jump over runs later by the jump's length)"
	case DSTGapSkip:
		gap = "gap skip (a time the clocks jump over does not run; the slot is recorded as skipped)"
	}
	fold := "fold first (a time that occurs twice runs at the first)"
	switch p.Fold {
	case DSTFoldLast:
		fold = "fold last (a time that occurs twice runs at the second)"
	case DSTFoldBoth:
		fold = "fold both (a time that occurs twice runs at both)"
	}
	return gap + ", " + fold
}

// Validate reports a field of p that is not a policy, as a
// *ValidationError naming it (DSTGap or DSTFold); nil for a valid policy,
// the zero value included.
func (p DSTPolicy) Validate() error {
	_, err := p.withDefaults()
	return err
}

// WithDST returns a copy of the spec with a DST policy; zero fields of
// policy are the defaults. The error is a *ValidationError naming the
// field (DSTGap or DSTFold) that is not a policy.
func (s *Spec) WithDST(policy DSTPolicy) (*Spec, error) {
	policy, err := policy.withDefaults()
	if err != nil {
		return nil, err
	}
	c := *s
	c.dst = policy
	return &c, nil
}

// DST returns the spec's DST policy, with its defaults filled in.
func (s *Spec) DST() DSTPolicy { return s.dst }
