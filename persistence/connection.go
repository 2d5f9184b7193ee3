package persistence

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/connection"
)

var (
	_ connection.Repository = (*ConnectionRepository)(nil)
	_ connection.Users      = (*APIDestinationRepository)(nil)
)

type connectionRow struct {
	ID                string `gorm:"column:id;primaryKey"`
	AccountID         string `gorm:"column:account_id"`
	Name              string `gorm:"column:name"`
	Description       string `gorm:"column:description"`
	AuthorizationType string `gorm:"column:authorization_type"`
	// AuthParameters is the JSON form of the authorization and invocation parameters (authParamsJSON); every
	// secret in it is sealed (enc:v1:...).
	AuthParameters string    `gorm:"column:auth_parameters"`
	CreatedAt      time.Time `gorm:"column:created_at;autoCreateTime:false"`
	UpdatedAt      time.Time `gorm:"column:updated_at;autoUpdateTime:false"`
	// AuthorizedAt is NULL for a connection stored before it was kept (authorized at its creation);
	// DeauthorizedAt is NULL while the connection is AUTHORIZED.
	AuthorizedAt   *time.Time `gorm:"column:authorized_at"`
	DeauthorizedAt *time.Time `gorm:"column:deauthorized_at"`
}

func (connectionRow) TableName() string { return "connections" }

// The stored form of a connection's parameters. Secrets are stored as the domain holds them: sealed.
type (
	paramJSON struct {
		Key           string `json:"key"`
		Value         string `json:"value"`
		IsValueSecret bool   `json:"isValueSecret,omitempty"`
	}
	httpParamsJSON struct {
		Header []paramJSON `json:"header,omitempty"`
		Query  []paramJSON `json:"query,omitempty"`
		Body   []paramJSON `json:"body,omitempty"`
	}
	basicJSON struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	apiKeyJSON struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	oauthJSON struct {
		AuthorizationEndpoint string         `json:"authorizationEndpoint"`
		HTTPMethod            string         `json:"httpMethod"`
		ClientID              string         `json:"clientId"`
		ClientSecret          string         `json:"clientSecret"`
		Scopes                []string       `json:"scopes,omitempty"`
		HTTPParameters        httpParamsJSON `json:"httpParameters"`
	}
	authParamsJSON struct {
		Basic      *basicJSON     `json:"basic,omitempty"`
		APIKey     *apiKeyJSON    `json:"apiKey,omitempty"`
		OAuth      *oauthJSON     `json:"oauth,omitempty"`
		Invocation httpParamsJSON `json:"invocation"`
	}
)

func paramsToJSON(l []connection.Parameter) []paramJSON {
	out := make([]paramJSON, len(l))
	for i, p := range l {
		out[i] = paramJSON{Key: p.Key, Value: p.Value, IsValueSecret: p.IsValueSecret}
	}
	return out
}

func paramsFromJSON(l []paramJSON) []connection.Parameter {
	if len(l) == 0 {
		return nil
	}
	out := make([]connection.Parameter, len(l))
	for i, p := range l {
		out[i] = connection.Parameter{Key: p.Key, Value: p.Value, IsValueSecret: p.IsValueSecret}
	}
	return out
}

func httpParamsToJSON(p connection.HTTPParameters) httpParamsJSON {
	return httpParamsJSON{Header: paramsToJSON(p.HeaderParameters), Query: paramsToJSON(p.QueryStringParameters), Body: paramsToJSON(p.BodyParameters)}
}

func httpParamsFromJSON(p httpParamsJSON) connection.HTTPParameters {
	return connection.HTTPParameters{HeaderParameters: paramsFromJSON(p.Header), QueryStringParameters: paramsFromJSON(p.Query),
		BodyParameters: paramsFromJSON(p.Body)}
}

func connectionToRow(c *connection.Connection) (connectionRow, error) {
	s := c.Sealed()
	j := authParamsJSON{Invocation: httpParamsToJSON(s.InvocationHTTPParameters)}
	if s.Basic != nil {
		j.Basic = &basicJSON{Username: s.Basic.Username, Password: s.Basic.Password}
	}
	if s.APIKey != nil {
		j.APIKey = &apiKeyJSON{Name: s.APIKey.APIKeyName, Value: s.APIKey.APIKeyValue}
	}
	if o := s.OAuth; o != nil {
		j.OAuth = &oauthJSON{AuthorizationEndpoint: o.AuthorizationEndpoint, HTTPMethod: o.HTTPMethod, ClientID: o.ClientID,
			ClientSecret: o.ClientSecret, Scopes: o.Scopes, HTTPParameters: httpParamsToJSON(o.HTTPParameters)}
	}
	b, err := json.Marshal(j)
	if err != nil {
		// The error of encoding/json on these types never holds a value.
		return connectionRow{}, fmt.Errorf("encoding the parameters of connection %s: %w", c.Name(), err)
	}
	return connectionRow{
		ID: c.ID(), AccountID: c.AccountID(), Name: c.Name(), Description: c.Description(),
		AuthorizationType: string(c.AuthorizationType()), AuthParameters: string(b),
		CreatedAt: toDB(c.CreatedAt()), UpdatedAt: toDB(c.UpdatedAt()),
		AuthorizedAt: optionalTime(c.AuthorizedAt()), DeauthorizedAt: optionalTime(c.DeauthorizedAt()),
	}, nil
}

func connectionFromRow(row connectionRow) (*connection.Connection, error) {
	var j authParamsJSON
	if err := json.Unmarshal([]byte(row.AuthParameters), &j); err != nil {
		return nil, fmt.Errorf("reading the parameters of connection %s: malformed JSON", row.ID)
	}
	s := connection.Spec{
		Name: row.Name, Description: row.Description, AuthorizationType: connection.AuthorizationType(row.AuthorizationType),
		InvocationHTTPParameters: httpParamsFromJSON(j.Invocation),
	}
	if j.Basic != nil {
		s.Basic = &connection.BasicAuth{Username: j.Basic.Username, Password: j.Basic.Password}
	}
	if j.APIKey != nil {
		s.APIKey = &connection.APIKeyAuth{APIKeyName: j.APIKey.Name, APIKeyValue: j.APIKey.Value}
	}
	if o := j.OAuth; o != nil {
		s.OAuth = &connection.OAuthParameters{AuthorizationEndpoint: o.AuthorizationEndpoint, HTTPMethod: o.HTTPMethod,
			ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes, HTTPParameters: httpParamsFromJSON(o.HTTPParameters)}
	}
	st := connection.Stored{ID: row.ID, AccountID: row.AccountID, CreatedAt: fromDB(row.CreatedAt), UpdatedAt: fromDB(row.UpdatedAt)}
	if row.AuthorizedAt != nil {
		st.AuthorizedAt = fromDB(*row.AuthorizedAt)
	}
	if row.DeauthorizedAt != nil {
		st.DeauthorizedAt = fromDB(*row.DeauthorizedAt)
	}
	return connection.UnmarshalFromDatabase(st, s), nil
}

// ConnectionRepository stores connections in the connections table, their authorization and invocation
// parameters as JSON in the auth_parameters column with every secret sealed (the domain seals them before they
// reach the repository). Names are unique per account and case-sensitive.
type ConnectionRepository struct {
	db *DB
}

// NewConnectionRepository returns the connection repository of db.
func NewConnectionRepository(db *DB) *ConnectionRepository { return &ConnectionRepository{db: db} }

// Create stores a new connection. In one transaction, with the account's row locked so that concurrent creations
// in one account take turns (on MySQL; SQLite has one writer), it counts the account's connections
// (connection.ErrQuotaExceeded at max) and inserts (connection.ErrAlreadyExists for a name taken).
func (r *ConnectionRepository) Create(ctx context.Context, c *connection.Connection, max int) error {
	row, err := connectionToRow(c)
	if err != nil {
		return err
	}
	err = r.db.transact(ctx, func(tx *gorm.DB) error {
		if err := lockAccount(tx, c.AccountID()); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&connectionRow{}).Where("account_id = ?", c.AccountID()).Count(&n).Error; err != nil {
			return err
		}
		if n >= int64(max) {
			return connection.ErrQuotaExceeded.With("an account may have at most %d connections; this one has %d", max, n)
		}
		return tx.Create(&row).Error
	})
	return translate(err, "storing connection "+c.Name(), outcomes{
		duplicate: connection.ErrAlreadyExists.With("connection %q already exists", c.Name()),
	})
}

// lockAccount locks the account's row until the end of the transaction (when it exists), so that quota checks
// of one account take turns.
func lockAccount(tx *gorm.DB, accountID string) error {
	var rows []accountRow
	return forUpdate(tx).Where("id = ?", accountID).Find(&rows).Error
}

// Stamp changes whenever a connection is created, changed or deleted (their count and their latest change): the
// runtime adapter skips a periodic pass only while it is unchanged.
func (r *ConnectionRepository) Stamp(ctx context.Context) (string, error) {
	return stamp(r.db.session(ctx).Model(&connectionRow{}), "connections")
}

// Get returns connection.ErrNotFound when the account has no connection of that name.
func (r *ConnectionRepository) Get(ctx context.Context, accountID, name string) (*connection.Connection, error) {
	var row connectionRow
	if err := r.db.session(ctx).Where("account_id = ? AND name = ?", accountID, name).Take(&row).Error; err != nil {
		return nil, translate(err, "reading connection "+name, outcomes{notFound: connectionNotFound(name)})
	}
	return connectionFromRow(row)
}

// List returns one page of the account's connections ordered by name and the next page's token.
func (r *ConnectionRepository) List(ctx context.Context, accountID string, page domain.Page) ([]*connection.Connection, string, error) {
	var rows []connectionRow
	if err := pageQuery(r.db.session(ctx).Where("account_id = ?", accountID), page).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing connections", outcomes{})
	}
	rows, next := cutPage(rows, page, func(row connectionRow) string { return row.Name })
	out := make([]*connection.Connection, len(rows))
	for i, row := range rows {
		c, err := connectionFromRow(row)
		if err != nil {
			return nil, "", err
		}
		out[i] = c
	}
	return out, next, nil
}

// Update loads the connection with its row locked, lets fn change it and stores its description, authorization,
// parameters and state in one transaction. connection.ErrNotFound when it does not exist; fn's error is returned as is
// and nothing is stored. It returns the connection as stored.
func (r *ConnectionRepository) Update(ctx context.Context, accountID, name string, fn func(*connection.Connection) error) (*connection.Connection, error) {
	var (
		stored connectionRow
		fnErr  error
	)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row connectionRow
		if err := forUpdate(tx).Where("account_id = ? AND name = ?", accountID, name).Take(&row).Error; err != nil {
			return err
		}
		c, err := connectionFromRow(row)
		if err != nil {
			return err
		}
		if fnErr = fn(c); fnErr != nil {
			return fnErr
		}
		if stored, err = connectionToRow(c); err != nil {
			return err
		}
		return tx.Model(&connectionRow{}).Where("id = ?", row.ID).Updates(map[string]any{
			"description":        stored.Description,
			"authorization_type": stored.AuthorizationType,
			"auth_parameters":    stored.AuthParameters,
			"updated_at":         stored.UpdatedAt,
			"authorized_at":      stored.AuthorizedAt,
			"deauthorized_at":    stored.DeauthorizedAt,
		}).Error
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, translate(err, "updating connection "+name, outcomes{notFound: connectionNotFound(name)})
	}
	return connectionFromRow(stored)
}

// Delete removes a connection: connection.ErrNotFound when it does not exist, connection.ErrInUse while an API
// destination references it (the foreign key of api_destinations refuses it, race-free).
func (r *ConnectionRepository) Delete(ctx context.Context, id string) error {
	res := r.db.session(ctx).Where("id = ?", id).Delete(&connectionRow{})
	if res.Error != nil {
		return translate(res.Error, "deleting connection "+id, outcomes{
			referenced: connection.ErrInUse.With("the connection is used by API destinations; delete them first"),
		})
	}
	if res.RowsAffected == 0 {
		return connection.ErrNotFound.With("connection %s not found", id)
	}
	return nil
}

func connectionNotFound(name string) error {
	return connection.ErrNotFound.With("connection %q not found", name)
}
