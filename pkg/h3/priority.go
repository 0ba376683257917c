package h3

import "strings"

// Priority is an HTTP response's priority (RFC 9218 §4): Urgency from 0
// (most urgent) to 7, and Incremental, whether the client can use the
// response in parts (so responses of equal urgency may share bandwidth).
type Priority struct {
	Urgency     uint8 // 0 (most urgent) to 7; RFC 9218's default is 3
	Incremental bool  // the response may be sent interleaved with others of its urgency
}

// DefaultPriority is the priority of a request that states none (RFC 9218
// §4.1: "The default urgency value is 3"; §4.2: "The default value of the
// incremental parameter is false").
var DefaultPriority = Priority{Urgency: 3}

// ParsePriority reads a Priority Field Value, as in the priority header or
// a PRIORITY_UPDATE frame: a Structured Fields Dictionary such as "u=5, i".
// Per RFC 9218 §4, members it does not know or whose value is invalid are
// ignored (the parameter keeps its default), and so are a member's
// parameters; a later member overrides an earlier one of the same key.
// It never fails: bad input gives the defaults of base.
func ParsePriority(v string, base Priority) Priority {
	p := base
	for len(v) > 0 {
		var m string
		m, v, _ = strings.Cut(v, ",")
		m = strings.Trim(m, " \t")
		m, _, _ = strings.Cut(m, ";") // parameters of the member are ignored
		key, val, hasVal := strings.Cut(m, "=")
		switch key {
		case "u":
			// RFC 9218 §4.1: "urgency ... an Integer ... between 0 and 7
			// inclusive"; out of range or not an integer: ignored.
			if len(val) == 1 && val[0] >= '0' && val[0] <= '7' {
				p.Urgency = val[0] - '0'
			}
		case "i":
			// RFC 9218 §4.2: "incremental ... a Boolean"; a bare key is
			// true in Structured Fields.
			switch {
			case !hasVal || val == "?1":
				p.Incremental = true
			case val == "?0":
				p.Incremental = false
			}
		}
	}
	return p
}

// applyPriority calls the stream's priority hook, if it has one.
func applyPriority(st any, p Priority) {
	if ps, ok := st.(prioritySetter); ok {
		ps.SetPriority(p.Urgency, p.Incremental)
	}
}
