package serve

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermes-agent/hermes/sdk/selfmem"
)

// KeepPagesEnv names the environment variable that keeps a plugin from
// giving back the resident pages of its binary once its start is over
// (sdk.KeepPagesEnv): set to anything but "" or "0", the pages stay mapped.
const KeepPagesEnv = "HERMES_PLUGIN_KEEP_PAGES"

// pages gives back, once, the resident pages of the plugin executable's
// code and read-only data, when Serve armed it.
var pages struct {
	armed atomic.Bool
	once  sync.Once
}

// armPages lets Started shed, unless the host said to keep the pages. Only
// Serve arms it: a plugin served in-process (sdktest) leaves its host's
// pages alone.
func armPages() {
	if v := os.Getenv(KeepPagesEnv); v == "" || v == "0" {
		pages.armed.Store(true)
	}
}

// ShedDelay is how long after Started the pages are given back: the
// shedding costs about 0.6 ms (listing the mappings, the madvise, the pages
// that fault back), which a plugin that serves one call and exits (a
// one-shot 'hermes mcp call') would pay on its only call; one that serves on
// pays it once, in the background, a second into its work.
const ShedDelay = time.Second

// Started tells the plugin's serving code that its start is over. A kind
// calls it where its work begins: a transport at the first frame the host
// sends on a connection (the host sends it once it has the answer to Open,
// so the start is over up to that answer's encoding), an auth method, a
// bridge or a model at the end of its first successful Open (its work is
// net/rpc calls, whose encoding reads the same type data as Open's answer).
// By then package initialisation, the go-plugin handshake, the dispense,
// the first use of each net/rpc and gob type and the Opener (for the stdio
// plugin: the sandbox's plan, the launcher, the server's start) have run:
// most of the binary's code, and of its read-only data (type data, the
// descriptors registered at init, the function tables), is mapped and will
// not be read again. So the first call, in a process Serve runs, has the
// resident pages of the executable's code and read-only data (package
// selfmem): they stay in the page cache, shared with every process of the
// same binary, and those read again are mapped again at their next use
// (for the stdio plugin serving calls, about a fifth of its code and a
// tenth of its read-only data; a garbage collection maps about half of the
// read-only data back, the function tables of the code on the stacks and
// the types of the heap) given back ShedDelay later, in the background.
// Later calls do nothing, and so does the first when KeepPagesEnv is set.
func Started() {
	if !pages.armed.Load() {
		return
	}
	pages.once.Do(func() { time.AfterFunc(ShedDelay, shed) })
}

// shed gives back the pages (Started).
func shed() {
	spans := selfmem.Find(selfmem.ReadOnlyData | selfmem.Code)
	var n uintptr
	for _, s := range spans {
		n += s.End - s.Start
	}
	// Logged before, so that the log's own reading is not mapped back.
	exiter.mu.Lock()
	log := exiter.log
	exiter.mu.Unlock()
	if log != nil && n > 0 {
		log.Debug("start over: giving back the resident pages of the executable's code and read-only data", "bytes", n, "keep_with", KeepPagesEnv+"=1")
	}
	selfmem.Shed(spans)
}
