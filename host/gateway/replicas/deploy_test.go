package replicas_test

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-agent/hermes/host/gateway/replicas"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/tools/imagebuild"
)

// imageFlag is an OCI layout to run (make loadtest gives make image's);
// without it the tests build an image of the test binaries.
var imageFlag = flag.String("image", "", "the OCI image layout `folder` to run (default: an image of the test binaries, built by the test)")

// built is the image of the test binaries, built once per test process
// into scratch (removed by TestMain).
var (
	scratch string
	built   struct {
		once sync.Once
		dir  string
		err  error
	}
)

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	if scratch, err = os.MkdirTemp("", "hermes-replicas-"); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = os.RemoveAll(scratch)
	os.Exit(code)
}

// people's static tokens, as their clients hold them; the gateway's config
// holds only their sha256.
const (
	aliceToken = "alice-token-0123456789"
	bobToken   = "bob-token-0123456789"
	sessionKey = "the deployment's session key, from its Secret, 0123456789"
)

// imageBinaries are what the test image holds: the entrypoint's and what
// it runs for stdio servers (make image adds the other shipped plugins).
var imageBinaries = []string{"hermes", "hermes-gateway", "hermes-transport-stdio", "hermes-stdio-launcher"}

// unpacked is the image (the -image layout, or one built from the test
// binaries) applied into a root folder of the test.
func unpacked(t testing.TB) *replicas.Image {
	t.Helper()
	dir := *imageFlag
	if dir == "" {
		for _, b := range imageBinaries {
			testbin.Path(t, b)
		}
		built.once.Do(func() {
			img, err := imagebuild.Build(imagebuild.Options{BinDir: testbin.Dir(t), Binaries: imageBinaries, CompressionLevel: gzip.HuffmanOnly})
			if err != nil {
				built.err = err
				return
			}
			built.dir = filepath.Join(scratch, "oci")
			built.err = imagebuild.WriteLayout(built.dir, img, "hermes-gateway:test")
		})
		if built.err != nil {
			t.Fatal(built.err)
		}
		dir = built.dir
	}
	img, err := replicas.Unpack(dir, filepath.Join(t.TempDir(), "rootfs"))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// deployment is n replicas of the image, as a Deployment runs them, and a
// Service (the balancer) in front.
type deployment struct {
	img   *replicas.Image
	pods  []*replicas.Pod
	reps  []*replicas.Replica
	lb    *replicas.Balancer
	homes []string
}

// servers is the mcp_servers: block of the ConfigMap's config.yaml.
func tsServers(t testing.TB, names ...string) string {
	srv := testbin.Path(t, "hermes-testserver")
	var b strings.Builder
	b.WriteString("mcp_servers:\n")
	for _, n := range names {
		b.WriteString("  " + n + ":\n    command: " + srv + "\n    args: [--trace]\n")
	}
	return b.String()
}

// deploy writes the ConfigMap (config.yaml: servers, static tokens,
// policy, audit to stdout as a container logs) and the Secret (the session
// key, given as a variable as secretKeyRef does), then starts n replicas,
// each with HERMES_HOME and /tmp on folders of its own (its volumes),
// behind the balancer.
func deploy(t testing.TB, n int, servers string, hooks replicas.Hooks) *deployment {
	t.Helper()
	img := unpacked(t)
	sum := func(tok string) string { s := sha256.Sum256([]byte(tok)); return hex.EncodeToString(s[:]) }
	configMap, secret := t.TempDir(), t.TempDir()
	cfg := servers + "gateway:\n  resource: http://127.0.0.1/mcp\n  tokens:\n" +
		"    - {subject: alice, sha256: \"" + sum(aliceToken) + "\", groups: [dev]}\n" +
		"    - {subject: bob, sha256: \"" + sum(bobToken) + "\", groups: [support]}\n" +
		"  policy:\n    - {allow: {groups: [dev], tools: [\"*\"]}}\n    - {allow: {groups: [support], tools: [\"mcp_*_echo\"]}}\n" +
		"  audit: {stdout: true}\n" +
		// Each client here is one person calling without pause: the
		// per-person limits of a replica are not what is tested.
		"  limits: {calls_per_minute: 1000000, concurrent: 256}\n"
	if err := os.WriteFile(filepath.Join(configMap, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secret, "session-key"), []byte(sessionKey), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(secret, "session-key"))
	if err != nil {
		t.Fatal(err)
	}
	d := &deployment{img: img, lb: replicas.NewBalancer(n, hooks)}
	t.Cleanup(d.lb.Close)
	for range n {
		home, tmp := t.TempDir(), t.TempDir()
		p := &replicas.Pod{Image: img, Listen: "127.0.0.1:0",
			Mounts: map[string]string{"/etc/hermes": configMap, imagebuild.Home: home, "/tmp": tmp},
			Args:   append(append([]string{}, img.Cmd...), "--config", "/etc/hermes/config.yaml"),
			Env:    []string{"HERMES_GATEWAY_SESSION_KEY=" + string(key), "TMPDIR=/tmp"}}
		d.pods, d.homes = append(d.pods, p), append(d.homes, home)
	}
	d.reps = make([]*replicas.Replica, n)
	for i := range n {
		d.start(t, i)
	}
	return d
}

// start starts (or restarts) replica i and puts it into rotation once it
// answers /readyz.
func (d *deployment) start(t testing.TB, i int) {
	t.Helper()
	r, err := d.pods[i].Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	res, err := http.Get("http://" + r.Addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("replica %d: /readyz %d\n%s", i, res.StatusCode, r.Stderr.String())
	}
	d.reps[i] = r
	d.lb.Set(i, r.Addr)
}

// The image's config is what a cluster needs: hermes mcp gateway, as user
// 65532, HERMES_HOME on a volume; unpacked, its binaries are there and
// /tmp is world-writable with the sticky bit.
func TestImageUnpacks(t *testing.T) {
	t.Parallel()
	img := unpacked(t)
	if img.User != "65532:65532" || len(img.Entrypoint) != 3 || img.Entrypoint[0] != "/usr/local/bin/hermes" || len(img.Volumes) != 1 || img.Volumes[0] != imagebuild.Home {
		t.Fatalf("image config: %+v", img)
	}
	for _, b := range imageBinaries {
		st, err := os.Stat(filepath.Join(img.Root, "usr/local/bin", b))
		if err != nil || st.Mode().Perm() != 0o755 {
			t.Fatalf("%s in the unpacked image: %v %v", b, err, st)
		}
	}
	st, err := os.Stat(filepath.Join(img.Root, "tmp"))
	if err != nil || st.Mode().Perm() != 0o777 || st.Mode()&os.ModeSticky == 0 {
		t.Fatalf("/tmp: %v %v", err, st)
	}
}
