package cli

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// parseLimits parses args with the limits' flags and applies them.
func parseLimits(t *testing.T, args ...string) (session.Config, serverLimits, error) {
	t.Helper()
	var l serverLimits
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	l.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	var cfg session.Config
	if err := l.check(); err != nil {
		return cfg, l, err
	}
	l.apply(new(mpfile.Files), &cfg, func(string, ...any) {})
	return cfg, l, nil
}

// Without flags, the session limits are pkg/session's defaults.
func TestServerLimitDefaults(t *testing.T) {
	cfg, l, err := parseLimits(t)
	if err != nil {
		t.Fatal(err)
	}
	want := session.Config{
		MaxSessions: session.DefaultMaxSessions, MaxSessionsPerIP: session.DefaultMaxSessionsPerIP,
		MaxHandshakes: session.DefaultMaxHandshakes, IdleTimeout: session.DefaultIdleTimeout,
		HandshakeTimeout: session.DefaultHandshakeTimeout, AckTimeout: session.DefaultAckTimeout,
		MaxUnackedBytes: session.DefaultMaxUnackedBytes, AddressValidation: session.ValidateUnderLoad,
		RetryAbove: session.DefaultRetryAbove,
	}
	cfg.Logf = nil
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", cfg, want)
	}
	if hs := newH3Server(nil, l, nil); hs.WriteTimeout != defaultWriteTimeout || hs.HeaderTimeout != defaultRequestTimeout {
		t.Errorf("HTTP/3 server limits %v %v", hs.WriteTimeout, hs.HeaderTimeout)
	}
}

// Each session flag reaches its session.Config field.
func TestServerLimitFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		ok   func(session.Config) bool
	}{
		{[]string{"-max-sessions", "10"}, func(c session.Config) bool { return c.MaxSessions == 10 }},
		{[]string{"-max-sessions-per-ip", "3"}, func(c session.Config) bool { return c.MaxSessionsPerIP == 3 }},
		{[]string{"-max-handshakes", "7"}, func(c session.Config) bool { return c.MaxHandshakes == 7 }},
		{[]string{"-idle-timeout", "90s"}, func(c session.Config) bool { return c.IdleTimeout == 90*time.Second }},
		{[]string{"-idle-timeout", "0"}, func(c session.Config) bool { return c.IdleTimeout < 0 }}, // off
		{[]string{"-handshake-timeout", "4s"}, func(c session.Config) bool { return c.HandshakeTimeout == 4*time.Second }},
		{[]string{"-ack-timeout", "20s"}, func(c session.Config) bool { return c.AckTimeout == 20*time.Second }},
		{[]string{"-max-unacked", "8388608"}, func(c session.Config) bool { return c.MaxUnackedBytes == 8<<20 }},
		{[]string{"-address-validation", "always"}, func(c session.Config) bool { return c.AddressValidation == session.ValidateAlways }},
		{[]string{"-address-validation", "never"}, func(c session.Config) bool { return c.AddressValidation == session.ValidateNever }},
		{[]string{"-address-validation", "auto"}, func(c session.Config) bool { return c.AddressValidation == session.ValidateUnderLoad }},
		{[]string{"-retry-above", "500"}, func(c session.Config) bool { return c.RetryAbove == 500 }},
	} {
		cfg, _, err := parseLimits(t, c.args...)
		if err != nil || !c.ok(cfg) {
			t.Errorf("%q: %v, config %+v", c.args, err, cfg)
		}
	}
}

// Out-of-range session limits make mpquic-server exit 2 with a message
// naming the flag, before anything is served.
func TestServerLimitFlagsOutOfRange(t *testing.T) {
	dir := t.TempDir()
	for _, c := range [][]string{
		{"-max-sessions", "0"}, {"-max-sessions", "-1"}, {"-max-sessions", "16777217"},
		{"-max-sessions-per-ip", "0"}, {"-max-sessions-per-ip", "16777217"},
		{"-max-handshakes", "0"}, {"-max-handshakes", "1048577"},
		{"-idle-timeout", "-1s"}, {"-idle-timeout", "25h"},
		{"-handshake-timeout", "0s"}, {"-handshake-timeout", "2h"},
		{"-ack-timeout", "-5s"}, {"-ack-timeout", "61m"},
		{"-max-unacked", "65535"}, {"-max-unacked", "17179869185"},
		{"-address-validation", "sometimes"}, {"-address-validation", ""},
		{"-retry-above", "0"}, {"-retry-above", "1073741825"},
	} {
		code, _, stderr := runServer(t, append([]string{"-dev-cert", dir, "-addr", "127.0.0.1:0"}, c...)...)
		if code != exitUsage || !strings.Contains(stderr, c[0]+" ") || !strings.Contains(stderr, "mpquic-server -h") {
			t.Errorf("%q: exit %d, stderr %q, want 2 naming %s", c, code, stderr, c[0])
		}
	}
	// The edges of each range are accepted: the server starts (and stops
	// at once: runServer's context is already cancelled).
	code, _, stderr := runServer(t, "-dev-cert", dir, "-addr", "127.0.0.1:0", "-max-sessions", "1", "-max-sessions-per-ip", "16777216",
		"-max-handshakes", "1048576", "-idle-timeout", "24h", "-handshake-timeout", "1h", "-ack-timeout", "1ms",
		"-max-unacked", "65536", "-retry-above", "1073741824", "-address-validation", "never")
	if code != exitOK {
		t.Errorf("edge values: exit %d: %s", code, stderr)
	}
	if code, out, _ := runServer(t, "-h"); code != exitOK || !strings.Contains(out, "-max-sessions-per-ip") || !strings.Contains(out, "-address-validation") {
		t.Errorf("-h lacks the session limits: %s", out)
	}
}

// Without -v the session's log carries only the listener's (rate-limited)
// refusal lines.
func TestRefusalsOnly(t *testing.T) {
	var got []string
	f := refusalsOnly(func(format string, a ...any) { got = append(got, format) })
	f("session %x: closing: %v", []byte{1}, "x")
	f("session: rejected a join from %v", "1.2.3.4")
	f("session: refused a connection: limit of %s reached%s", "3 sessions", "")
	if len(got) != 1 || !strings.HasPrefix(got[0], "session: refused") {
		t.Errorf("passed %q", got)
	}
}
