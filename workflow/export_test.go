package workflow

import "time"

// WithLocalClock makes local the machine clock under the database's clock
// of a client built with config (Config.Clock unset): the clock-skew tests
// give clients machines whose clocks run fast or slow.
func WithLocalClock(config *Config, local func() time.Time) *Config {
	config.localClock = local
	return config
}
