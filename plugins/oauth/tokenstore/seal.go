package tokenstore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SealKeySize is the size of the key NewSealed takes.
const SealKeySize = 32

// sealFormat names the format of a sealed file: AES-256-GCM under a key
// derived from the store's key (HKDF-SHA256), a random 96-bit nonce, and
// the file's name as associated data, so a sealed file opens under its own
// name only (a token file renamed to another server's, or to the client
// file, does not).
const sealFormat = "hermes-a256gcm-v1"

// ErrWrongKey: a sealed file does not open with the store's key (it was
// sealed with another key, or altered). The file is left in place.
var ErrWrongKey = errors.New("does not open with this folder's key (sealed with another key, or altered)")

// sealedFile is a sealed file's content.
type sealedFile struct {
	Sealed string `json:"sealed"`
	Nonce  []byte `json:"nonce"`
	Data   []byte `json:"data"`
}

// sealer seals and opens the files of a sealed store.
type sealer struct {
	aead cipher.AEAD
}

func newSealer(key []byte) (*sealer, error) {
	if len(key) != SealKeySize {
		return nil, fmt.Errorf("tokenstore: the seal key has %d bytes, want %d", len(key), SealKeySize)
	}
	fileKey, err := hkdf.Key(sha256.New, key, nil, "hermes tokenstore files v1", 32)
	if err != nil {
		return nil, fmt.Errorf("tokenstore: derive the file key: %w", err)
	}
	block, err := aes.NewCipher(fileKey)
	if err != nil {
		return nil, fmt.Errorf("tokenstore: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("tokenstore: %w", err)
	}
	return &sealer{aead: aead}, nil
}

// seal encrypts plain, the content of the file at path.
func (s *sealer) seal(path string, plain []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce) // never fails (crypto/rand since Go 1.24)
	f := sealedFile{Sealed: sealFormat, Nonce: nonce, Data: s.aead.Seal(nil, nonce, plain, []byte(filepath.Base(path)))}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("tokenstore: seal %s: %w", path, err)
	}
	return append(b, '\n'), nil
}

// open decrypts data, the content of the file at path. A file that is not
// sealed is corrupt here; one that does not open is ErrWrongKey.
func (s *sealer) open(path string, data []byte) ([]byte, error) {
	var f sealedFile
	if json.Unmarshal(data, &f) != nil || f.Sealed == "" {
		return nil, corruptError(path, "not sealed, and this folder's files must be")
	}
	if f.Sealed != sealFormat || len(f.Nonce) != s.aead.NonceSize() {
		return nil, corruptError(path, fmt.Sprintf("sealed in an unknown format (want %s)", sealFormat))
	}
	plain, err := s.aead.Open(nil, f.Nonce, f.Data, []byte(filepath.Base(path)))
	if err != nil {
		return nil, fmt.Errorf("tokenstore: %s %w", path, ErrWrongKey)
	}
	return plain, nil
}

// NewSealed is New for a folder whose files are sealed with key
// (SealKeySize bytes; auth.Config.Seal): every file is written encrypted
// and authenticated, and a file is read only when it opens with key. A
// store made with New reads a sealed file as corrupt.
func NewSealed(dir, server string, key []byte) (*Store, error) {
	s, err := New(dir, server)
	if err != nil {
		return nil, err
	}
	if s.sealer, err = newSealer(key); err != nil {
		return nil, err
	}
	return s, nil
}

// Sealed reports whether the store seals its files.
func (s *Store) Sealed() bool { return s.sealer != nil }

// read reads the file at path, opened when the store is sealed; its
// results are readFile's.
func (s *Store) read(path string) ([]byte, error) {
	data, _, err := s.readInfo(path)
	return data, err
}

// readInfo is read with the file's info.
func (s *Store) readInfo(path string) ([]byte, os.FileInfo, error) {
	data, fi, err := readFile(path)
	if err != nil || data == nil || s.sealer == nil {
		return data, fi, err
	}
	plain, err := s.sealer.open(path, data)
	return plain, fi, err
}

// write writes data to the file at path, sealed when the store is.
func (s *Store) write(path string, data []byte) (os.FileInfo, error) {
	if s.sealer != nil {
		var err error
		if data, err = s.sealer.seal(path, data); err != nil {
			return nil, err
		}
	}
	return writeFile(path, data)
}
