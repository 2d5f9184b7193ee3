package connect

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/rpc"
)

// TestSealer: the database's secrets are sealed for their owner and open only for it; a version 1 value (an
// earlier release's) is sealed again for its owner by Upgrade, and anything else is left as it is.
func TestSealer(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, rpc.MasterKeySize)
	s, err := NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	owner := domain.SecretOwner{Account: "acme", Kind: "connection", ID: "c1", Field: "basic.password"}
	a, err := s.Seal(owner, "hunter2")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Seal(owner, "hunter2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a, rpc.SecretPrefixV2) || strings.Contains(a, "hunter2") || a == b {
		t.Fatalf("want two different enc:v2: values without the plaintext, got %q and %q", a, b)
	}
	if p, err := s.Open(owner, a); err != nil || p != "hunter2" {
		t.Fatalf("Open = %q, %v", p, err)
	}
	for name, other := range map[string]domain.SecretOwner{
		"another account":  {Account: "evil", Kind: "connection", ID: "c1", Field: "basic.password"},
		"another resource": {Account: "acme", Kind: "connection", ID: "c2", Field: "basic.password"},
		"another kind":     {Account: "acme", Kind: "source", ID: "c1", Field: "basic.password"},
		"another field":    {Account: "acme", Kind: "connection", ID: "c1", Field: "apiKey.value"},
	} {
		if _, err := s.Open(other, a); !errors.Is(err, rpc.ErrWrongBinding) {
			t.Fatalf("%s: want ErrWrongBinding, got %v", name, err)
		}
	}
	v1, _ := rpc.EncryptSecret(key, "hunter2")
	up, err := s.Upgrade(owner, v1)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.Open(owner, up); err != nil || p != "hunter2" {
		t.Fatalf("the upgraded value opens for its owner: %q, %v", p, err)
	}
	if same, _ := s.Upgrade(owner, a); same != a {
		t.Fatal("a version 2 value is left as it is")
	}
	if _, err := NewSealer(key[:16]); !errors.Is(err, rpc.ErrMasterKey) {
		t.Fatalf("want ErrMasterKey for a short key, got %v", err)
	}
}

// TestSecretsDoNotMoveBetweenOwners: a connection's sealed API key copied into another account's connection (as
// someone with the database could) does not open for it: the runtime adapter cannot hand it to any connector.
func TestSecretsDoNotMoveBetweenOwners(t *testing.T) {
	t.Parallel()
	s, err := NewSealer(bytes.Repeat([]byte{7}, rpc.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	spec := func(name, key string) connection.Spec {
		return connection.Spec{Name: name, AuthorizationType: connection.APIKey,
			APIKey: &connection.APIKeyAuth{APIKeyName: "X-Api-Key", APIKeyValue: key}}
	}
	victim, err := connection.New("victim", spec("crm", "victims-key"), s, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	thief, err := connection.New("thief", spec("crm", "thiefs-key"), s, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	stolen := victim.Sealed().APIKey.APIKeyValue
	if _, err := thief.Reseal(func(domain.SecretOwner, string) (string, error) { return stolen, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := thief.Opened(s); !errors.Is(err, rpc.ErrWrongBinding) {
		t.Fatalf("the victim's value opened for the thief's connection: %v", err)
	}
	if got, err := victim.Opened(s); err != nil || got.APIKey.APIKeyValue != "victims-key" {
		t.Fatalf("the victim's own: %v %v", got.APIKey, err)
	}
}
