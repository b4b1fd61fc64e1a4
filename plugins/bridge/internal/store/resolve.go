package store

import (
	"context"
	"strings"
	"time"
)

// ResolveTimeout bounds one Resolve: reading the channel directory, or the
// session index it falls back to.
const ResolveTimeout = 5 * time.Second

// Resolve looks a channel name up in the channels Channels lists for
// platform (channel_directory.json, else the session index) and returns its
// chat id: the send package's Directory, for targets such as
// "discord:#general". The name matches a channel's name case-insensitively,
// with or without a leading '#'. A name that matches no channel, or
// channels with different ids, does not resolve: a message never goes to a
// chat the name does not single out.
func (s *Store) Resolve(platform, name string) (chatID string, ok bool) {
	want := channelKey(name)
	if want == "" {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), ResolveTimeout)
	defer cancel()
	chans, err := s.Channels(ctx, platform)
	if err != nil {
		return "", false
	}
	for _, c := range chans {
		id, hasID := strings.CutPrefix(c.Target, c.Platform+":")
		if !hasID || id == "" || channelKey(c.Name) != want {
			continue
		}
		if chatID != "" && chatID != id {
			return "", false // ambiguous
		}
		chatID = id
	}
	return chatID, chatID != ""
}

// channelKey is a channel name as Resolve compares it.
func channelKey(name string) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "#"))
}
