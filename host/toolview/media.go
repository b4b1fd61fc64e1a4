package toolview

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxMediaBytes caps one saved media file (image, audio or embedded
// resource blob): 50 MiB decoded.
const maxMediaBytes = 50 << 20

// mediaCap is the size cap in force: maxMediaBytes, lowered only by tests.
var mediaCap = maxMediaBytes

// maxBase64Len is the longest base64 text that can decode to at most
// mediaCap bytes; longer text is refused before decoding.
func maxBase64Len() int { return mediaCap*4/3 + 4 }

// CacheDir returns the media cache folder inside a Hermes home folder.
func CacheDir(home string) string {
	return homedir.Dir(home).MediaCache()
}

// errTooLarge is returned by MediaCache.save when the content exceeds
// maxMediaBytes.
var errTooLarge = errors.New("content exceeds the media size cap")

// MediaCache writes media that tool results carry (images, audio, resource
// blobs), and results too large for the model, into one folder. A file's name is the sha256 of its content plus an
// extension from its MIME type, so saving the same content twice yields the
// same path and writes once. Files are created 0600 in a 0700 folder and
// written atomically. A nil *MediaCache saves nothing: renderers then say
// the content could not be cached.
type MediaCache struct {
	dir string
}

// NewMediaCache returns a cache writing into dir (created on first save).
func NewMediaCache(dir string) *MediaCache {
	return &MediaCache{dir: dir}
}

// save writes data and returns the path of the file holding it. mimeType
// chooses the extension; nameHint (a URI or file name, may be empty) gives
// one when the MIME type is unknown.
func (c *MediaCache) save(data []byte, mimeType, nameHint string) (string, error) {
	if c == nil || c.dir == "" {
		return "", errors.New("no media cache folder")
	}
	if len(data) > mediaCap {
		return "", fmt.Errorf("save %d bytes of %s: %w", len(data), mimeType, errTooLarge)
	}
	sum := sha256.Sum256(data)
	target := filepath.Join(c.dir, hex.EncodeToString(sum[:])+extensionFor(mimeType, nameHint))
	if st, err := os.Stat(target); err == nil && st.Mode().IsRegular() && st.Size() == int64(len(data)) {
		return target, nil
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return "", fmt.Errorf("create media cache folder %s: %w", c.dir, err)
	}
	tmp, err := os.CreateTemp(c.dir, ".media-*")
	if err != nil {
		return "", fmt.Errorf("create temporary file in %s: %w", c.dir, err)
	}
	tmpName := tmp.Name()
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmpName, target)
	}
	if werr != nil {
		_ = os.Remove(tmpName)
		return "", fmt.Errorf("write media file %s: %w", target, werr)
	}
	return target, nil
}

// saveText writes text (up to the media cap; the rest is dropped) to a
// file named by the sha256 of what it holds, streamed without a copy of the
// whole, and returns its path and how many bytes it holds.
func (c *MediaCache) saveText(text, mimeType string) (string, int, error) {
	if c == nil || c.dir == "" {
		return "", 0, errors.New("no cache folder")
	}
	if len(text) > mediaCap {
		text = text[:mediaCap]
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return "", 0, fmt.Errorf("create cache folder %s: %w", c.dir, err)
	}
	tmp, err := os.CreateTemp(c.dir, ".result-*")
	if err != nil {
		return "", 0, fmt.Errorf("create temporary file in %s: %w", c.dir, err)
	}
	tmpName := tmp.Name()
	fail := func(err error) (string, int, error) {
		tmp.Close()
		_ = os.Remove(tmpName)
		return "", 0, fmt.Errorf("write result file in %s: %w", c.dir, err)
	}
	// Through one small buffer: io.WriteString to a writer without
	// WriteString (the hash) copies each piece anew, and a result of
	// tens of MB would leave as much garbage behind it on top of itself.
	h := sha256.New()
	buf := make([]byte, 64<<10)
	for rest := text; rest != ""; {
		n := copy(buf, rest)
		h.Write(buf[:n])
		if _, err := tmp.Write(buf[:n]); err != nil {
			return fail(err)
		}
		rest = rest[n:]
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	target := filepath.Join(c.dir, hex.EncodeToString(h.Sum(nil))+extensionFor(mimeType, ""))
	if err := os.Rename(tmpName, target); err != nil {
		_ = os.Remove(tmpName)
		return "", 0, fmt.Errorf("write result file %s: %w", target, err)
	}
	return target, len(text), nil
}

// decodeBase64 decodes MCP base64 data leniently: padded or unpadded,
// standard or URL alphabet, with whitespace ignored.
func decodeBase64(s string) ([]byte, error) {
	if strings.ContainsAny(s, " \t\r\n") {
		s = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, s)
	}
	var firstErr error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(s)
		if err == nil {
			return b, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, fmt.Errorf("decode base64 (%d chars): %w", len(s), firstErr)
}

// mimeExtensions maps MIME types to file extensions. It is fixed here
// rather than read from the system so names are the same on every machine.
var mimeExtensions = map[string]string{
	"image/png":                ".png",
	"image/jpeg":               ".jpg",
	"image/jpg":                ".jpg",
	"image/gif":                ".gif",
	"image/webp":               ".webp",
	"image/svg+xml":            ".svg",
	"image/bmp":                ".bmp",
	"image/tiff":               ".tiff",
	"image/x-icon":             ".ico",
	"image/vnd.microsoft.icon": ".ico",
	"image/avif":               ".avif",
	"image/heic":               ".heic",
	"audio/mpeg":               ".mp3",
	"audio/mp3":                ".mp3",
	"audio/wav":                ".wav",
	"audio/x-wav":              ".wav",
	"audio/wave":               ".wav",
	"audio/vnd.wave":           ".wav",
	"audio/ogg":                ".ogg",
	"audio/opus":               ".opus",
	"audio/webm":               ".webm",
	"audio/flac":               ".flac",
	"audio/x-flac":             ".flac",
	"audio/aac":                ".aac",
	"audio/mp4":                ".m4a",
	"audio/x-m4a":              ".m4a",
	"video/mp4":                ".mp4",
	"video/webm":               ".webm",
	"video/quicktime":          ".mov",
	"application/pdf":          ".pdf",
	"application/json":         ".json",
	"application/zip":          ".zip",
	"application/gzip":         ".gz",
	"application/x-tar":        ".tar",
	"application/xml":          ".xml",
	"application/octet-stream": ".bin",
	"text/plain":               ".txt",
	"text/csv":                 ".csv",
	"text/html":                ".html",
	"text/markdown":            ".md",
	"text/xml":                 ".xml",
}

// extensionFor picks a file extension from a MIME type, else from the name
// hint's extension when it is short and alphanumeric, else ".bin".
func extensionFor(mimeType, nameHint string) string {
	mt := strings.ToLower(strings.TrimSpace(strings.SplitN(mimeType, ";", 2)[0]))
	if ext, ok := mimeExtensions[mt]; ok {
		return ext
	}
	if nameHint != "" {
		if i := strings.IndexAny(nameHint, "?#"); i >= 0 {
			nameHint = nameHint[:i]
		}
		ext := strings.ToLower(path.Ext(nameHint))
		if len(ext) >= 2 && len(ext) <= 10 && isAlnum(ext[1:]) {
			return ext
		}
	}
	return ".bin"
}

func isAlnum(s string) bool {
	return s != "" && bytes.IndexFunc([]byte(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) < 0
}
