package main

import (
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/bridge"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/send"
	"github.com/hermes-agent/hermes/plugins/bridge/internal/tools"
)

func main() {
	log := sdk.NewPluginLogger(sdk.KindBridge)
	bridge.Serve(description(), opener(log), sdk.WithLogger(log))
}

// changing are the tools that change something: messages_send delivers a
// message, permissions_respond records a decision. The others only read.
var changing = map[string]bool{tools.MessagesSend: true, tools.PermissionsRespond: true}

// description is what the plugin offers: the ten tools with their input
// and output schemas, the original's server name and instructions, and
// the bot tokens of .env it needs to send.
func description() bridge.Description {
	d := bridge.Description{
		Name:         tools.ServerName,
		Instructions: tools.Instructions,
		Env:          []string{send.TelegramTokenVar, send.DiscordTokenVar, send.SlackTokenVar},
	}
	for _, t := range tools.Definitions() {
		d.Tools = append(d.Tools, bridge.Tool{
			Name:         t.Name,
			Description:  t.Description,
			InputSchema:  t.InputSchema,
			OutputSchema: t.OutputSchema,
			ReadOnly:     !changing[t.Name],
			// Nothing is deleted or overwritten: a send adds a message,
			// a decision answers an open request once.
			Destructive: false,
		})
	}
	return d
}
