package domain

import (
	"strings"
	"testing"
)

func TestToken(t *testing.T) {
	id := NewID()
	token, secret := NewToken("ebx", id)
	if !strings.HasPrefix(token, "ebx_"+id+"_") || !strings.HasSuffix(token, secret) || len(secret) != 43 {
		t.Fatalf("token %q, secret %q", token, secret)
	}
	if gotID, gotSecret, ok := ParseToken("ebx", token); !ok || gotID != id || gotSecret != secret {
		t.Fatalf("ParseToken = %q %q %v", gotID, gotSecret, ok)
	}
	if _, other := NewToken("ebx", id); other == secret {
		t.Fatal("two secrets alike")
	}
	for _, bad := range []string{"", token[:len(token)-1], "eby" + token[3:], strings.Replace(token, id, "x", 1),
		token[:len(token)-1] + "!", "ebx_" + id} {
		if _, _, ok := ParseToken("ebx", bad); ok {
			t.Errorf("ParseToken(%q) took it", bad)
		}
	}
}
