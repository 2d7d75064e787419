package schedule

import (
	"time"

	"github.com/google/uuid"
)

// passStats says what a firing pass did, for the logs and, as the fire
// job's recorded output, River UI.
type passStats struct {
	// Batches is how many transactions fired slots.
	Batches int `json:"batches"`
	// Started is how many slots started a run; Prepared how many of
	// those had their run prepared ahead (prepare.go), whose job the pass
	// only made available.
	Started  int `json:"started"`
	Prepared int `json:"prepared,omitempty"`
	// Skipped counts the slots recorded as skipped, by reason.
	Skipped map[string]int `json:"skipped,omitempty"`
	// Failed is how many schedules could not be fired at all (their error is
	// logged); they are left due for the next pass.
	Failed int `json:"failed,omitempty"`
	// delays are the fire delays of the slots that started a run, for the
	// metrics.
	delays []time.Duration
	// denials counts the slots a grant did not admit, by reason.
	denials map[string]int
	// logs are the slots of one batch to log once it has committed; add
	// does not carry them over.
	logs []slotLog
}

// slotLog is a slot fired or skipped, to log.
type slotLog struct {
	scheduleID uuid.UUID
	fireAt     time.Time
	runID      uuid.UUID
	skip       string
}

// Slots is how many slots the pass fired or recorded as skipped.
func (s *passStats) Slots() int {
	n := s.Started
	for _, k := range s.Skipped {
		n += k
	}
	return n
}

func (s *passStats) add(o *passStats) {
	s.delays = append(s.delays, o.delays...)
	s.Batches += o.Batches
	s.Started += o.Started
	s.Prepared += o.Prepared
	s.Failed += o.Failed
	for reason, n := range o.Skipped {
		s.skip(reason, n)
	}
	for reason, n := range o.denials {
		if s.denials == nil {
			s.denials = map[string]int{}
		}
		s.denials[reason] += n
	}
}

func (s *passStats) skip(reason string, n int) {
	if s.Skipped == nil {
		s.Skipped = map[string]int{}
	}
	s.Skipped[reason] += n
}
