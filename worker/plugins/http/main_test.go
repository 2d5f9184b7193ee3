package http_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/eventbridge-go/eventbridge/rpc/rpctest"
)

// trusted is a certificate authority the test process trusts as one of the system's (SSL_CERT_FILE, as a user trusts
// an internal CA), and a server certificate for 127.0.0.1 it signed: the https targets of http2_test.go.
var trusted rpctest.TLSFiles

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "httpsink-ca-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if trusted, err = rpctest.WriteTLSFiles(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Read once, the first time a certificate is verified: before any test runs. It takes the place of the
	// system's bundle file (the system's certificate folders are still read); a target whose certificate no
	// authority of them signed (httptest's) is still refused (errorclass_test.go).
	if err := os.Setenv("SSL_CERT_FILE", trusted.CA); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
