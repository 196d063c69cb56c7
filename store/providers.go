package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
	"github.com/subprov/subprov/store/internal/engine"
)

// providerFields are the columns a provider is written with in one statement; providerColumns
// those it is read with (its default language is written apart, and its version is the
// database's to move).
const providerFields = `id, name, time_zone, currency, tax_rate_bp, sandbox, webhook_secret, webhook_url,
	checkout_url, service_provider_document_id, sms_configured, booking_window_days, support_group, brand_color,
	payment_processor, processor_account_id, created_at`

const providerColumns = providerFields + `, default_language, auto_repair, outage_credit_min_hours, version`

// providerColumnsOf is providerColumns qualified by a table alias, for joins.
func providerColumnsOf(alias string) string {
	cols := strings.Split(providerColumns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

func scanProvider(row rowScanner) (*subprov.Provider, error) { return scanProviderAnd(row) }

// scanProviderAnd reads providerColumns, then the extra columns the query selected after them.
func scanProviderAnd(row rowScanner, extra ...any) (*subprov.Provider, error) {
	var p subprov.Provider
	var outageHours sql.NullFloat64
	err := row.Scan(append([]any{&p.ID, &p.Name, &p.TimeZone, &p.Currency, &p.TaxRateBP, &p.Sandbox, &p.WebhookSecret, &p.WebhookURL,
		&p.CheckoutURL, &p.ServiceProviderDocumentID, &p.SMSConfigured, &p.BookingWindowDays, &p.SupportGroup, &p.BrandColor,
		&p.PaymentProcessor, &p.ProcessorAccountID, &p.CreatedAt, &p.DefaultLanguage, &p.AutoRepair, &outageHours, &p.Version}, extra...)...)
	if err != nil {
		return nil, err
	}
	if outageHours.Valid {
		p.OutageCredit = &subprov.OutageCredit{MinHours: outageHours.Float64}
	}
	return &p, nil
}

// UpsertProvider writes a provider by id; the webhook secret is stored readable (it signs
// webhooks) and as a lookup hash (it authenticates checkout calls). A provider that names no
// default language keeps the one it has (English for a new one): the language is written only
// when named, so data written for the schema before languages existed still loads.
func (tx *Tx) UpsertProvider(ctx context.Context, p *subprov.Provider, secretHash, deviceSecretHash string, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO providers (`+providerFields+`, webhook_secret_hash, device_secret_hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, time_zone = excluded.time_zone, currency = excluded.currency,
			tax_rate_bp = excluded.tax_rate_bp, sandbox = excluded.sandbox, webhook_secret = excluded.webhook_secret,
			webhook_url = excluded.webhook_url, checkout_url = excluded.checkout_url,
			service_provider_document_id = excluded.service_provider_document_id, sms_configured = excluded.sms_configured,
			booking_window_days = excluded.booking_window_days, support_group = excluded.support_group,
			brand_color = excluded.brand_color, webhook_secret_hash = excluded.webhook_secret_hash,
			device_secret_hash = excluded.device_secret_hash, payment_processor = excluded.payment_processor,
			processor_account_id = excluded.processor_account_id`,
		p.ID, p.Name, p.TimeZone, p.Currency, p.TaxRateBP, p.Sandbox, p.WebhookSecret, p.WebhookURL, p.CheckoutURL,
		p.ServiceProviderDocumentID, p.SMSConfigured, p.BookingWindowDays, p.SupportGroup, p.BrandColor,
		or(p.PaymentProcessor, "builtin"), p.ProcessorAccountID, now.UTC(), secretHash, deviceSecretHash)
	if err == nil && p.AutoRepair {
		// Written only when on, as the language, so data of the schema before it still loads.
		_, err = tx.Exec(ctx, `UPDATE providers SET auto_repair = ? WHERE id = ?`, p.AutoRepair, p.ID)
	}
	if err == nil && p.OutageCredit != nil {
		// Written only when set, as auto_repair, so data of the schema before it still loads.
		_, err = tx.Exec(ctx, `UPDATE providers SET outage_credit_min_hours = ? WHERE id = ?`, p.OutageCredit.MinHours, p.ID)
	}
	if err == nil && p.DefaultLanguage != "" {
		_, err = tx.Exec(ctx, `UPDATE providers SET default_language = ? WHERE id = ?`, p.DefaultLanguage, p.ID)
	}
	if err != nil {
		return fmt.Errorf("upsert provider %s: %w", p.ID, err)
	}
	return nil
}

// Provider returns a provider by id.
func (s *Store) Provider(ctx context.Context, id string) (*subprov.Provider, error) {
	p, err := scanProvider(s.R().QueryRow(ctx, `SELECT `+providerColumns+` FROM providers WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", id, err)
	}
	return p, nil
}

// ProviderByWebhookSecretHash finds the provider whose webhook secret hashes to h, or whose
// previous secret (before a rotation) does and is still accepted at now; it returns the stored
// hash that matched, for the caller's constant-time comparison.
func (s *Store) ProviderByWebhookSecretHash(ctx context.Context, h string, now time.Time) (*subprov.Provider, string, error) {
	var current string
	var previous *string
	p, err := scanProviderAnd(s.R().QueryRow(ctx, `SELECT `+providerColumns+`, webhook_secret_hash, previous_webhook_secret_hash
		FROM providers WHERE webhook_secret_hash = ? OR (previous_webhook_secret_hash = ? AND previous_webhook_secret_expires_at > ?)
		ORDER BY CASE WHEN webhook_secret_hash = ? THEN 0 ELSE 1 END LIMIT 1`, h, h, now.UTC(), h), &current, &previous)
	if err != nil {
		return nil, "", fmt.Errorf("provider by webhook secret: %w", err)
	}
	if current != h && previous != nil {
		return p, *previous, nil
	}
	return p, current, nil
}

// Providers lists every provider, sandbox ones last.
func (s *Store) Providers(ctx context.Context) ([]*subprov.Provider, error) {
	return sqltext.QueryAll(ctx, s.R(), "list providers", scanProvider, `SELECT `+providerColumns+` FROM providers ORDER BY sandbox, name`)
}

// UpsertAPIKey writes an API key by its hash. A revoked key stays revoked: a fixture cannot
// say a key is revoked, so loading it must not bring one back.
func (tx *Tx) UpsertAPIKey(ctx context.Context, k *subprov.APIKey, keyHash string, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO api_keys (id, provider_id, prefix, key_hash, features, created_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (key_hash) DO UPDATE SET provider_id = excluded.provider_id, features = excluded.features`,
		k.ID, k.ProviderID, k.Prefix, keyHash, strings.Join(k.Features, ","), now.UTC())
	if err != nil {
		return fmt.Errorf("upsert api key %s…: %w", k.Prefix, err)
	}
	return nil
}

// APIKeyByHash finds a live API key by the hash of its secret, with its provider: one
// indexed read on every API-key request, remembered until the change log names its provider
// (a change to the provider or to any of its keys: a revoked key stops at once when revoked
// through this store, within 0.1 s when revoked by another process). The caller gets copies
// of its own.
func (s *Store) APIKeyByHash(ctx context.Context, h string) (*subprov.APIKey, *subprov.Provider, error) {
	hit, err := engine.Remembered(s.changes, &s.keys, h, func() (apiKeyHit, error) {
		k, p, err := s.readAPIKey(ctx, h)
		return apiKeyHit{k, p}, err
	}, func(hit apiKeyHit) []engine.Subject {
		return []engine.Subject{{Kind: subjectProvider, ID: hit.provider.ID}}
	})
	if err != nil {
		return nil, nil, err
	}
	k, p := *hit.key, *hit.provider
	k.Features = slices.Clone(k.Features)
	return &k, &p, nil
}

type apiKeyHit struct {
	key      *subprov.APIKey
	provider *subprov.Provider
}

// apiKeyQuery reads a live API key by the hash of its secret, with its provider.
var apiKeyQuery = `SELECT ` + providerColumnsOf("p") + `, k.id, k.prefix, k.features
	FROM api_keys k JOIN providers p ON p.id = k.provider_id WHERE k.key_hash = ? AND k.revoked_at IS NULL`

func (s *Store) readAPIKey(ctx context.Context, h string) (*subprov.APIKey, *subprov.Provider, error) {
	var k subprov.APIKey
	var features string
	p, err := scanProviderAnd(s.R().QueryRow(ctx, apiKeyQuery, h), &k.ID, &k.Prefix, &features)
	if err != nil {
		return nil, nil, fmt.Errorf("api key by hash: %w", err)
	}
	k.ProviderID, k.Features = p.ID, splitList(features)
	return &k, p, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// SandboxProvider returns the sandbox provider the dashboard's sandbox acts on (the first, by
// id, when a deployment has several).
func (s *Store) SandboxProvider(ctx context.Context) (*subprov.Provider, error) {
	p, err := scanProvider(s.R().QueryRow(ctx, `SELECT `+providerColumns+` FROM providers WHERE sandbox = TRUE ORDER BY id LIMIT 1`))
	if err != nil {
		return nil, fmt.Errorf("sandbox provider: %w", err)
	}
	return p, nil
}

// SetWebhookURL changes a provider's receiver URL.
func (tx *Tx) SetWebhookURL(ctx context.Context, providerID, url string) error {
	if _, err := tx.Exec(ctx, `UPDATE providers SET webhook_url = ? WHERE id = ?`, url, providerID); err != nil {
		return fmt.Errorf("set webhook url: %w", err)
	}
	return nil
}

// ProviderLanguage is the default_language of a provider, "" when there is no such provider.
func (tx *Tx) ProviderLanguage(ctx context.Context, id string) (string, error) {
	var l string
	err := tx.QueryRow(ctx, `SELECT default_language FROM providers WHERE id = ?`, id).Scan(&l)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("provider %s language: %w", id, err)
	}
	return l, nil
}
