// Package certs makes self-signed TLS certificates for development and for
// emulated runs, and pins them on the client side: verification is never
// skipped, the client trusts exactly the generated certificate.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"time"
)

// Pair is a server certificate and a client config that trusts only it.
type Pair struct {
	Server  *tls.Config // presents the certificate
	Client  *tls.Config // verifies the server against the certificate, ServerName set
	CertPEM []byte
	KeyPEM  []byte
}

// SelfSigned makes an ECDSA P-256 certificate for the given host names,
// valid from 1990 to 2100 (so that it also holds inside a synctest bubble,
// whose clock starts in 2000).
func SelfSigned(hosts ...string) (*Pair, error) {
	if len(hosts) == 0 {
		return nil, errors.New("certs: no host name")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: hosts[0]},
		NotBefore:             time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		DNSNames:              hosts,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	return FromPEM(certPEM, keyPEM, hosts[0])
}

// FromPEM builds a Pair from PEM files' contents; serverName is what the
// client verifies.
func FromPEM(certPEM, keyPEM []byte, serverName string) (*Pair, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certPEM) {
		return nil, errors.New("certs: no certificate in PEM")
	}
	return &Pair{
		Server:  &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13},
		Client:  &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS13},
		CertPEM: certPEM,
		KeyPEM:  keyPEM,
	}, nil
}

// ClientPinned returns a client config that trusts only the certificate in
// the PEM file at path, for server name.
func ClientPinned(path, serverName string) (*tls.Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("certs: no certificate in " + path)
	}
	return &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS13}, nil
}
