package tokenstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// DPoPKeyPath returns the DPoP key file, <stem>.dpop.json.
func (s *Store) DPoPKeyPath() string { return s.path(".dpop.json") }

// LoadDPoPKey reads the DPoP key file: (nil, nil) when there is none,
// errors as for Load. The content is the caller's (a private key); an
// empty file is corrupt.
func (s *Store) LoadDPoPKey() ([]byte, error) {
	path := s.DPoPKeyPath()
	data, err := s.read(path)
	if err != nil || data == nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, corruptError(path, "empty")
	}
	return data, nil
}

// CreateDPoPKey writes key as the DPoP key file (0600, sealed when the
// store is) unless the file exists, and returns the key the file holds:
// key, or the one another process created first. The file is created
// whole in one step (a link of a complete temp file), so two processes
// that start with no key end up with the same one, never a mix, and no
// token is ever bound to a key that is then replaced. The file goes with
// Remove (a logout): the next key is a new one.
func (s *Store) CreateDPoPKey(key []byte) ([]byte, error) {
	path := s.DPoPKeyPath()
	if len(key) == 0 {
		return nil, fmt.Errorf("tokenstore: save %s: no key", path)
	}
	data := key
	if s.sealer != nil {
		var err error
		if data, err = s.sealer.seal(path, key); err != nil {
			return nil, err
		}
	}
	tmp, _, err := writeTemp(path, data)
	if err != nil {
		return nil, err
	}
	err = os.Link(tmp, path)
	_ = os.Remove(tmp)
	switch {
	case err == nil:
		if err := syncDir(s.dir); err != nil {
			return nil, fmt.Errorf("tokenstore: sync folder %s: %w", s.dir, unwrapPath(err))
		}
		return key, nil
	case errors.Is(err, fs.ErrExist):
		existing, err := s.LoadDPoPKey()
		if err == nil && existing == nil {
			err = fmt.Errorf("tokenstore: %s was removed while it was created", path)
		}
		return existing, err
	}
	return nil, fmt.Errorf("tokenstore: create %s: %w", path, unwrapPath(err))
}
