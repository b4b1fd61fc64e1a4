package elicit

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Fixed bounds on what a server may ask in one elicitation. A request past
// one is refused with an error naming the bound (LimitError): elicitation
// forms are flat (MCP allows only string, number, integer, boolean and enum
// fields), so a request near these bounds is a mistake or an attack, never
// a form a person could fill in.
const (
	// MaxMessageBytes bounds the message shown to the person.
	MaxMessageBytes = 4 << 10
	// MaxSchemaBytes bounds the requested schema (names, texts, options).
	MaxSchemaBytes = 64 << 10
	// MaxSchemaDepth bounds how deeply the requested schema's objects and
	// lists nest (a titled multi-select field is 6 deep: schema, its
	// properties, the field, its items, their anyOf list, one option).
	MaxSchemaDepth = 8
	// MaxFields bounds the fields of one form.
	MaxFields = 50
	// MaxOptions bounds the choices of one enum field.
	MaxOptions = 100
	// MaxTextBytes bounds each name, title, description, option and
	// default.
	MaxTextBytes = 1 << 10
	// MaxURLBytes bounds the URL of a URL-mode request.
	MaxURLBytes = 4 << 10
	// MaxAnswerBytes bounds one line a person types.
	MaxAnswerBytes = 16 << 10
)

// LimitError is a request refused because it passed one of the fixed
// bounds.
type LimitError struct {
	Server string
	// What names what was too large ("message", "requestedSchema", ...).
	What string
	// Got and Limit say by how much, in Unit.
	Got, Limit int
	Unit       string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("elicitation request from '%s' refused: its %s has %d %s, more than the %d hermes accepts (a fixed bound: ask the server's author for a smaller form)",
		e.Server, e.What, e.Got, e.Unit, e.Limit)
}

// SchemaError is a requested schema that is not an MCP elicitation form.
type SchemaError struct {
	Server string
	Reason string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("elicitation request from '%s' refused: %s", e.Server, e.Reason)
}

// Kind is the type of a form field.
type Kind string

// Field kinds: the primitive types MCP allows in a form, and enums as a
// choice of one (Choice) or several (Choices).
const (
	KindString  Kind = "string"
	KindNumber  Kind = "number"
	KindInteger Kind = "integer"
	KindBoolean Kind = "boolean"
	KindChoice  Kind = "choice"
	KindChoices Kind = "choices"
)

// Option is one value of an enum field, with the title shown for it.
type Option struct {
	Value, Title string
}

// Field is one field of a form, as the requested schema describes it.
type Field struct {
	Name, Title, Description string
	Kind                     Kind
	Required                 bool
	// Default is the server's default, already valid for the field (a
	// default that is not is dropped); nil for none.
	Default any
	// Format is a string's format: email, uri, date or date-time.
	Format string
	// MinLength and MaxLength bound a string (in characters), MinItems
	// and MaxItems a choice of several; -1 for no bound.
	MinLength, MaxLength int
	MinItems, MaxItems   int
	// Minimum and Maximum bound a number or integer; NaN for no bound.
	Minimum, Maximum float64
	// Options are the values of a choice.
	Options []Option
}

// Label is how the field is named to a person: its title, else its name.
func (f *Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// checkSize walks v, refusing a value nested deeper than MaxSchemaDepth or
// holding more than MaxSchemaBytes of text (keys and strings).
func checkSize(server string, v any) error {
	total := 0
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		switch v.(type) {
		case map[string]any, []any:
			if depth > MaxSchemaDepth {
				return &LimitError{Server: server, What: "requestedSchema", Got: depth, Limit: MaxSchemaDepth, Unit: "levels of nesting (or more)"}
			}
		}
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				total += len(k) + 4
				if total > MaxSchemaBytes {
					return &LimitError{Server: server, What: "requestedSchema", Got: total, Limit: MaxSchemaBytes, Unit: "bytes (or more)"}
				}
				if err := walk(x, depth+1); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range t {
				total += 2
				if err := walk(x, depth+1); err != nil {
					return err
				}
			}
		case string:
			total += len(t) + 2
		default:
			total += 8
		}
		if total > MaxSchemaBytes {
			return &LimitError{Server: server, What: "requestedSchema", Got: total, Limit: MaxSchemaBytes, Unit: "bytes (or more)"}
		}
		return nil
	}
	return walk(v, 1)
}

// ParseSchema reads a form-mode requestedSchema into its fields: the
// required ones first in the order the schema lists them, then the others
// by name (a decoded JSON object keeps no order). A schema that is too
// large, too deep or not a flat MCP form is refused.
func ParseSchema(server string, schema any) ([]Field, error) {
	if err := checkSize(server, schema); err != nil {
		return nil, err
	}
	obj, ok := schema.(map[string]any)
	if !ok {
		return nil, &SchemaError{Server: server, Reason: "its requestedSchema is not a JSON object"}
	}
	if t, ok := obj["type"]; ok && t != "object" {
		return nil, &SchemaError{Server: server, Reason: "its requestedSchema is not of type object"}
	}
	props, _ := obj["properties"].(map[string]any)
	if obj["properties"] != nil && props == nil {
		return nil, &SchemaError{Server: server, Reason: "the properties of its requestedSchema are not a JSON object"}
	}
	if len(props) > MaxFields {
		return nil, &LimitError{Server: server, What: "requestedSchema", Got: len(props), Limit: MaxFields, Unit: "fields"}
	}
	var required []string
	if r, ok := obj["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok && !slices.Contains(required, s) {
				if _, known := props[s]; known {
					required = append(required, s)
				}
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		if !slices.Contains(required, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	names = append(slices.Clone(required), names...)
	fields := make([]Field, 0, len(names))
	for _, n := range names {
		if len(n) > MaxTextBytes {
			return nil, &LimitError{Server: server, What: "field name", Got: len(n), Limit: MaxTextBytes, Unit: "bytes"}
		}
		p, ok := props[n].(map[string]any)
		if !ok {
			return nil, &SchemaError{Server: server, Reason: fmt.Sprintf("field %q of its requestedSchema is not a JSON object", n)}
		}
		f, err := parseField(server, n, p)
		if err != nil {
			return nil, err
		}
		f.Required = slices.Contains(required, n)
		fields = append(fields, f)
	}
	return fields, nil
}

func text(server, what string, v any) (string, error) {
	s, _ := v.(string)
	if len(s) > MaxTextBytes {
		return "", &LimitError{Server: server, What: what, Got: len(s), Limit: MaxTextBytes, Unit: "bytes"}
	}
	return s, nil
}

func intBound(v any) int {
	f, ok := v.(float64)
	if !ok || f < 0 || f > math.MaxInt32 || f != math.Trunc(f) {
		return -1
	}
	return int(f)
}

func numBound(v any) float64 {
	switch t := v.(type) {
	case float64:
		return t
	case int:
		return float64(t)
	case int64:
		return float64(t)
	}
	return math.NaN()
}

// options reads the choices of an enum: enum (with the legacy enumNames
// as titles) or oneOf/anyOf of {const, title}.
func options(server, name string, p map[string]any) ([]Option, bool, error) {
	var out []Option
	add := func(v any, title any) error {
		s, ok := v.(string)
		if !ok {
			return &SchemaError{Server: server, Reason: fmt.Sprintf("field %q has a choice that is not a string", name)}
		}
		if len(out) >= MaxOptions {
			return &LimitError{Server: server, What: fmt.Sprintf("field %q", name), Got: len(out) + 1, Limit: MaxOptions, Unit: "choices (or more)"}
		}
		t, err := text(server, fmt.Sprintf("field %q's choice title", name), title)
		if err != nil {
			return err
		}
		if len(s) > MaxTextBytes {
			return &LimitError{Server: server, What: fmt.Sprintf("field %q's choice", name), Got: len(s), Limit: MaxTextBytes, Unit: "bytes"}
		}
		out = append(out, Option{Value: s, Title: t})
		return nil
	}
	if e, ok := p["enum"].([]any); ok {
		titles, _ := p["enumNames"].([]any)
		for i, v := range e {
			var title any
			if i < len(titles) {
				title = titles[i]
			}
			if err := add(v, title); err != nil {
				return nil, true, err
			}
		}
		return out, true, nil
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		if alts, ok := p[key].([]any); ok {
			for _, a := range alts {
				m, ok := a.(map[string]any)
				if !ok {
					return nil, true, &SchemaError{Server: server, Reason: fmt.Sprintf("field %q has a choice that is not a JSON object", name)}
				}
				if err := add(m["const"], m["title"]); err != nil {
					return nil, true, err
				}
			}
			return out, true, nil
		}
	}
	return nil, false, nil
}

func parseField(server, name string, p map[string]any) (Field, error) {
	f := Field{Name: name, MinLength: -1, MaxLength: -1, MinItems: -1, MaxItems: -1, Minimum: math.NaN(), Maximum: math.NaN()}
	var err error
	if f.Title, err = text(server, fmt.Sprintf("field %q's title", name), p["title"]); err != nil {
		return f, err
	}
	if f.Description, err = text(server, fmt.Sprintf("field %q's description", name), p["description"]); err != nil {
		return f, err
	}
	typ, _ := p["type"].(string)
	switch typ {
	case "string":
		opts, isEnum, err := options(server, name, p)
		if err != nil {
			return f, err
		}
		if isEnum {
			if len(opts) == 0 {
				return f, &SchemaError{Server: server, Reason: fmt.Sprintf("field %q is a choice without choices", name)}
			}
			f.Kind, f.Options = KindChoice, opts
			break
		}
		f.Kind = KindString
		f.MinLength, f.MaxLength = intBound(p["minLength"]), intBound(p["maxLength"])
		f.Format, _ = p["format"].(string)
		switch f.Format {
		case "", "email", "uri", "date", "date-time":
		default:
			f.Format = "" // a format MCP does not define is not checked
		}
	case "number", "integer":
		f.Kind = Kind(typ)
		f.Minimum, f.Maximum = numBound(p["minimum"]), numBound(p["maximum"])
	case "boolean":
		f.Kind = KindBoolean
	case "array":
		items, _ := p["items"].(map[string]any)
		if items == nil {
			return f, &SchemaError{Server: server, Reason: fmt.Sprintf("field %q is a list without items; forms hold only strings, numbers, booleans and choices", name)}
		}
		opts, isEnum, err := options(server, name, items)
		if err != nil {
			return f, err
		}
		if !isEnum || len(opts) == 0 {
			return f, &SchemaError{Server: server, Reason: fmt.Sprintf("field %q is a list of something other than choices; forms hold only strings, numbers, booleans and choices", name)}
		}
		f.Kind, f.Options = KindChoices, opts
		f.MinItems, f.MaxItems = intBound(p["minItems"]), intBound(p["maxItems"])
	default:
		shown := typ
		if shown == "" {
			shown = "no type"
		}
		if len(shown) > 40 {
			shown = shown[:40] + "..."
		}
		return f, &SchemaError{Server: server, Reason: fmt.Sprintf("field %q has type %q; forms hold only string, number, integer, boolean and enum fields", name, shown)}
	}
	if d, ok := p["default"]; ok && d != nil {
		if s, ok := d.(string); ok && len(s) > MaxTextBytes {
			return f, &LimitError{Server: server, What: fmt.Sprintf("field %q's default", name), Got: len(s), Limit: MaxTextBytes, Unit: "bytes"}
		}
		if v, err := f.check(d); err == nil {
			f.Default = v
		}
	}
	return f, nil
}

// check validates a value of the field's type (a default, or a parsed
// answer) against the field's bounds, returning it in the type the answer
// carries.
func (f *Field) check(v any) (any, error) {
	switch f.Kind {
	case KindString:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("not a text")
		}
		return s, f.checkString(s)
	case KindNumber, KindInteger:
		n, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("not a number")
		}
		if err := f.checkNumber(n); err != nil {
			return nil, err
		}
		if f.Kind == KindInteger {
			return int64(n), nil
		}
		return n, nil
	case KindBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("not yes or no")
		}
		return b, nil
	case KindChoice:
		s, ok := v.(string)
		if !ok || !f.hasOption(s) {
			return nil, fmt.Errorf("not one of the choices")
		}
		return s, nil
	case KindChoices:
		list, ok := v.([]any)
		if !ok {
			if ss, ok2 := v.([]string); ok2 {
				for _, s := range ss {
					list = append(list, s)
				}
				ok = true
			}
		}
		if !ok {
			return nil, fmt.Errorf("not a list of choices")
		}
		out := make([]string, 0, len(list))
		for _, x := range list {
			s, ok := x.(string)
			if !ok || !f.hasOption(s) {
				return nil, fmt.Errorf("not one of the choices")
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out, f.checkItems(len(out))
	}
	return nil, fmt.Errorf("unknown field kind")
}

func (f *Field) hasOption(s string) bool {
	for _, o := range f.Options {
		if o.Value == s {
			return true
		}
	}
	return false
}

func (f *Field) checkString(s string) error {
	n := utf8.RuneCountInString(s)
	if f.MinLength >= 0 && n < f.MinLength {
		return fmt.Errorf("at least %d characters, please", f.MinLength)
	}
	if f.MaxLength >= 0 && n > f.MaxLength {
		return fmt.Errorf("at most %d characters, please", f.MaxLength)
	}
	switch f.Format {
	case "email":
		if !emailLike(s) {
			return fmt.Errorf("an email address (name@example.com), please")
		}
	case "uri":
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "" && u.Path == "") {
			return fmt.Errorf("a URI with a scheme (https://example.com), please")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Errorf("a date as YYYY-MM-DD, please")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Errorf("a date and time as 2006-01-02T15:04:05Z (RFC 3339), please")
		}
	}
	return nil
}

func (f *Field) checkNumber(n float64) error {
	if math.IsNaN(n) || math.IsInf(n, 0) {
		return fmt.Errorf("a finite number, please")
	}
	if f.Kind == KindInteger && n != math.Trunc(n) {
		return fmt.Errorf("a whole number, please")
	}
	if !math.IsNaN(f.Minimum) && n < f.Minimum {
		return fmt.Errorf("at least %s, please", fmtNum(f.Minimum))
	}
	if !math.IsNaN(f.Maximum) && n > f.Maximum {
		return fmt.Errorf("at most %s, please", fmtNum(f.Maximum))
	}
	return nil
}

func (f *Field) checkItems(n int) error {
	if f.MinItems >= 0 && n < f.MinItems {
		return fmt.Errorf("choose at least %d", f.MinItems)
	}
	if f.MaxItems >= 0 && n > f.MaxItems {
		return fmt.Errorf("choose at most %d", f.MaxItems)
	}
	return nil
}

func fmtNum(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }

// Parse turns what a person typed into the field's value, or says what is
// wrong with it. An empty line is the caller's (default, or nothing).
func (f *Field) Parse(line string) (any, error) {
	s := strings.TrimSpace(line)
	switch f.Kind {
	case KindString:
		return f.check(line)
	case KindNumber, KindInteger:
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			if f.Kind == KindInteger {
				return nil, fmt.Errorf("a whole number, please")
			}
			return nil, fmt.Errorf("a number, please")
		}
		return f.check(n)
	case KindBoolean:
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("y or n, please")
	case KindChoice:
		o, ok := f.option(s)
		if !ok {
			return nil, fmt.Errorf("one of the numbers shown (1-%d), please", len(f.Options))
		}
		return o, nil
	case KindChoices:
		var picked []any
		for _, part := range strings.Split(s, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			o, ok := f.option(part)
			if !ok {
				return nil, fmt.Errorf("numbers shown (1-%d), separated by commas, please", len(f.Options))
			}
			picked = append(picked, o)
		}
		return f.check(picked)
	}
	return nil, fmt.Errorf("unknown field kind")
}

// option finds a choice by its number (1-based), its value or its title.
func (f *Field) option(s string) (string, bool) {
	if i, err := strconv.Atoi(s); err == nil && i >= 1 && i <= len(f.Options) {
		return f.Options[i-1].Value, true
	}
	for _, o := range f.Options {
		if o.Value == s || (o.Title != "" && strings.EqualFold(o.Title, s)) {
			return o.Value, true
		}
	}
	return "", false
}

// emailLike reports whether s looks like an address: one @ between a local
// part and a domain with a dot, no spaces or control characters (a check
// for typing mistakes; net/mail would cost every command its init).
func emailLike(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || strings.Contains(domain, "@") || !strings.Contains(strings.Trim(domain, "."), ".") {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
}
