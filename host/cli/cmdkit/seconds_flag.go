package cmdkit

import (
	"fmt"
	"time"

	"github.com/hermes-agent/hermes/host/fields"
	"github.com/urfave/cli/v3"
)

// TimeFlag is a flag holding a length of time, written either as a number
// of seconds (30, 2.5) or as a duration (30s, 2m, 1m30s): every time flag
// of hermes takes both forms, as config.yaml's time keys do (add
// --connect-timeout 5s and install --probe-timeout 150 were each refused,
// one wanting a whole number, the other a duration).
type TimeFlag = cli.FlagBase[time.Duration, cli.NoConfig, SecondsValue]

// SecondsValue is timeFlag's value.
type SecondsValue time.Duration

// Create is part of cli.ValueCreator.
func (SecondsValue) Create(val time.Duration, p *time.Duration, _ cli.NoConfig) cli.Value {
	*p = val
	return (*SecondsValue)(p)
}

// ToString is part of cli.ValueCreator.
func (SecondsValue) ToString(val time.Duration) string { return val.String() }

// Set reads a number of seconds or a duration; it must be above 0.
func (d *SecondsValue) Set(s string) error {
	secs, ok := fields.Seconds(s)
	if !ok || !(secs > 0) || secs > (1<<63-1)/float64(time.Second) {
		return fmt.Errorf("want seconds (30) or a duration (30s, 2m) above 0")
	}
	*d = SecondsValue(time.Duration(secs * float64(time.Second)))
	return nil
}

// Get is part of cli.Value.
func (d *SecondsValue) Get() any { return time.Duration(*d) }

// String is part of cli.Value.
func (d *SecondsValue) String() string { return time.Duration(*d).String() }
