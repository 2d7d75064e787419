package cli

import (
	"errors"
	"fmt"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// checkTenantFlag refuses a --tenant that is not a valid tenant name
// (workflow.CheckTenant), in the flag's words, before anything is read or
// written; "" passes (no tenant, or a schedule owner's).
func checkTenantFlag(value string) error {
	if value == "" {
		return nil
	}
	err := workflow.CheckTenant("--tenant", value)
	var invalid *workflow.ValidationError
	if errors.As(err, &invalid) {
		return withHint(usageErrorf("--tenant %s", invalid.Problem),
			fmt.Sprintf("pass a name of 1 to %d bytes of printable characters, such as acme or customer-42", workflow.MaxTenantBytes))
	}
	return err
}

// runTenantText says which tenant a schedule's runs carry (its RunTenant)
// and why: "acme (the owner)", "globex" (set on the schedule), or "-".
func runTenantText(s *schedule.Schedule) string {
	tenant := s.RunTenant()
	switch {
	case tenant == "":
		return "-"
	case s.Tenant == "":
		return oneLine(tenant) + " (the owner)"
	}
	return oneLine(tenant)
}

// runTenantDetail is runTenantText for `schedule get`, which also says
// why a schedule's runs have none and how to give them one.
func runTenantDetail(s *schedule.Schedule) string {
	if s.RunTenant() != "" {
		return runTenantText(s)
	}
	if s.Owner == "" {
		return "none (the schedule has neither an owner nor a tenant)"
	}
	return fmt.Sprintf("none (the owner is not a valid tenant name, which is 1 to %d bytes of printable characters with no space at either end; "+
		"give its runs one with 'tributary schedule update %s --tenant <tenant>')", workflow.MaxTenantBytes, scheduleArgs(s))
}
