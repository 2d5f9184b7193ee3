package rpc

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestSecretRoundTripAndErrors(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	other := bytes.Repeat([]byte{8}, 32)
	enc := func(s string) string {
		v, err := EncryptSecret(key, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	good := enc("hunter2")
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(good, SecretPrefix))
	raw[len(raw)-1] ^= 1
	tampered := SecretPrefix + base64.StdEncoding.EncodeToString(raw)

	tests := []struct {
		name    string
		key     []byte
		value   string
		want    string
		wantErr error
	}{
		{"round trip", key, good, "hunter2", nil},
		{"empty plaintext", key, enc(""), "", nil},
		{"unicode", key, enc("pässwörd ✓"), "pässwörd ✓", nil},
		{"tampered", key, tampered, "", ErrWrongKey},
		{"wrong key", other, good, "", ErrWrongKey},
		{"not encrypted", key, "hunter2", "", ErrNotEncrypted},
		{"not base64", key, SecretPrefix + "!!!", "", ErrMalformedSecret},
		{"too short", key, SecretPrefix + base64.StdEncoding.EncodeToString([]byte("short")), "", ErrMalformedSecret},
		{"short key", key[:16], good, "", ErrMasterKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecryptSecret(tt.key, tt.value)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("error leaks the plaintext: %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("DecryptSecret = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestEncryptSecret(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	a, err := EncryptSecret(key, "hunter2")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := EncryptSecret(key, "hunter2")
	if a == b {
		t.Fatal("two encryptions of one value are equal: the nonce is not fresh")
	}
	if !IsEncrypted(a) || strings.Contains(a, "hunter2") {
		t.Fatalf("EncryptSecret = %q", a)
	}
	if IsEncrypted("hunter2") || !IsEncrypted("enc:v2:abc") || !IsV1(a) || IsV1("enc:v2:abc") {
		t.Fatal("IsEncrypted and IsV1 tell the forms apart")
	}
	if _, err := EncryptSecret(nil, "x"); !errors.Is(err, ErrMasterKey) {
		t.Fatalf("EncryptSecret without a key: %v", err)
	}
}

// TestSealSecretBinding: a version 2 value opens only for the owner it was sealed for: another connector, another
// key, another installation, another master key or an altered value fail alike, without the value in the error; a
// version 1 value is not opened.
func TestSealSecretBinding(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	owner := ConnectorBinding("eb", "eb.acme.orders.r.t", "auth.password")
	v, err := SealSecret(key, owner, "hunter2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v, SecretPrefixV2) || strings.Contains(v, "hunter2") {
		t.Fatalf("SealSecret = %q", v)
	}
	if p, err := OpenSecret(key, owner, v); err != nil || p != "hunter2" {
		t.Fatalf("OpenSecret = %q, %v", p, err)
	}
	altered := v[:len(v)-4] + "AAA="
	for name, c := range map[string]struct {
		key   []byte
		owner Binding
		value string
	}{
		"another connector":    {key, ConnectorBinding("eb", "eb.other.orders.r.t", "auth.password"), v},
		"another key":          {key, ConnectorBinding("eb", "eb.acme.orders.r.t", "auth.api_key.value"), v},
		"another installation": {key, ConnectorBinding("eb2", "eb.acme.orders.r.t", "auth.password"), v},
		"fields run together":  {key, Binding{"connector", "eb", "eb.acme.orders.r.tauth.password", ""}, v},
		"another master key":   {bytes.Repeat([]byte{8}, 32), owner, v},
		"an altered value":     {key, owner, altered},
	} {
		_, err := OpenSecret(c.key, c.owner, c.value)
		if !errors.Is(err, ErrWrongBinding) && !errors.Is(err, ErrMalformedSecret) {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(err.Error(), c.value) {
			t.Fatalf("%s: the error holds the value", name)
		}
	}
	v1, _ := EncryptSecret(key, "hunter2")
	if _, err := OpenSecret(key, owner, v1); !errors.Is(err, ErrNotEncrypted) {
		t.Fatalf("a version 1 value: %v", err)
	}
}
