// Command hermes-bridge-messaging is the messaging bridge plugin of
// `hermes mcp serve`: the host runs the MCP server and forwards each call of
// the ten messaging tools (conversations_list, conversation_get,
// messages_read, attachments_fetch, events_poll, events_wait,
// messages_send, channels_list, permissions_list_open,
// permissions_respond) to this process, which the host starts and stops.
//
// It reads, under $HERMES_HOME: state.db (the agent's sessions and
// messages, read-only and WAL-safe while the agent writes),
// sessions/sessions.json (the gateway's session index, the fallback when
// state.db has no gateway sessions) and channel_directory.json (names of
// the chats messages can be sent to). It writes: state.db's mcp_approvals
// table (decisions of permissions_respond), one assistant message per
// message it delivered (so it shows in messages_read and as an event; only
// into a conversation that exists), and mcp_events_state.json (the event
// cursors, so they survive a restart). It sends over the network only for
// messages_send: to the Telegram, Discord and Slack APIs, with the bot
// tokens the host passes from .env (TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN,
// SLACK_BOT_TOKEN), or to the API base URLs of the bridge's settings
// (telegram_base_url, discord_base_url, slack_base_url).
//
// A missing HERMES_HOME or state.db does not stop it: the tools answer with
// no data until they appear. A state.db that cannot be read gives tool
// errors, never a crash. It logs to the host through the plugin logger,
// never a message's text nor a token.
//
// Its parts live in internal/: store (the session store and the recorder
// of sent messages), events (the event feed), send (delivery to the
// platforms) and tools (the ten tools and their results).
package main
