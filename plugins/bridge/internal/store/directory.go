package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hermes-agent/hermes/statedb"
)

// MaxDirectoryFileSize bounds channel_directory.json: a larger file is
// refused rather than read into memory.
const MaxDirectoryFileSize = 16 << 20

// Channel is a place messages can be sent to.
type Channel struct {
	// Target is "<platform>:<id>", or just "<platform>" when the entry
	// has no id; messages_send accepts it as is.
	Target   string `json:"target"`
	Platform string `json:"platform"`
	Name     string `json:"name"`
	ChatType string `json:"chat_type"`
}

// ParseDirectory parses the content of channel_directory.json:
// {"updated_at": ..., "platforms": {"<platform>": [{"id"|"chat_id",
// "name"|"display_name", "type"}, ...]}}. Platforms and channels keep the
// file's order; entries that are not objects are skipped and a field of
// the wrong type reads as empty. An object without "platforms" has no
// channels. Data larger than MaxDirectoryFileSize is refused.
func ParseDirectory(data []byte) ([]Channel, error) {
	if len(data) > MaxDirectoryFileSize {
		return nil, fmt.Errorf("channel directory of %d bytes is larger than MaxDirectoryFileSize (%d bytes); delete it, the gateway rebuilds it", len(data), MaxDirectoryFileSize)
	}
	top, ok := statedb.JSONObject(data)
	if !ok {
		return nil, errors.New("channel directory is not a JSON object; delete it, the gateway rebuilds it")
	}
	platforms, err := orderedObject(top["platforms"])
	if err != nil {
		return nil, nil // absent or not an object: no channels
	}
	out := []Channel{}
	for _, p := range platforms {
		var list []json.RawMessage
		if json.Unmarshal(p.value, &list) != nil {
			continue
		}
		for _, raw := range list {
			ch, ok := statedb.JSONObject(raw)
			if !ok {
				continue
			}
			id, present := ch["id"]
			if !present {
				id = ch["chat_id"]
			}
			name, present := ch["name"]
			if !present {
				name = ch["display_name"]
			}
			c := Channel{Platform: p.key, Name: statedb.JSONString(name), ChatType: statedb.JSONString(ch["type"]), Target: p.key}
			if chatID := statedb.JSONString(id); chatID != "" {
				c.Target = p.key + ":" + chatID
			}
			out = append(out, c)
		}
	}
	return out, nil
}

type member struct {
	key   string
	value json.RawMessage
}

// orderedObject decodes a JSON object keeping the order of its members.
func orderedObject(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("object key is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, value: v})
	}
	return out, nil
}

// Channels lists the channels of channel_directory.json, only those of
// platform when it is not "" (case-insensitive). When the directory is
// missing, unreadable or an empty object, it falls back to the session
// index: one channel per distinct "<platform>:<origin.chat_id>", named by
// the conversation's display name or chat name.
func (s *Store) Channels(ctx context.Context, platform string) ([]Channel, error) {
	path := filepath.Join(s.home, DirectoryFile)
	// A missing, unreadable or empty directory is no directory, as in the
	// original bridge: the session index still names the chats.
	if data, err := readBounded(path, MaxDirectoryFileSize, "MaxDirectoryFileSize"); err == nil {
		if top, ok := statedb.JSONObject(data); ok && len(top) > 0 {
			if chans, err := ParseDirectory(data); err == nil {
				return filterChannels(chans, platform), nil
			}
		}
	}
	entries, _, err := s.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	out := []Channel{}
	seen := map[string]bool{}
	for _, e := range entries {
		p := e.Platform
		if p == "" {
			p = e.Origin.Platform
		}
		if p == "" || e.Origin.ChatID == "" || e.Terminal {
			continue // a terminal conversation is no channel to send to
		}
		if platform != "" && !strings.EqualFold(p, platform) {
			continue
		}
		target := p + ":" + e.Origin.ChatID
		if seen[target] {
			continue
		}
		seen[target] = true
		name := e.DisplayName
		if name == "" {
			name = e.Origin.ChatName
		}
		chatType := e.ChatType
		if chatType == "" {
			chatType = e.Origin.ChatType
		}
		out = append(out, Channel{Target: target, Platform: p, Name: name, ChatType: chatType})
	}
	return out, nil
}

func filterChannels(chans []Channel, platform string) []Channel {
	if platform == "" {
		return chans
	}
	out := []Channel{}
	for _, c := range chans {
		if strings.EqualFold(c.Platform, platform) {
			out = append(out, c)
		}
	}
	return out
}
