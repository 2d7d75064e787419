package schedule

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tributary-go/tributary/workflow"
)

// retryJSON is the stored form of a schedule's retry policy (the retry
// column): nil for none (nil, or the zero policy: the type's), else the
// policy's JSON. An invalid policy is a *ValidationError naming its field
// ("Retry.Factor").
func retryJSON(p *workflow.RetryPolicy) ([]byte, error) {
	if p == nil || p.IsZero() {
		return nil, nil
	}
	if err := p.Validate(); err != nil {
		var verr *workflow.ValidationError
		if errors.As(err, &verr) {
			return nil, &ValidationError{Field: verr.Field, Problem: verr.Problem}
		}
		return nil, err
	}
	doc, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("schedule: encode retry policy: %w", err)
	}
	return doc, nil
}

// retryOf is a stored retry policy; nil for none, or for one that does not
// decode (the run then follows the type's, and the firing client reports
// the bad policy when it starts the run).
func retryOf(doc []byte) *workflow.RetryPolicy {
	if len(doc) == 0 {
		return nil
	}
	p := new(workflow.RetryPolicy)
	if json.Unmarshal(doc, p) != nil {
		return nil
	}
	return p
}

// retryText is a schedule's retry policy for people.
func retryText(p *workflow.RetryPolicy) string {
	if p == nil {
		return "the workflow type's"
	}
	return p.String()
}

// orZeroRetry is p, or the zero policy for nil: an UpdateParams.Retry
// that removes the policy.
func orZeroRetry(p *workflow.RetryPolicy) *workflow.RetryPolicy {
	if p == nil {
		return &workflow.RetryPolicy{}
	}
	return p
}
