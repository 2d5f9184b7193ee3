// Package rpctest makes what tests of the worker REST API over TLS need: a certificate authority and a server
// certificate it signed, written as PEM files.
package rpctest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TLSFiles are the paths of PEM files in a test's temporary directory.
type TLSFiles struct {
	// CA is the certificate of the authority that signed Cert (what a client trusts: --runtime-ca-file).
	CA string
	// Cert and Key are the server's certificate and private key (--tls-cert, --tls-key), valid for 127.0.0.1, ::1
	// and localhost for one hour.
	Cert, Key string
}

// NewTLSFiles creates a certificate authority and a server certificate signed by it (ECDSA P-256) in a temporary
// directory of t. Failures fail the test.
func NewTLSFiles(t testing.TB) TLSFiles {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "eventbridge test CA"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	check(t, err)
	ca, err := x509.ParseCertificate(caDER)
	check(t, err)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	check(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	check(t, err)

	f := TLSFiles{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem")}
	write := func(path, typ string, der []byte) {
		check(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
	}
	write(f.CA, "CERTIFICATE", caDER)
	write(f.Cert, "CERTIFICATE", der)
	write(f.Key, "EC PRIVATE KEY", keyDER)
	return f
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("test certificate: %v", err)
	}
}
