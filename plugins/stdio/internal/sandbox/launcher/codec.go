package launcher

import "errors"

// The encoding of a Plan and of a Status: fields in a fixed order, integers
// little-endian of a fixed width, strings and lists prefixed with their
// length (uint32). A plan begins with planMagic, which names the encoding's
// version: a plugin and a launcher of different builds refuse each other's
// plans instead of misreading them (version 2: the launcher waits for
// Proceed before it starts the server). Decoding checks every length against
// what is left before it allocates, and a decoded plan must use every byte.

// planMagic begins every encoded plan.
const planMagic = "HSL\x02"

// Plan flags, one byte.
const (
	planNetNS = 1 << iota
	planNProc
	planBare
	planInit
)

// Rule flags, one byte.
const (
	ruleNoFollow = 1 << iota
	ruleStrict
)

// Status flags, one byte.
const (
	statusStarted = 1 << iota
	statusExit
)

// MarshalBinary encodes p for the launcher.
func (p *Plan) MarshalBinary() ([]byte, error) {
	var e encoder
	e.b = append(e.b, planMagic...)
	e.str(p.Path)
	e.strs(p.Argv)
	e.strs(p.Env)
	e.u32(uint32(p.ABI))
	e.u32(uint32(len(p.Rules)))
	for _, r := range p.Rules {
		e.str(r.Path)
		e.u64(r.Access)
		var f byte
		if r.NoFollow {
			f |= ruleNoFollow
		}
		if r.Strict {
			f |= ruleStrict
		}
		e.b = append(e.b, f)
		e.u64(r.Dev)
		e.u64(r.Ino)
	}
	e.str(p.Net)
	e.u32(uint32(p.ProxyPort))
	var f byte
	for _, b := range []struct {
		set  bool
		flag byte
	}{{p.NetNS, planNetNS}, {p.NProc, planNProc}, {p.Bare, planBare}, {p.Init, planInit}} {
		if b.set {
			f |= b.flag
		}
	}
	e.b = append(e.b, f)
	e.u64(p.Limits.MemoryBytes)
	e.u64(p.Limits.CPUSeconds)
	e.u64(p.Limits.OpenFiles)
	e.u64(p.Limits.Processes)
	e.u32(uint32(len(p.Seccomp)))
	for _, prog := range p.Seccomp {
		e.u32(uint32(len(prog)))
		for _, in := range prog {
			e.u16(in.Code)
			e.b = append(e.b, in.Jt, in.Jf)
			e.u32(in.K)
		}
	}
	if len(e.b) > MaxPlanBytes {
		return nil, errors.New("sandbox plan too large (over 16 MiB)")
	}
	return e.b, nil
}

// UnmarshalBinary decodes a plan MarshalBinary encoded. It refuses one
// that is truncated, has bytes left over, is larger than MaxPlanBytes or
// names no command.
func (p *Plan) UnmarshalBinary(b []byte) error {
	if len(b) > MaxPlanBytes {
		return errors.New("sandbox plan too large")
	}
	if len(b) < len(planMagic) || string(b[:len(planMagic)]) != planMagic {
		return errors.New("not a sandbox plan of this launcher's version (reinstall hermes so that the plugin and its launcher match)")
	}
	d := decoder{b: b[len(planMagic):]}
	var q Plan
	q.Path = d.str()
	q.Argv = d.strs()
	q.Env = d.strs()
	q.ABI = int(d.u32())
	if n := d.count(8 + 8 + 1 + 8 + 8); n > 0 {
		q.Rules = make([]Rule, n)
		for i := range q.Rules {
			r := &q.Rules[i]
			r.Path = d.str()
			r.Access = d.u64()
			f := d.byte()
			r.NoFollow, r.Strict = f&ruleNoFollow != 0, f&ruleStrict != 0
			if f&^(ruleNoFollow|ruleStrict) != 0 {
				d.fail()
			}
			r.Dev = d.u64()
			r.Ino = d.u64()
		}
	}
	q.Net = d.str()
	q.ProxyPort = int(d.u32())
	f := d.byte()
	if f&^(planNetNS|planNProc|planBare|planInit) != 0 {
		d.fail()
	}
	q.NetNS, q.NProc, q.Bare, q.Init = f&planNetNS != 0, f&planNProc != 0, f&planBare != 0, f&planInit != 0
	q.Limits = Limits{MemoryBytes: d.u64(), CPUSeconds: d.u64(), OpenFiles: d.u64(), Processes: d.u64()}
	if n := d.count(4); n > 0 {
		q.Seccomp = make([]Filter, n)
		for i := range q.Seccomp {
			if m := d.count(8); m > 0 {
				prog := make(Filter, m)
				for j := range prog {
					prog[j] = Instruction{Code: d.u16(), Jt: d.byte(), Jf: d.byte(), K: d.u32()}
				}
				q.Seccomp[i] = prog
			}
		}
	}
	if d.bad || len(d.b) != 0 {
		return errPlan
	}
	if q.Path == "" || len(q.Argv) == 0 {
		return errors.New("sandbox plan names no command")
	}
	*p = q
	return nil
}

// AppendStatus appends the encoding of s to b.
func AppendStatus(b []byte, s Status) []byte {
	e := encoder{b: b}
	e.u32(uint32(s.Listener))
	e.str(s.Step)
	e.str(s.Error)
	var f byte
	var exit uint32
	if s.Started {
		f |= statusStarted
	}
	if s.Exit != nil {
		f |= statusExit
		exit = *s.Exit
	}
	e.b = append(e.b, f)
	e.u32(exit)
	return e.b
}

// ParseStatus decodes one status message.
func ParseStatus(b []byte) (Status, error) {
	if len(b) > MaxStatusBytes {
		return Status{}, errors.New("launcher status too large")
	}
	d := decoder{b: b}
	var s Status
	s.Listener = int(d.u32())
	s.Step = d.str()
	s.Error = d.str()
	f := d.byte()
	exit := d.u32()
	if d.bad || len(d.b) != 0 || f&^(statusStarted|statusExit) != 0 {
		return Status{}, errors.New("malformed launcher status")
	}
	s.Started = f&statusStarted != 0
	if f&statusExit != 0 {
		s.Exit = &exit
	} else if exit != 0 {
		return Status{}, errors.New("malformed launcher status")
	}
	return s, nil
}

// encoder appends fields to b.
type encoder struct{ b []byte }

func (e *encoder) u16(v uint16) { e.b = append(e.b, byte(v), byte(v>>8)) }

func (e *encoder) u32(v uint32) {
	e.b = append(e.b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func (e *encoder) u64(v uint64) {
	e.u32(uint32(v))
	e.u32(uint32(v >> 32))
}

func (e *encoder) str(s string) {
	e.u32(uint32(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) strs(ss []string) {
	e.u32(uint32(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}

// decoder takes fields from the front of b; once a field does not fit,
// bad is set and every later field is zero.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) fail() { d.bad, d.b = true, nil }

// take returns the next n bytes.
func (d *decoder) take(n uint64) []byte {
	if d.bad || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	v := d.take(2)
	if v == nil {
		return 0
	}
	return uint16(v[0]) | uint16(v[1])<<8
}

func (d *decoder) u32() uint32 {
	v := d.take(4)
	if v == nil {
		return 0
	}
	return uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16 | uint32(v[3])<<24
}

func (d *decoder) u64() uint64 { return uint64(d.u32()) | uint64(d.u32())<<32 }

// count reads a list's length, refusing one whose elements, each at least
// min bytes, cannot fit in what is left.
func (d *decoder) count(min uint64) int {
	n := uint64(d.u32())
	if n*min > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) str() string { return string(d.take(uint64(d.u32()))) }

func (d *decoder) strs() []string {
	n := d.count(4)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}
