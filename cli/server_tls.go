package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
)

// Files of -dev-cert DIR.
const (
	devCertFile = "cert.pem" // the certificate, for the client's -ca
	devKeyFile  = "key.pem"  // its private key, mode 0600
)

// serverTLS loads -cert/-key or the -dev-cert certificate.
func serverTLS(certFile, keyFile, devDir, name string, logf func(string, ...any)) (*tls.Config, error) {
	switch {
	case devDir != "" && (certFile != "" || keyFile != ""):
		return nil, errors.New("give either -cert/-key or -dev-cert, not both")
	case devDir != "":
		return devCert(devDir, name, time.Now(), logf)
	case certFile == "" || keyFile == "":
		return nil, errors.New("TLS needs -cert and -key, or -dev-cert DIR")
	}
	c, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	k, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	pair, err := certs.FromPEM(c, k, name)
	if err != nil {
		return nil, fmt.Errorf("-cert/-key: %w", err)
	}
	return pair.Server, nil
}

// devCert reuses DIR/cert.pem and DIR/key.pem if they hold a matching pair
// valid for name at now; otherwise it makes a new self-signed certificate
// and writes both (the key with mode 0600, each file replaced atomically).
func devCert(dir, name string, now time.Time, logf func(string, ...any)) (*tls.Config, error) {
	cp, kp := filepath.Join(dir, devCertFile), filepath.Join(dir, devKeyFile)
	pair, why := loadDevCert(cp, kp, name, now)
	if pair != nil {
		logf("development certificate for %q reused from %s (client: -ca %s -server-name %s)", name, cp, cp, name)
		return pair.Server, nil
	}
	pair, err := certs.SelfSigned(name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeAtomic(kp, pair.KeyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := writeAtomic(cp, pair.CertPEM, 0o644); err != nil {
		return nil, err
	}
	logf("development certificate for %q written to %s (%s; client: -ca %s -server-name %s)", name, cp, why, cp, name)
	return pair.Server, nil
}

// loadDevCert returns the pair in cp and kp if it is usable for name at
// now, else nil and why not.
func loadDevCert(cp, kp, name string, now time.Time) (*certs.Pair, string) {
	c, err := os.ReadFile(cp)
	if err != nil {
		return nil, "no certificate yet"
	}
	k, err := os.ReadFile(kp)
	if err != nil {
		return nil, "no key next to the old certificate"
	}
	pair, err := certs.FromPEM(c, k, name)
	if err != nil {
		return nil, "the old certificate and key do not match"
	}
	leaf, err := x509.ParseCertificate(pair.Server.Certificates[0].Certificate[0])
	if err != nil {
		return nil, "the old certificate does not parse"
	}
	if err := leaf.VerifyHostname(name); err != nil {
		return nil, fmt.Sprintf("the old certificate is not for %q", name)
	}
	if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return nil, "the old certificate has expired"
	}
	return pair, ""
}

// writeAtomic writes b to path through a temporary file and a rename.
func writeAtomic(path string, b []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil { // an older tmp kept its mode
		return err
	}
	return os.Rename(tmp, path)
}
