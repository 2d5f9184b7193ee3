package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
	"github.com/eventbridge-go/eventbridge/domain/user"
)

// Bootstrap files written into the data directory when the control plane creates the first administrator.
const (
	AdminPasswordFile = "admin-password"
	AdminAPIKeyFile   = "admin-api-key"
	// AdminUsername is the login name of the administrator made at bootstrap.
	AdminUsername = "admin"
	// AdminKeyName names the instance administrator's key made at bootstrap.
	AdminKeyName = "bootstrap-admin"
)

// identity is what bootstrapping needs of the identity services.
type identity struct {
	accounts *account.Service
	users    *user.Service
	keys     *apikey.Service
}

// bootstrap makes sure an installation can be administered. It runs under the migration lock (migrations.UpThen),
// so of several replicas starting together one makes the administrator.
//
//   - Whenever no instance administrator exists (neither an enabled instance-administrator user nor a live
//     instance administrator's key) — first start, or an upgrade from a version without identities — it creates
//     the user "admin" with a password and an instance administrator's key in the account "default". Both come
//     from --bootstrap-admin-password-file and --bootstrap-api-key-file when given; else they are random and
//     written to <data-dir>/admin-password and <data-dir>/admin-api-key (mode 0600). The log says where they are,
//     never what they are.
//   - A key given with --bootstrap-api-key-file that the database does not know is imported at every start, so
//     an operator who lost every administrator's key puts a new one in the file and restarts.
func bootstrap(ctx context.Context, c Config, id identity, log *slog.Logger) error {
	if _, err := id.accounts.Accounts.Get(ctx, domain.DefaultAccountID); errors.Is(err, account.ErrNotFound) {
		if _, err := id.accounts.Create(ctx, domain.DefaultAccountID); err != nil && !errors.Is(err, account.ErrAlreadyExists) {
			return err
		}
	} else if err != nil {
		return err
	}
	admins, err := id.users.Users.CountInstanceAdmins(ctx)
	if err != nil {
		return err
	}
	hasKey, err := id.keys.HasInstanceAdminKey(ctx)
	if err != nil {
		return err
	}
	keySpec := apikey.Spec{Name: AdminKeyName, Role: access.Admin, InstanceAdmin: true}
	if admins > 0 || hasKey {
		return importKeyFile(ctx, c, id, keySpec, log)
	}

	password, generatedPassword, err := secretFrom(c.BootstrapAdminPasswordFile, "--bootstrap-admin-password-file", randomPassword)
	if err != nil {
		return err
	}
	if err := ensureAdminUser(ctx, id.users, password); err != nil {
		return err
	}
	var token string
	if c.BootstrapAPIKeyFile != "" {
		if token, _, err = secretFrom(c.BootstrapAPIKeyFile, "--bootstrap-api-key-file", nil); err != nil {
			return err
		}
		if _, err := id.keys.Import(ctx, token, domain.DefaultAccountID, keySpec); err != nil {
			return fmt.Errorf("--bootstrap-api-key-file %s: %w", c.BootstrapAPIKeyFile, err)
		}
	} else if _, token, err = id.keys.Create(ctx, nil, domain.DefaultAccountID, keySpec); err != nil {
		return err
	}
	attrs := []any{"user", AdminUsername}
	if generatedPassword {
		path := filepath.Join(c.DataDir, AdminPasswordFile)
		if err := writeSecret(path, password); err != nil {
			return err
		}
		attrs = append(attrs, "password_file", path)
	}
	if c.BootstrapAPIKeyFile == "" {
		path := filepath.Join(c.DataDir, AdminAPIKeyFile)
		if err := writeSecret(path, token); err != nil {
			return err
		}
		attrs = append(attrs, "api_key_file", path)
	}
	log.Warn("no instance administrator existed: created one; read its credentials from the files named here", attrs...)
	return nil
}

// importKeyFile imports the key of --bootstrap-api-key-file unless the database has a key with its id.
func importKeyFile(ctx context.Context, c Config, id identity, spec apikey.Spec, log *slog.Logger) error {
	if c.BootstrapAPIKeyFile == "" {
		return nil
	}
	token, _, err := secretFrom(c.BootstrapAPIKeyFile, "--bootstrap-api-key-file", nil)
	if err != nil {
		return err
	}
	if _, err := id.keys.Authenticate(ctx, token); err == nil {
		return nil
	}
	k, err := apikey.FromToken(token, domain.DefaultAccountID, spec, "system", time.Now())
	if err != nil {
		return fmt.Errorf("--bootstrap-api-key-file %s: %w", c.BootstrapAPIKeyFile, err)
	}
	if _, err := id.keys.Keys.Get(ctx, k.ID()); err == nil {
		log.Warn("the key of --bootstrap-api-key-file is revoked or expired; it is not imported again", "file", c.BootstrapAPIKeyFile)
		return nil
	}
	if _, err := id.keys.Import(ctx, token, domain.DefaultAccountID, spec); err != nil {
		return fmt.Errorf("--bootstrap-api-key-file %s: %w", c.BootstrapAPIKeyFile, err)
	}
	log.Warn("imported the instance administrator's key of --bootstrap-api-key-file", "file", c.BootstrapAPIKeyFile)
	return nil
}

// ensureAdminUser creates the user "admin" as an instance administrator with password, or, when a user of that
// name exists (not an administrator, or disabled), makes it one with that password.
func ensureAdminUser(ctx context.Context, users *user.Service, password string) error {
	_, err := users.Create(ctx, user.Spec{Username: AdminUsername, Password: password, InstanceAdmin: true})
	if !errors.Is(err, user.ErrAlreadyExists) {
		return err
	}
	yes, no := true, false
	_, err = users.Patch(ctx, AdminUsername, user.Patch{Password: &password, InstanceAdmin: &yes, Disabled: &no})
	return err
}

// secretFrom reads a secret from path (trimmed of surrounding white space; flag names the flag in errors, which
// never hold the secret), or, when path is empty, makes one with generate (generated reports that).
func secretFrom(path, flag string, generate func() string) (secret string, generated bool, err error) {
	if path == "" {
		return generate(), true, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", flag, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", false, fmt.Errorf("%s: %s is empty", flag, path)
	}
	return s, false, nil
}

// randomPassword is 24 random bytes in base64url (32 characters).
func randomPassword() string {
	var b [24]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// writeSecret writes a secret file readable by its owner only, replacing one that exists.
func writeSecret(path, secret string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(secret+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // WriteFile keeps the mode of a file that existed
		return err
	}
	return os.Rename(tmp, path)
}
