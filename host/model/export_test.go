package model

import "github.com/hermes-agent/hermes/host/supervisor"

// Running returns the running model plugin, nil when none runs.
func (c *Client) Running() *supervisor.Plugin {
	if _, p, ok := c.inst.Current(); ok {
		return p
	}
	return nil
}
