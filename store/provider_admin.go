package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// ProvidersPage lists providers by name, page.Limit+1 of them after the page's position (a
// provider's name and id, as ProviderKey gives them); scope "" lists every provider, else
// that one only.
func (s *Store) ProvidersPage(ctx context.Context, scope string, page subprov.Page) ([]*subprov.Provider, error) {
	var where []string
	var args []any
	if scope != "" {
		where = append(where, "id = ?")
		args = append(args, scope)
	}
	if !page.First() {
		if len(page.After) != 2 {
			return nil, subprov.Invalid(map[string]string{"cursor": "is not a cursor this list issued"})
		}
		where = append(where, "(name > ? OR (name = ? AND id > ?))")
		args = append(args, page.After[0], page.After[0], page.After[1])
	}
	q := `SELECT ` + providerColumns + ` FROM providers`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY name, id LIMIT ?`
	args = append(args, page.Limit+1)
	return sqltext.QueryAll(ctx, s.R(), "providers page", scanProvider, q, args...)
}

// ProviderKey is a provider's position in ProvidersPage's order.
func ProviderKey(p *subprov.Provider) []string { return []string{p.Name, p.ID} }

// ProviderForUpdate reads a provider inside a write transaction, locking its row.
func (tx *Tx) ProviderForUpdate(ctx context.Context, id string) (*subprov.Provider, error) {
	p, err := scanProvider(tx.QueryRow(ctx, `SELECT `+providerColumns+` FROM providers WHERE id = ?`+tx.d.ForUpdate(), id))
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", id, err)
	}
	return p, nil
}

// UpdateProvider writes a provider's editable fields and moves its version on; p.Version
// becomes the new one.
func (tx *Tx) UpdateProvider(ctx context.Context, p *subprov.Provider) error {
	err := tx.QueryRow(ctx, `UPDATE providers SET name = ?, time_zone = ?, currency = ?, tax_rate_bp = ?, webhook_url = ?,
		checkout_url = ?, service_provider_document_id = ?, sms_configured = ?, booking_window_days = ?, support_group = ?,
		brand_color = ?, payment_processor = ?, processor_account_id = ?, default_language = ?, auto_repair = ?, outage_credit_min_hours = ?,
		version = version + 1 WHERE id = ? RETURNING version`,
		p.Name, p.TimeZone, p.Currency, p.TaxRateBP, p.WebhookURL, p.CheckoutURL, p.ServiceProviderDocumentID, p.SMSConfigured,
		p.BookingWindowDays, p.SupportGroup, p.BrandColor, p.PaymentProcessor, p.ProcessorAccountID, or(p.DefaultLanguage, "en"), p.AutoRepair,
		outageCreditHours(p.OutageCredit), p.ID).Scan(&p.Version)
	if err != nil {
		return fmt.Errorf("update provider %s: %w", p.ID, err)
	}
	return nil
}

// outageCreditHours is the column of a provider's outage credit policy: NULL for none.
func outageCreditHours(o *subprov.OutageCredit) sql.NullFloat64 {
	if o == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: o.MinHours, Valid: true}
}

// ProviderHasInvoice reports whether any invoice was issued for the provider.
func (tx *Tx) ProviderHasInvoice(ctx context.Context, id string) (bool, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM invoices WHERE provider_id = ? LIMIT 1) x`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("invoices of provider %s: %w", id, err)
	}
	return n > 0, nil
}

// RotateWebhookSecret makes secret the provider's webhook secret (it signs from now on) and
// keeps the previous secret's hash, accepted inbound until previousExpires; p.Version moves on.
func (tx *Tx) RotateWebhookSecret(ctx context.Context, id, secret, secretHash, previousHash string, previousExpires time.Time) (int64, error) {
	var version int64
	err := tx.QueryRow(ctx, `UPDATE providers SET webhook_secret = ?, webhook_secret_hash = ?, previous_webhook_secret_hash = ?,
		previous_webhook_secret_expires_at = ?, version = version + 1 WHERE id = ? RETURNING version`,
		secret, secretHash, previousHash, previousExpires.UTC(), id).Scan(&version)
	if err != nil {
		return 0, fmt.Errorf("rotate webhook secret of %s: %w", id, err)
	}
	return version, nil
}

const apiKeyColumns = `id, provider_id, name, prefix, features, created_at, last_used_at, revoked_at`

func scanAPIKey(row rowScanner) (*subprov.APIKey, error) {
	var k subprov.APIKey
	var features string
	var used, revoked nullTimeScan
	if err := row.Scan(&k.ID, &k.ProviderID, &k.Name, &k.Prefix, &features, &k.CreatedAt, &used, &revoked); err != nil {
		return nil, err
	}
	k.Features, k.LastUsedAt, k.RevokedAt = splitList(features), used.ptr(), revoked.ptr()
	k.CreatedAt = k.CreatedAt.UTC()
	return &k, nil
}

// CreateAPIKey writes a new API key by its hash.
func (tx *Tx) CreateAPIKey(ctx context.Context, k *subprov.APIKey, keyHash string) error {
	_, err := tx.Exec(ctx, `INSERT INTO api_keys (id, provider_id, name, prefix, key_hash, features, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.ProviderID, k.Name, k.Prefix, keyHash, strings.Join(k.Features, ","), k.CreatedAt.UTC())
	if err != nil {
		return fmt.Errorf("create api key %s…: %w", k.Prefix, err)
	}
	return nil
}

// APIKeys lists a provider's keys, revoked ones included, oldest first: page.Limit+1 of them
// after the page's position (APIKeyKey).
func (s *Store) APIKeys(ctx context.Context, providerID string, page subprov.Page) ([]*subprov.APIKey, error) {
	q := `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE provider_id = ?`
	args := []any{providerID}
	if !page.First() {
		at, err := time.Parse(time.RFC3339Nano, page.After[0])
		if err != nil || len(page.After) != 2 {
			return nil, subprov.Invalid(map[string]string{"cursor": "is not a cursor this list issued"})
		}
		q += ` AND (created_at > ? OR (created_at = ? AND id > ?))`
		args = append(args, at.UTC(), at.UTC(), page.After[1])
	}
	q += ` ORDER BY created_at, id LIMIT ?`
	args = append(args, page.Limit+1)
	return sqltext.QueryAll(ctx, s.R(), "api keys", scanAPIKey, q, args...)
}

// APIKeyKey is a key's position in APIKeys' order.
func APIKeyKey(k *subprov.APIKey) []string {
	return []string{k.CreatedAt.UTC().Format(time.RFC3339Nano), k.ID}
}

// APIKeyForUpdate reads one of a provider's keys inside a write transaction, locking its row.
func (tx *Tx) APIKeyForUpdate(ctx context.Context, providerID, id string) (*subprov.APIKey, error) {
	k, err := scanAPIKey(tx.QueryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE provider_id = ? AND id = ?`+tx.d.ForUpdate(), providerID, id))
	if err != nil {
		return nil, fmt.Errorf("api key %s: %w", id, err)
	}
	return k, nil
}

// RevokeAPIKey ends a key: from the commit on, APIKeyByHash no longer finds it (on this
// process at once, on every other within its change feed's bound).
func (tx *Tx) RevokeAPIKey(ctx context.Context, id string, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, now.UTC(), id); err != nil {
		return fmt.Errorf("revoke api key %s: %w", id, err)
	}
	return nil
}

// TouchAPIKeys records when each key was last used, in one transaction: a batch of the uses
// seen since the last one, never moving a key's time back.
func (s *Store) TouchAPIKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return s.InTx(ctx, func(tx *Tx) error {
		for id, at := range used {
			if _, err := tx.Exec(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`,
				at.UTC(), id, at.UTC()); err != nil {
				return fmt.Errorf("touch api key %s: %w", id, err)
			}
		}
		return nil
	})
}
