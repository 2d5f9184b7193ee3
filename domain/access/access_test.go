package access_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/access"
)

var update = flag.Bool("update", false, "rewrite the matrix in docs/identity.md")

// TestMatrix is the table of issue 15: what each role may do in its account.
func TestMatrix(t *testing.T) {
	t.Parallel()
	want := map[access.Permission][]access.Role{
		access.Read:         {access.Admin, access.Editor, access.Operator, access.Viewer},
		access.Write:        {access.Admin, access.Editor},
		access.Operate:      {access.Admin, access.Editor, access.Operator},
		access.PutEvents:    {access.Admin, access.Editor, access.Publisher},
		access.Test:         {access.Admin, access.Editor, access.Operator, access.Viewer, access.Publisher},
		access.ReadSecrets:  {access.Admin, access.Editor},
		access.ManageAccess: {access.Admin},
		// Not granted by any role: instance administrators only, and anyone authenticated.
		access.ManageInstance: nil,
		access.Authenticated:  nil,
	}
	require.Len(t, want, len(access.Permissions))
	for _, p := range access.Permissions {
		for _, r := range access.Roles {
			assert.Equalf(t, contains(want[p], r), r.Grants(p), "%s grants %s", r, p)
		}
		assert.NotEmpty(t, p.Description(), "%s is described", p)
	}
}

func contains(rs []access.Role, r access.Role) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// TestPrincipals: what keys and users may do where.
func TestPrincipals(t *testing.T) {
	t.Parallel()
	viewer := access.KeyPrincipal("id1", "ci", "shop", access.Viewer, false, nil, time.Time{})
	assert.True(t, viewer.Can("shop", access.Read))
	assert.False(t, viewer.Can("shop", access.Write))
	assert.False(t, viewer.Can("other", access.Read), "another account")
	assert.False(t, viewer.Can("shop", access.ManageInstance))
	assert.True(t, viewer.Can("", access.Authenticated))
	assert.Equal(t, "shop", viewer.HomeAccount())
	assert.True(t, viewer.MayPutOn("anything"), "no bus list: every bus")

	pub := access.KeyPrincipal("id2", "shop-web", "shop", access.Publisher, false, []string{"orders"}, time.Time{})
	assert.True(t, pub.MayPutOn("orders"))
	assert.False(t, pub.MayPutOn("payments"))

	root := access.KeyPrincipal("id3", "root", "default", access.Admin, true, nil, time.Time{})
	for _, p := range access.Permissions {
		assert.Truef(t, root.Can("anywhere", p), "instance administrator: %s", p)
	}
	r, ok := root.RoleIn("anywhere")
	assert.True(t, ok)
	assert.Equal(t, access.Admin, r)

	alice := access.UserPrincipal("u1", "alice", false, map[string]access.Role{"shop": access.Editor, "blog": access.Viewer})
	assert.Equal(t, []string{"blog", "shop"}, alice.Accounts())
	assert.Equal(t, "blog", alice.HomeAccount(), "the first of its accounts when not a member of default")
	assert.True(t, alice.Can("shop", access.Write))
	assert.False(t, alice.Can("blog", access.Write))

	err := access.Denied(viewer, "shop", access.Write)
	assert.ErrorIs(t, err, access.ErrForbidden)
	assert.Contains(t, err.Error(), `role "viewer" in account "shop"`)
	assert.Contains(t, err.Error(), `"resources.write"`)
	assert.Contains(t, access.Denied(viewer, "other", access.Read).Error(), `not a member of account "other"`)
	assert.Contains(t, access.Denied(viewer, "", access.ManageInstance).Error(), "instance administrator")
}

// TestMatrixDoc keeps the matrix of docs/identity.md equal to the code: go test ./domain/access -run TestMatrixDoc -update.
func TestMatrixDoc(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("| permission | allows |")
	for _, r := range access.Roles {
		fmt.Fprintf(&b, " %s |", r)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(access.Roles)) + "\n")
	for _, p := range access.Permissions {
		fmt.Fprintf(&b, "| `%s` | %s |", p, p.Description())
		for _, r := range access.Roles {
			mark := ""
			switch {
			case p.Scope() == access.ScopeAnyone || r.Grants(p):
				mark = "✓"
			}
			fmt.Fprintf(&b, " %s |", mark)
		}
		b.WriteString("\n")
	}
	const begin, end = "<!-- matrix: written by go test ./domain/access -run TestMatrixDoc -update -->\n", "<!-- end of matrix -->\n"
	path := filepath.Join("..", "..", "docs", "identity.md")
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(doc), begin)
	require.True(t, ok, "docs/identity.md has the matrix's begin marker")
	_, after, ok := strings.Cut(rest, end)
	require.True(t, ok, "docs/identity.md has the matrix's end marker")
	got := before + begin + b.String() + end + after
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		doc = []byte(got)
	}
	assert.Equal(t, got, string(doc), "the matrix of docs/identity.md is out of date: go test ./domain/access -run TestMatrixDoc -update")
}
