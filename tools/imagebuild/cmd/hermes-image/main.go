// Command hermes-image writes the gateway's container image (package
// imagebuild) from binaries already built: an OCI image layout, and a
// `docker save` tarball beside it. `make image` runs it on the shipped
// binaries; it needs no container engine and reaches no registry.
//
//	hermes-image -bin DIR -out DIR [-tag NAME:TAG] [-created UNIX] [-version V] [-revision SHA] BINARY...
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hermes-agent/hermes/tools/imagebuild"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "hermes-image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("hermes-image", flag.ContinueOnError)
	bin := fs.String("bin", "bin", "the `folder` of the built binaries")
	out := fs.String("out", "dist", "write the image into this `folder` (oci/ and hermes-gateway.tar)")
	tag := fs.String("tag", "hermes-gateway:dev", "the image's `name:tag` in the layout's index and the tarball")
	created := fs.String("created", os.Getenv("SOURCE_DATE_EPOCH"), "creation time, Unix `seconds` (the commit's time; default $SOURCE_DATE_EPOCH, else the epoch)")
	version := fs.String("version", "", "org.opencontainers.image.version")
	revision := fs.String("revision", "", "org.opencontainers.image.revision (the commit)")
	ca := fs.String("ca-certs", imagebuild.DefaultCACerts, "the CA bundle `file` copied into the image")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o := imagebuild.Options{BinDir: *bin, Binaries: fs.Args(), CACerts: *ca, Version: *version, Revision: *revision}
	if *created != "" {
		secs, err := strconv.ParseInt(*created, 10, 64)
		if err != nil {
			return fmt.Errorf("-created %q: want Unix seconds: %w", *created, err)
		}
		o.Created = time.Unix(secs, 0)
	}
	img, err := imagebuild.Build(o)
	if err != nil {
		return err
	}
	layoutDir, tarFile := filepath.Join(*out, "oci"), filepath.Join(*out, "hermes-gateway.tar")
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", *out, err)
	}
	if err := imagebuild.WriteLayout(layoutDir, img, *tag); err != nil {
		return err
	}
	if err := imagebuild.WriteTarball(tarFile, img, *tag); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("the image's digest: %w", err)
	}
	size, err := imagebuild.CompressedSize(img)
	if err != nil {
		return err
	}
	fmt.Printf("%s %s (compressed: %.1f MB)\n  OCI layout: %s\n  tarball:    %s\n", *tag, digest, float64(size)/1e6, layoutDir, tarFile)
	return nil
}
