package imagebuild

import (
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// RefNameAnnotation names an image of an OCI layout's index (what
// `skopeo copy oci:DIR:NAME` selects).
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout writes img as an OCI image layout into dir, replacing what
// was there: oci-layout, index.json (one manifest, named tag) and the
// blobs.
func WriteLayout(dir string, img v1.Image, tag string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clear %s: %w", dir, err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write an OCI layout in %s: %w", dir, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{RefNameAnnotation: tag})); err != nil {
		return fmt.Errorf("write the image into %s: %w", dir, err)
	}
	return nil
}

// WriteTarball writes img as a `docker save` tarball to file, tagged ref
// (e.g. hermes-gateway:v1.2.3): what `docker load` and `crane push` take.
func WriteTarball(file string, img v1.Image, ref string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	if err := tarball.WriteToFile(file, tag, img); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}

// CompressedSize is what pulling img transfers: its layers' compressed
// sizes, its config and its manifest.
func CompressedSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, fmt.Errorf("the image's manifest: %w", err)
	}
	raw, err := img.RawManifest()
	if err != nil {
		return 0, fmt.Errorf("the image's manifest: %w", err)
	}
	n := m.Config.Size + int64(len(raw))
	for _, l := range m.Layers {
		n += l.Size
	}
	return n, nil
}
