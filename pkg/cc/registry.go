package cc

import (
	"fmt"
	"strings"
)

// DefaultName is the rule used when none is named: uncoupled, as quic-go's
// paths run today.
const DefaultName = NameNone

// rules is the fixed registry, sorted by name. The rules are stateless
// values, so one instance serves every connection.
var rules = [...]Coupling{
	BALIA{},
	LIA{},
	Reno{},
	OLIA{},
	Reno{Friendly: true},
}

// New returns the rule with the given name; the empty name is DefaultName.
// An unknown name is an error that lists the known ones.
func New(name string) (Coupling, error) {
	if name == "" {
		name = DefaultName
	}
	for _, r := range rules {
		if r.Name() == name {
			return r, nil
		}
	}
	return nil, fmt.Errorf("cc: unknown coupling %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the rules' names, sorted.
func Names() []string {
	names := make([]string, len(rules))
	for i, r := range rules {
		names[i] = r.Name()
	}
	return names
}
