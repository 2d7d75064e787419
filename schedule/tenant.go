package schedule

import (
	"errors"

	"github.com/tributary-go/tributary/workflow"
)

// RunTenant is the tenant of the runs the schedule starts: Tenant when
// set, else the Owner when it is a valid tenant name
// (workflow.CheckTenant), else "" (runs without a tenant). Every run the
// schedule starts (a slot's, a trigger's, a backfill's) carries the
// RunTenant of the schedule as it was read when the run started; an
// Update applies to the runs started after it, not to those started
// before.
func (s *Schedule) RunTenant() string {
	switch {
	case s.Tenant != "":
		return s.Tenant
	case s.Owner != "" && workflow.CheckTenant("Owner", s.Owner) == nil:
		return s.Owner
	}
	return ""
}

// checkTenant refuses, as a *ValidationError of field, a tenant that is
// not a valid tenant name (workflow.CheckTenant).
func checkTenant(field, tenant string) error {
	err := workflow.CheckTenant(field, tenant)
	var invalid *workflow.ValidationError
	if errors.As(err, &invalid) {
		return &ValidationError{Field: invalid.Field, Problem: invalid.Problem}
	}
	return err
}
