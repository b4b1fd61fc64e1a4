package install

import (
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"os"

	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// installVarRE is a variable name auth.env may ask for.
var installVarRE = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// credentials collects the auth.env values of m that .env does not hold
// yet: asked of the person when there is one (Prompter.Value; a secret is
// not echoed), else taken from the environment or the prompt's default. Nothing is written here: the values
// are saved to .env when the install commits. A value is never printed.
func (in *Installer) credentials(m *catalog.Manifest, home string) ([]envValue, error) {
	p := in.Prompter
	switch {
	case m.Auth.Type == "oauth" && m.Auth.Provider != "":
		p.Tell(NoteDetail, "'%s' logs in through %s: run `hermes auth %s` after installing.", m.Name, m.Auth.Provider, m.Auth.Provider)
	case m.Auth.Type == "oauth":
		p.Tell(NoteDetail, "OAuth: tokens will be acquired on first connection (browser flow); or log in now with: hermes mcp login %s", m.Name)
	}
	if len(m.Auth.Env) == 0 {
		return nil, nil
	}
	have, err := config.LoadDotEnv(home)
	if err != nil {
		return nil, err
	}
	lookup := in.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	envPath := homedir.Dir(home).DotEnv()
	p.Tell(NoteText, "Configure credentials:")
	var out []envValue
	for _, spec := range m.Auth.Env {
		if !installVarRE.MatchString(spec.Name) {
			return nil, fmt.Errorf("manifest of '%s' asks for %q, which is not a variable name", m.Name, spec.Name)
		}
		if _, ok := have[spec.Name]; ok {
			p.Tell(NoteDone, "%s already set in .env", spec.Name)
			continue
		}
		prompt := spec.Prompt
		if prompt == "" {
			prompt = spec.Name
		}
		var v string
		if p.Interactive() {
			v, err = p.Value(Variable{Name: spec.Name, Prompt: prompt, Secret: spec.Secret, Default: spec.Default})
			if errors.Is(err, ErrDeclined) {
				return nil, fmt.Errorf("%w: nothing was installed", ErrDeclined)
			}
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", spec.Name, err)
			}
		} else if ev, ok := lookup(spec.Name); ok && ev != "" {
			v = ev
			p.Tell(NoteDone, "%s taken from the environment", spec.Name)
		} else {
			v = spec.Default
			if v == "" && spec.Required {
				return nil, fmt.Errorf("%s is required and there is no terminal to ask for it; set it in the environment (%s=... hermes mcp install %s --yes) or in %s", spec.Name, spec.Name, m.Name, envPath)
			}
		}
		if v == "" && spec.Required {
			return nil, fmt.Errorf("%s is required but no value was provided", spec.Name)
		}
		out = append(out, envValue{key: spec.Name, value: v})
	}
	return out, nil
}
