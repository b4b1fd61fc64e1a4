package imagebuild_test

import (
	"archive/tar"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/hermes-agent/hermes/tools/imagebuild"
)

// fakeBins is a folder of stand-ins for the binaries (their bytes differ
// per name) and a CA bundle.
func fakeBins(t *testing.T) (dir, ca string, names []string) {
	t.Helper()
	dir = t.TempDir()
	names = []string{"hermes", "hermes-gateway", "hermes-transport-stdio", "hermes-stdio-launcher"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("\x7fELF stand-in for "+n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ca = filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, ca, names
}

func build(t *testing.T, o imagebuild.Options) v1.Image {
	t.Helper()
	img, err := imagebuild.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// Two builds of the same binaries at the same time are the same image,
// byte for byte in both outputs; another creation time is another image.
func TestBuildIsReproducible(t *testing.T) {
	t.Parallel()
	dir, ca, names := fakeBins(t)
	created := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	o := imagebuild.Options{BinDir: dir, Binaries: names, CACerts: ca, Created: created, Version: "v1.0.0", Revision: "abc"}
	a, b := build(t, o), build(t, o)
	if digest(t, a) != digest(t, b) {
		t.Fatalf("two builds: %s and %s", digest(t, a), digest(t, b))
	}
	// The binaries listed in another order make the same image.
	o2 := o
	o2.Binaries = slices.Clone(names)
	slices.Reverse(o2.Binaries)
	if d := digest(t, build(t, o2)); d != digest(t, a) {
		t.Fatalf("binaries in another order: %s, want %s", d, digest(t, a))
	}
	later := o
	later.Created = created.Add(time.Second)
	if digest(t, build(t, later)) == digest(t, a) {
		t.Fatal("another creation time made the same digest: the time is not in the image")
	}
	out1, out2 := t.TempDir(), t.TempDir()
	for i, out := range []string{out1, out2} {
		img := []v1.Image{a, b}[i]
		if err := imagebuild.WriteLayout(filepath.Join(out, "oci"), img, "hermes-gateway:test"); err != nil {
			t.Fatal(err)
		}
		if err := imagebuild.WriteTarball(filepath.Join(out, "image.tar"), img, "hermes-gateway:test"); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"oci/index.json", "oci/oci-layout", "image.tar"} {
		if sum(t, filepath.Join(out1, f)) != sum(t, filepath.Join(out2, f)) {
			t.Errorf("%s differs between two builds", f)
		}
	}
	// The layout reads back as the same image.
	p, err := layout.FromPath(filepath.Join(out1, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != digest(t, a) || im.Manifests[0].Annotations[imagebuild.RefNameAnnotation] != "hermes-gateway:test" {
		t.Fatalf("the layout's index: %+v", im.Manifests)
	}
}

// The config runs hermes mcp gateway as the non-root user, with
// HERMES_HOME on a volume, on linux/amd64, with the OCI labels.
func TestConfig(t *testing.T) {
	t.Parallel()
	dir, ca, names := fakeBins(t)
	img := build(t, imagebuild.Options{BinDir: dir, Binaries: names, CACerts: ca, Version: "v1.0.0", Revision: "abc"})
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/hermes", "mcp", "gateway"}) || !slices.Equal(c.Cmd, []string{"--http", ":8080"}) {
		t.Errorf("entrypoint %q, cmd %q", c.Entrypoint, c.Cmd)
	}
	if c.User != "65532:65532" || !slices.Contains(c.Env, "HERMES_HOME=/var/lib/hermes") {
		t.Errorf("user %q, env %q", c.User, c.Env)
	}
	if _, ok := c.Volumes["/var/lib/hermes"]; !ok {
		t.Errorf("volumes %v", c.Volumes)
	}
	if c.Labels["org.opencontainers.image.version"] != "v1.0.0" || c.Labels["org.opencontainers.image.revision"] != "abc" ||
		c.Labels["org.opencontainers.image.created"] != "1970-01-01T00:00:00Z" || c.Labels["org.opencontainers.image.source"] == "" {
		t.Errorf("labels %v", c.Labels)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != "application/vnd.oci.image.manifest.v1+json" || m.Config.MediaType != "application/vnd.oci.image.config.v1+json" ||
		m.Annotations["org.opencontainers.image.revision"] != "abc" || len(m.Layers) != 2 {
		t.Errorf("manifest %+v", m)
	}
	for _, l := range m.Layers {
		if l.MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
			t.Errorf("layer media type %s", l.MediaType)
		}
	}
}

// entry is one file of a layer as the test reads it.
type entry struct {
	hdr  *tar.Header
	body string
}

// The layers hold what a static program needs and the binaries, with the
// owners and modes a read-only, non-root container needs: /tmp 1777, the
// home owned by 65532, the binaries executable, everything else root's;
// entries sorted, every time the creation time.
func TestLayers(t *testing.T) {
	t.Parallel()
	dir, ca, names := fakeBins(t)
	created := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	img := build(t, imagebuild.Options{BinDir: dir, Binaries: names, CACerts: ca, Created: created})
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]entry{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		var order []string
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(tr)
			files[strings.TrimSuffix(h.Name, "/")] = entry{h, string(b)}
			order = append(order, h.Name)
			if !h.ModTime.Equal(created) {
				t.Errorf("%s: time %s", h.Name, h.ModTime)
			}
		}
		rc.Close()
		if !slices.IsSorted(order) {
			t.Errorf("layer entries not sorted: %v", order)
		}
	}
	want := func(name string, mode int64, uid int) entry {
		t.Helper()
		e, ok := files[name]
		if !ok {
			t.Fatalf("no %s in the image", name)
		}
		if e.hdr.Mode != mode || e.hdr.Uid != uid || e.hdr.Gid != uid {
			t.Errorf("%s: mode %o uid %d gid %d, want %o %d", name, e.hdr.Mode, e.hdr.Uid, e.hdr.Gid, mode, uid)
		}
		return e
	}
	want("tmp", 0o1777, 0)
	want("var/lib/hermes", 0o700, 65532)
	if p := want("etc/passwd", 0o644, 0).body; !strings.Contains(p, "nonroot:x:65532:65532:nonroot:/var/lib/hermes:") {
		t.Errorf("/etc/passwd: %q", p)
	}
	if g := want("etc/group", 0o644, 0).body; !strings.Contains(g, "nonroot:x:65532:") {
		t.Errorf("/etc/group: %q", g)
	}
	if c := want("etc/ssl/certs/ca-certificates.crt", 0o644, 0).body; !strings.Contains(c, "stand-in") {
		t.Errorf("the CA bundle: %q", c)
	}
	for _, n := range names {
		if b := want("usr/local/bin/"+n, 0o755, 0).body; b != "\x7fELF stand-in for "+n {
			t.Errorf("%s holds %q", n, b)
		}
	}
	for name := range files {
		if strings.HasPrefix(name, "bin") || strings.Contains(name, "sh") && !strings.Contains(name, "ssl") {
			t.Errorf("unexpected %s in the image (no shell)", name)
		}
	}
}

// A list of binaries without the entrypoint's, or with a path, is refused.
func TestBuildRefuses(t *testing.T) {
	t.Parallel()
	dir, ca, _ := fakeBins(t)
	for _, bins := range [][]string{nil, {"hermes"}, {"hermes", "hermes-gateway", "../hermes"}, {"hermes", "hermes-gateway", "missing"}} {
		if _, err := imagebuild.Build(imagebuild.Options{BinDir: dir, Binaries: bins, CACerts: ca}); err == nil {
			t.Errorf("binaries %q: built", bins)
		}
	}
	if _, err := imagebuild.Build(imagebuild.Options{BinDir: dir, Binaries: []string{"hermes", "hermes-gateway"}, CACerts: filepath.Join(dir, "none")}); err == nil {
		t.Error("a missing CA bundle: built")
	}
}
