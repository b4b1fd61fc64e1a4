package policy

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"
)

// Bounds of a rule's condition (when:).
const (
	// MaxWhenBytes bounds the text of one condition.
	MaxWhenBytes = 4096
	// MaxWhenCost bounds the work of one evaluation, in CEL's cost units
	// (about one per operation, and per element a function walks): past
	// it the evaluation stops with an error. A condition over a few
	// claims costs tens.
	MaxWhenCost = 10000
	// maxWhenNesting bounds the parser's recursion.
	maxWhenNesting = 32
)

// The variables a condition may read.
const (
	varClaims      = "claims"
	varSubject     = "subject"
	varGroups      = "groups"
	varScopes      = "scopes"
	varServer      = "server"
	varTool        = "tool"
	varKind        = "kind"
	varPrompt      = "prompt"
	varResource    = "resource"
	varAnnotations = "annotations"
)

// condition is a compiled when: expression.
type condition struct {
	source string
	prg    cel.Program
}

var (
	envOnce sync.Once
	env     *cel.Env
	envErr  error
)

// celEnv is the one environment conditions are compiled in.
func celEnv() (*cel.Env, error) {
	envOnce.Do(func() {
		env, envErr = cel.NewEnv(
			cel.Variable(varClaims, cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable(varSubject, cel.StringType),
			cel.Variable(varGroups, cel.ListType(cel.StringType)),
			cel.Variable(varScopes, cel.ListType(cel.StringType)),
			cel.Variable(varServer, cel.StringType),
			cel.Variable(varTool, cel.StringType),
			cel.Variable(varKind, cel.StringType),
			cel.Variable(varPrompt, cel.StringType),
			cel.Variable(varResource, cel.StringType),
			cel.Variable(varAnnotations, cel.MapType(cel.StringType, cel.BoolType)),
			cel.ParserExpressionSizeLimit(MaxWhenBytes),
			cel.ParserRecursionLimit(maxWhenNesting),
		)
	})
	return env, envErr
}

// compileCondition compiles src once: an error carries CEL's message on
// one line.
func compileCondition(src string) (*condition, error) {
	if len(src) > MaxWhenBytes {
		return nil, fmt.Errorf("%d bytes, longer than the %d allowed", len(src), MaxWhenBytes)
	}
	e, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("the CEL environment: %w", err)
	}
	ast, iss := e.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, errors.New(celMessage(iss))
	}
	if t := ast.OutputType(); !t.IsExactType(types.BoolType) && !t.IsExactType(types.DynType) {
		return nil, fmt.Errorf("%q is of type %s; a condition must be true or false", src, t)
	}
	prg, err := e.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.CostLimit(MaxWhenCost))
	if err != nil {
		return nil, fmt.Errorf("%q: %v", src, err)
	}
	return &condition{source: src, prg: prg}, nil
}

// celMessage is the messages of CEL's issues on one line, each with its
// line and column.
func celMessage(iss *cel.Issues) string {
	var parts []string
	for _, e := range iss.Errors() {
		loc := e.Location
		parts = append(parts, fmt.Sprintf("%d:%d: %s", loc.Line(), loc.Column()+1, strings.ReplaceAll(e.Message, "\n", " ")))
	}
	if len(parts) == 0 {
		return strings.ReplaceAll(iss.Err().Error(), "\n", " ")
	}
	return strings.Join(parts, "; ")
}

// eval evaluates the condition for r.
func (c *condition) eval(r *Request) (bool, error) {
	out, _, err := c.prg.Eval(&activation{r: r})
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("the condition gave %s, not true or false", out.Type().TypeName())
	}
	return b, nil
}

// activation hands a Request's fields to CEL by name, without building a
// map per decision.
type activation struct{ r *Request }

var (
	noClaims  = map[string]any{}
	noStrings = []string{}
	// annotationMaps holds the 16 possible annotation maps, indexed by
	// their bits, so that a decision builds none.
	annotationMaps = func() [16]map[string]bool {
		var out [16]map[string]bool
		for i := range out {
			out[i] = map[string]bool{"read_only": i&1 != 0, "destructive": i&2 != 0, "idempotent": i&4 != 0, "open_world": i&8 != 0}
		}
		return out
	}()
)

func (a *activation) ResolveName(name string) (any, bool) {
	r := a.r
	switch name {
	case varClaims:
		if r.Claims == nil {
			return noClaims, true
		}
		return r.Claims, true
	case varSubject:
		return r.Subject, true
	case varGroups:
		return orNone(r.Groups), true
	case varScopes:
		return orNone(r.Scopes), true
	case varServer:
		return r.Server, true
	case varTool:
		if r.Kind != KindTool {
			return "", true
		}
		return r.Tool, true
	case varKind:
		return r.Kind.String(), true
	case varPrompt:
		if r.Kind != KindPrompt {
			return "", true
		}
		return r.Name, true
	case varResource:
		if r.Kind != KindResource {
			return "", true
		}
		return r.Name, true
	case varAnnotations:
		h := r.Annotations
		i := 0
		for bit, set := range []bool{h.ReadOnly, h.Destructive, h.Idempotent, h.OpenWorld} {
			if set {
				i |= 1 << bit
			}
		}
		return annotationMaps[i], true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

func orNone(s []string) []string {
	if s == nil {
		return noStrings
	}
	return s
}
