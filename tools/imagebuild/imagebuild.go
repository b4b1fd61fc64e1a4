// Package imagebuild owns the gateway's container image: an OCI image of
// hermes and its shipped plugins, written without a container engine or a
// Dockerfile (go-containerregistry assembles the layers, the config and the
// manifest in memory). The base is our own and distroless in spirit: no
// shell, no package manager, only what a static Go program needs (a
// non-root user, its group, the CA certificates, a /tmp). The image runs
// `hermes mcp gateway --http :8080` as user 65532 with HERMES_HOME on a
// volume, and is reproducible: the same binaries, certificates and creation
// time give the same digest.
//
// It is a build tool (`make image`), never linked into a shipped binary.
package imagebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed facts, which the Helm chart and docs/DEPLOY.md rely on.
const (
	// UID and GID are the non-root user and group the image runs as (the
	// "nonroot" of distroless images).
	UID = 65532
	GID = 65532
	// BinDir is where the binaries are: hermes finds hermes-gateway and its
	// plugins beside itself.
	BinDir = "/usr/local/bin"
	// Home is HERMES_HOME: config.yaml may be mounted elsewhere, but logs,
	// caches and per-person token stores are written here, so it is a
	// volume (the root filesystem can be read-only).
	Home = "/var/lib/hermes"
	// Port is the port of the default --http.
	Port = 8080
	// DefaultCACerts is the CA bundle copied into the image.
	DefaultCACerts = "/etc/ssl/certs/ca-certificates.crt"
	// Platform is the only platform built.
	OS, Arch = "linux", "amd64"
)

// Entrypoint and Cmd are the image's command: `hermes mcp gateway` with the
// default arguments a Deployment may replace (--config, --drain).
var (
	Entrypoint = []string{BinDir + "/hermes", "mcp", "gateway"}
	Cmd        = []string{"--http", ":" + strconv.Itoa(Port)}
)

// Options say what goes into the image.
type Options struct {
	// BinDir is the folder holding the built binaries.
	BinDir string
	// Binaries are the names of the binaries copied from BinDir into
	// /usr/local/bin; hermes and hermes-gateway are required.
	Binaries []string
	// CACerts is the CA bundle file (DefaultCACerts when empty).
	CACerts string
	// Created is the image's creation time and every file's time:
	// the time of the commit the binaries were built from, so that two
	// builds of one commit are the same image. Zero means the Unix epoch.
	Created time.Time
	// Version and Revision go into the org.opencontainers.image labels
	// (version: a tag or a describe string; revision: the commit).
	Version, Revision string
	// Source is the repository URL of the labels.
	Source string
	// CompressionLevel is gzip's level for the layers
	// (gzip.BestCompression when 0); tests use gzip.HuffmanOnly.
	CompressionLevel int
}

// DefaultSource is the repository the labels name.
const DefaultSource = "https://github.com/hermes-agent/hermes"

// Build assembles the image o describes: a base layer (the files a static
// program needs) and a layer of the binaries, on an empty image, with the
// config (entrypoint, env, user, volume, labels) and OCI media types.
func Build(o Options) (v1.Image, error) {
	if len(o.Binaries) == 0 {
		return nil, errors.New("no binaries named: give the shipped ones (make image passes SHIPPED)")
	}
	for _, need := range []string{"hermes", "hermes-gateway"} {
		if !slices.Contains(o.Binaries, need) {
			return nil, fmt.Errorf("binaries %v lack %s: the entrypoint is hermes mcp gateway, which runs hermes-gateway beside hermes", o.Binaries, need)
		}
	}
	o.Binaries = slices.Sorted(slices.Values(o.Binaries))
	if o.CACerts == "" {
		o.CACerts = DefaultCACerts
	}
	if o.CompressionLevel == 0 {
		o.CompressionLevel = gzip.BestCompression
	}
	if o.Source == "" {
		o.Source = DefaultSource
	}
	created := o.Created.UTC()
	if o.Created.IsZero() {
		created = time.Unix(0, 0).UTC()
	}
	base, err := baseLayer(o.CACerts, created)
	if err != nil {
		return nil, err
	}
	bins, err := binariesLayer(o.BinDir, o.Binaries, created)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	var adds []mutate.Addendum
	for _, l := range []struct {
		files []file
		by    string
	}{
		{base, "hermes base: /etc/passwd and /etc/group (nonroot 65532), CA certificates, /tmp, " + Home},
		{bins, "hermes binaries: " + fmt.Sprint(o.Binaries)},
	} {
		layer, err := newLayer(l.files, o.CompressionLevel)
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
			History: v1.History{Created: v1.Time{Time: created}, CreatedBy: l.by, Comment: "make image"}})
	}
	img, err = mutate.Append(img, adds...)
	if err != nil {
		return nil, fmt.Errorf("append the layers: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read the config back: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = OS, Arch
	cf.Created = v1.Time{Time: created}
	cf.Author = "hermes"
	labels := Labels(o, created)
	cf.Config = v1.Config{
		Entrypoint: Entrypoint,
		Cmd:        Cmd,
		Env: []string{
			"PATH=" + BinDir,
			"HERMES_HOME=" + Home,
			"HOME=" + Home,
			"SSL_CERT_FILE=" + DefaultCACerts,
		},
		User:         fmt.Sprintf("%d:%d", UID, GID),
		WorkingDir:   Home,
		Volumes:      map[string]struct{}{Home: {}},
		ExposedPorts: map[string]struct{}{strconv.Itoa(Port) + "/tcp": {}},
		Labels:       labels,
		StopSignal:   "SIGTERM",
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("set the config: %w", err)
	}
	out, ok := mutate.Annotations(img, labels).(v1.Image)
	if !ok {
		return nil, errors.New("annotating the manifest did not give an image")
	}
	return out, nil
}

// Labels are the image's org.opencontainers.image labels (also the
// manifest's annotations).
func Labels(o Options, created time.Time) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":         "hermes-gateway",
		"org.opencontainers.image.description":   "hermes mcp gateway: a team's MCP servers served as one endpoint, with identity, policy, limits and audit",
		"org.opencontainers.image.created":       created.Format(time.RFC3339),
		"org.opencontainers.image.source":        o.Source,
		"org.opencontainers.image.url":           o.Source,
		"org.opencontainers.image.documentation": o.Source + "/blob/main/docs/GATEWAY.md",
		"org.opencontainers.image.vendor":        "hermes",
	}
	if o.Version != "" {
		l["org.opencontainers.image.version"] = o.Version
	}
	if o.Revision != "" {
		l["org.opencontainers.image.revision"] = o.Revision
	}
	return l
}

// file is one entry of a layer: a folder (body nil, dir set), or a
// regular file with its bytes.
type file struct {
	name     string // without a leading slash
	mode     int64
	uid, gid int
	dir      bool
	body     []byte
	mtime    time.Time
}

// baseLayer is what a static Go program needs around it: the user and
// group it runs as (and root's, which tools that read /etc/passwd expect),
// the name service order, the CA bundle, a world-writable /tmp and the
// home volume's mount point owned by the user.
func baseLayer(caCerts string, mtime time.Time) ([]file, error) {
	ca, err := os.ReadFile(caCerts)
	if err != nil {
		return nil, fmt.Errorf("read the CA certificates %s: %w (give another bundle)", caCerts, err)
	}
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		fmt.Sprintf("nonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", UID, GID, Home)
	group := "root:x:0:\n" + fmt.Sprintf("nonroot:x:%d:\n", GID)
	dir := func(name string, mode int64, uid int) file {
		return file{name: name, mode: mode, uid: uid, gid: uid, dir: true, mtime: mtime}
	}
	reg := func(name string, mode int64, body []byte) file {
		return file{name: name, mode: mode, body: body, mtime: mtime}
	}
	return []file{
		dir("etc", 0o755, 0),
		reg("etc/passwd", 0o644, []byte(passwd)),
		reg("etc/group", 0o644, []byte(group)),
		reg("etc/nsswitch.conf", 0o644, []byte("hosts: files dns\n")),
		dir("etc/ssl", 0o755, 0),
		dir("etc/ssl/certs", 0o755, 0),
		reg("etc/ssl/certs/ca-certificates.crt", 0o644, ca),
		dir("tmp", 0o1777, 0),
		dir("var", 0o755, 0),
		dir("var/lib", 0o755, 0),
		dir("var/lib/hermes", 0o700, UID),
	}, nil
}

// binariesLayer is /usr/local/bin with the named binaries of dir.
func binariesLayer(dir string, names []string, mtime time.Time) ([]file, error) {
	files := []file{
		{name: "usr", mode: 0o755, dir: true, mtime: mtime},
		{name: "usr/local", mode: 0o755, dir: true, mtime: mtime},
		{name: "usr/local/bin", mode: 0o755, dir: true, mtime: mtime},
	}
	for _, n := range names {
		if n != filepath.Base(n) || n == "." || n == ".." {
			return nil, fmt.Errorf("binary %q: give a file name, not a path", n)
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, fmt.Errorf("read binary %s: %w (run make build first)", n, err)
		}
		files = append(files, file{name: path.Join("usr/local/bin", n), mode: 0o755, body: b, mtime: mtime})
	}
	return files, nil
}

// newLayer writes files into a tar (sorted by name, fixed owners and
// times, no user or group names, PAX-free) and makes it a gzip-compressed
// OCI layer whose compressed bytes are computed once.
func newLayer(files []file, level int) (v1.Layer, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b file) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.gid, ModTime: f.mtime, Format: tar.FormatUSTAR}
		if f.dir {
			h.Typeflag, h.Name = tar.TypeDir, f.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", f.name, err)
		}
		if !f.dir {
			if _, err := tw.Write(f.body); err != nil {
				return nil, fmt.Errorf("layer entry %s: %w", f.name, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close the layer's tar: %w", err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithCompressionLevel(level), tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("compress the layer: %w", err)
	}
	return l, nil
}
