package launcher

import (
	"bytes"
	"reflect"
	"testing"
)

func fullPlan() Plan {
	return Plan{
		Path: "/usr/bin/node", Argv: []string{"node", "server.js", ""}, Env: []string{"PATH=/bin", "A=b=c"},
		ABI: 7,
		Rules: []Rule{{Path: "/", Access: ReadOnly}, {Path: "/home/u/.hermes", Access: ReadWrite, NoFollow: true},
			{Path: "/srv", Access: DevNull, Strict: true, Dev: 1<<40 + 3, Ino: 1<<63 + 9}},
		Net: NetworkHosts, ProxyPort: 65535, NetNS: true,
		Seccomp: []Filter{{{Code: 0x20, K: 4}, {Code: 0x15, Jt: 1, Jf: 2, K: 0xc000003e}}, {{Code: 6, K: 0x7fff0000}}},
		Limits:  Limits{MemoryBytes: 2 << 30, CPUSeconds: 60, OpenFiles: 1024, Processes: 512},
		NProc:   true, Bare: true, Init: true,
	}
}

// A plan survives its encoding, every field of it.
func TestPlanRoundTrip(t *testing.T) {
	for _, p := range []Plan{fullPlan(), {Path: "/bin/true", Argv: []string{"true"}, Net: NetworkAll}} {
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var q Plan
		if err := q.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("decoded\n%+v\nwant\n%+v", q, p)
		}
	}
}

// A plan cut short, with a byte more, of another version or naming no
// command is refused.
func TestPlanRefused(t *testing.T) {
	p := fullPlan()
	b, _ := p.MarshalBinary()
	var q Plan
	for n := range len(b) {
		if q.UnmarshalBinary(b[:n]) == nil {
			t.Fatalf("a plan cut to %d of %d bytes decoded", n, len(b))
		}
	}
	if q.UnmarshalBinary(append(bytes.Clone(b), 0)) == nil {
		t.Fatal("a plan with a byte left over decoded")
	}
	other := bytes.Clone(b)
	other[3]++
	if q.UnmarshalBinary(other) == nil {
		t.Fatal("a plan of another version decoded")
	}
	empty := Plan{Path: "/bin/true"}
	eb, _ := empty.MarshalBinary()
	if q.UnmarshalBinary(eb) == nil {
		t.Fatal("a plan without argv decoded")
	}
}

// Each status survives its encoding.
func TestStatusRoundTrip(t *testing.T) {
	exit := uint32(0x8b00)
	for _, s := range []Status{{Listener: 4242}, {Step: "landlock", Error: "EPERM"}, {Started: true}, {Exit: &exit}} {
		got, err := ParseStatus(AppendStatus(nil, s))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("decoded %+v, want %+v", got, s)
		}
	}
	if _, err := ParseStatus([]byte("{}")); err == nil {
		t.Fatal("a JSON status decoded")
	}
}

// maxFuzzPlan bounds the inputs the fuzzer tries, so that a run explores
// structure rather than size (the decoder bounds real plans at
// MaxPlanBytes).
const maxFuzzPlan = 64 << 10

// The decoder never panics, allocates no more than its input can hold,
// and what it accepts is the one encoding of what it decoded.
func FuzzPlanDecode(f *testing.F) {
	p := fullPlan()
	b, _ := p.MarshalBinary()
	f.Add(b)
	small := Plan{Path: "/bin/true", Argv: []string{"true"}, Net: NetworkAll}
	sb, _ := small.MarshalBinary()
	f.Add(sb)
	f.Add([]byte(planMagic + "\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > maxFuzzPlan {
			return
		}
		var q Plan
		if err := q.UnmarshalBinary(in); err != nil {
			return
		}
		out, err := q.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(in, out) {
			t.Fatalf("decoded %x, encodes again as %x", in, out)
		}
	})
}

// The status decoder never panics, and what it accepts encodes back the
// same.
func FuzzStatusDecode(f *testing.F) {
	exit := uint32(9)
	f.Add(AppendStatus(nil, Status{Step: "exec", Error: "no such file", Exit: &exit}))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ParseStatus(in)
		if err != nil {
			return
		}
		if out := AppendStatus(nil, s); !bytes.Equal(in, out) {
			t.Fatalf("decoded %x, encodes again as %x", in, out)
		}
	})
}
