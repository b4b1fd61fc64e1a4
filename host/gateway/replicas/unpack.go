package replicas

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Image is what a runtime reads from an image's config to start it.
type Image struct {
	// Root is the folder the layers were applied into: it stands for /.
	Root string
	// Entrypoint, Cmd, Env, WorkingDir and User are the config's.
	Entrypoint, Cmd, Env []string
	WorkingDir, User     string
	// Volumes are the config's volume mount points.
	Volumes []string
	// Digest is the manifest's digest.
	Digest string
}

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

// maxJSON bounds the index, manifest and config read from a layout.
const maxJSON = 4 << 20

// Unpack reads the one image of the OCI layout in dir (its index names
// one manifest) and applies its layers in order into root, as a container
// runtime does: regular files, folders and links with their modes, a
// ".wh." entry removing what an earlier layer put there and ".wh..wh..opq"
// emptying a folder. Ownership is not applied (the replicas run as the
// test's user). An entry that would land outside root is refused.
func Unpack(dir, root string) (*Image, error) {
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := readJSON(filepath.Join(dir, "index.json"), &index); err != nil {
		return nil, err
	}
	if len(index.Manifests) != 1 {
		return nil, fmt.Errorf("%s: index.json names %d manifests, want one", dir, len(index.Manifests))
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := readJSON(blob(dir, index.Manifests[0].Digest), &manifest); err != nil {
		return nil, err
	}
	var config struct {
		Config struct {
			Entrypoint, Cmd, Env []string
			WorkingDir, User     string
			Volumes              map[string]struct{}
		} `json:"config"`
	}
	if err := readJSON(blob(dir, manifest.Config.Digest), &config); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("create the root %s: %w", root, err)
	}
	for i, l := range manifest.Layers {
		if err := applyLayer(blob(dir, l.Digest), l.MediaType, root); err != nil {
			return nil, fmt.Errorf("layer %d (%s): %w", i, l.Digest, err)
		}
	}
	img := &Image{Root: root, Entrypoint: config.Config.Entrypoint, Cmd: config.Config.Cmd, Env: config.Config.Env,
		WorkingDir: config.Config.WorkingDir, User: config.Config.User, Digest: index.Manifests[0].Digest}
	for v := range config.Config.Volumes {
		img.Volumes = append(img.Volumes, v)
	}
	return img, nil
}

// blob is the path of a blob of the layout dir.
func blob(dir, digest string) string {
	alg, hex, _ := strings.Cut(digest, ":")
	return filepath.Join(dir, "blobs", filepath.Base(alg), filepath.Base(hex))
}

func readJSON(file string, v any) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	defer f.Close()
	if err := json.NewDecoder(io.LimitReader(f, maxJSON)).Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", file, err)
	}
	return nil
}

// applyLayer applies the tar (gzip-compressed when the media type says
// so) of file into root.
func applyLayer(file, mediaType, root string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("open the layer: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(mediaType, "+gzip") || strings.HasSuffix(mediaType, ".gzip") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("gunzip the layer: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the layer: %w", err)
		}
		if err := applyEntry(tr, h, root); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
}

// applyEntry applies one tar entry into root.
func applyEntry(r io.Reader, h *tar.Header, root string) error {
	name := path.Clean("/" + h.Name)
	if name == "/" {
		return nil
	}
	dst := filepath.Join(root, filepath.FromSlash(name))
	if !strings.HasPrefix(dst, filepath.Clean(root)+string(filepath.Separator)) {
		return errors.New("outside the root")
	}
	dir, base := filepath.Split(dst)
	if base == ".wh..wh..opq" {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	if gone, ok := strings.CutPrefix(base, ".wh."); ok {
		return os.RemoveAll(filepath.Join(dir, gone))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := fs.FileMode(h.Mode).Perm()
	if h.Mode&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		return os.Chmod(dst, mode|fs.ModeDir)
	case tar.TypeReg:
		_ = os.RemoveAll(dst)
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return os.Chmod(dst, mode)
	case tar.TypeSymlink:
		_ = os.RemoveAll(dst)
		return os.Symlink(h.Linkname, dst)
	case tar.TypeLink:
		target := filepath.Join(root, filepath.FromSlash(path.Clean("/"+h.Linkname)))
		_ = os.RemoveAll(dst)
		return os.Link(target, dst)
	}
	return fmt.Errorf("entry type %q not supported", h.Typeflag)
}
