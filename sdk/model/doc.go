// Package model is the contract of model plugins (hermes-model-<name>): a
// chat completion of one model endpoint, streamed, with tool calls. The
// host owns the conversation, the agent loop and the settings (the model:
// block of config.yaml, the API key's lookup); the plugin only makes one
// completion when asked, answers the assistant's message, its tool calls
// and the tokens used, and sends the text as it streams in. A plugin
// implements Model in one small main and calls Serve (the host's side is
// sdk/pluginhost: it opens the Model once per process with a Config, and
// keeps the process for a whole chat).
//
// A completion is cancelled by its context: the host's ends the plugin's,
// the process stays. A failure of the endpoint is an *Error with a Kind
// the host decides on (and words for the user); any other error is a
// failure of the plugin. The API key reaches the plugin in Config only:
// never in argv or the environment, and neither side logs it.
//
// This package depends on go-plugin, hclog and the sdk root only.
package model
