package tokenstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// lockRetry is how often Lock tries again while another holder has the
// lock.
const lockRetry = 10 * time.Millisecond

// Lock takes the server's cross-process lock, <stem>.lock (an flock, so a
// crashed holder releases it), waiting as long as ctx allows. It is also
// exclusive between callers of this Store, and not reentrant: do not call
// Lock again before unlocking. unlock is safe to call more than once.
// Prefer RefreshLocked, which runs the whole read-decide-write under it.
func (s *Store) Lock(ctx context.Context) (unlock func(), err error) {
	path := s.LockPath()
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("tokenstore: lock %s: %w", path, ctx.Err())
	}
	release := func() { <-s.sem }
	if err := ensureDir(s.dir); err != nil {
		release()
		return nil, err
	}
	for {
		fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDONLY|oNoFollow|oNonblock), flock.SetPermissions(0o600))
		ok, err := fl.TryLockContext(ctx, lockRetry)
		if err == nil && !ok {
			err = ctx.Err()
		}
		if err != nil {
			release()
			if isSymlink(path) {
				return nil, symlinkError(path)
			}
			return nil, fmt.Errorf("tokenstore: lock %s: %w", path, unwrapPath(err))
		}
		// The file locked must still be the one at path: a Remove may have
		// deleted it while this waited, and a newcomer would lock a new
		// file at path. Then lock again.
		if same, err := sameFile(fl, path); same || err != nil {
			if err != nil {
				_ = fl.Unlock()
				release()
				return nil, err
			}
			var once sync.Once
			return func() {
				once.Do(func() {
					_ = fl.Unlock()
					release()
				})
			}, nil
		}
		_ = fl.Unlock()
	}
}

// sameFile reports whether the locked file is the file at path now.
func sameFile(fl *flock.Flock, path string) (bool, error) {
	held, err := fl.Stat()
	if err != nil {
		return false, fmt.Errorf("tokenstore: lock %s: %w", path, unwrapPath(err))
	}
	now, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("tokenstore: lock %s: %w", path, unwrapPath(err))
	}
	return os.SameFile(held, now), nil
}

// RefreshLocked runs one read-decide-write of the token under the lock, so
// that two processes never both spend one refresh token:
//
//  1. take the lock (bounded by ctx);
//  2. read the token file again (another process may have refreshed it);
//  3. call fn with that token: nil when there is none or the file is
//     corrupt; fn gets a copy it may modify. fn decides: the on-disk token
//     is still valid (a process refreshed it meanwhile), so return it
//     (or nil) unchanged; or it is expired, so refresh and return the
//     response, e.g. FromOAuth2(tok);
//  4. if fn returned a token that differs from the file's, save
//     Merge(current, returned) atomically, with LastRefresh set to now
//     when the access token changed (unless fn set it): a response without
//     a refresh_token keeps the old one;
//  5. unlock.
//
// It returns the token now on disk: the saved one, or the current one when
// nothing was saved. An error of fn is returned as is (nothing is saved).
// A corrupt file is passed to fn as nil; if fn then returns nil, the error
// wrapping ErrCorrupt is returned. fn must not call Lock or RefreshLocked
// on this Store (it would wait for itself); it may call PoisonClient and
// the client and meta methods.
func (s *Store) RefreshLocked(ctx context.Context, fn func(current *Token) (*Token, error)) (*Token, error) {
	unlock, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	current, loadErr := s.Load()
	if loadErr != nil && !errors.Is(loadErr, ErrCorrupt) {
		return nil, loadErr
	}
	next, err := fn(current.Clone())
	if err != nil {
		return nil, err
	}
	if next == nil {
		return current, loadErr
	}
	if current != nil {
		a, errA := current.encode()
		b, errB := next.encode()
		if errA == nil && errB == nil && bytes.Equal(a, b) {
			return current, nil
		}
	}
	merged := Merge(current, next)
	if current != nil && merged.AccessToken != current.AccessToken &&
		(next.LastRefresh == 0 || next.LastRefresh == current.LastRefresh) {
		merged.LastRefresh = time.Now().Unix()
	}
	if err := s.Save(merged); err != nil {
		return nil, err
	}
	return merged, nil
}
