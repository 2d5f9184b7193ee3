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
	if IsEncrypted("hunter2") || IsEncrypted("enc:v2:abc") {
		t.Fatal("IsEncrypted accepts a plain value")
	}
	if _, err := EncryptSecret(nil, "x"); !errors.Is(err, ErrMasterKey) {
		t.Fatalf("EncryptSecret without a key: %v", err)
	}
}
