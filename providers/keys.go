package providers

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
)

// NewKey is a key as created: its secret is in this answer only.
type NewKey struct {
	Key    *subprov.APIKey
	Secret string
}

// maxKeyName bounds an API key's label.
const maxKeyName = 100

// CreateKey adds an API key to a provider. The key is generated, returned this once and
// stored as its hash; its features follow the fixture's rule (agent_api_access only).
func (s *Service) CreateKey(ctx context.Context, op *subprov.Operator, providerID, name string, features []string) (*NewKey, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	if _, err := s.read(ctx, op, providerID); err != nil {
		return nil, err
	}
	problems := map[string]string{}
	switch name = strings.TrimSpace(name); {
	case name == "":
		problems["name"] = "required"
	case len(name) > maxKeyName:
		problems["name"] = "at most 100 characters"
	}
	for i, f := range features {
		if p := subprov.FeatureProblem(f); p != "" {
			problems["features."+strconv.Itoa(i)] = p
		}
	}
	if len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	if features == nil {
		features = []string{}
	}
	secret := NewAPIKeySecret()
	now := s.Clock.Now()
	k := &subprov.APIKey{ID: store.NewID(), ProviderID: providerID, Name: name, Prefix: identity.KeyPrefix(secret),
		Features: features, CreatedAt: now.UTC()}
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateAPIKey(ctx, k, identity.HashSecret(secret)); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, providerID, "api_key.created", "api_key", k.ID)
		e.Changes.Set("name", nil, k.Name)
		e.Changes.Set("prefix", nil, k.Prefix)
		e.Changes.Set("features", nil, strings.Join(k.Features, ","))
		e.Changes.SetRedacted("key")
		return tx.RecordAudit(ctx, e, now)
	})
	if err != nil {
		return nil, err
	}
	return &NewKey{Key: k, Secret: secret}, nil
}

// Keys lists a provider's API keys, revoked ones included, oldest first; never a secret.
func (s *Service) Keys(ctx context.Context, op *subprov.Operator, providerID string, page subprov.Page) ([]*subprov.APIKey, string, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, "", err
	}
	if _, err := s.read(ctx, op, providerID); err != nil {
		return nil, "", err
	}
	ks, err := s.Store.APIKeys(ctx, providerID, page)
	if err != nil {
		return nil, "", err
	}
	ks, next := subprov.Cut(page, ks, store.APIKeyKey)
	return ks, next, nil
}

// RevokeKey ends an API key: it is refused from the commit on, on this process at once and on
// every other within a second (the key cache follows the database's change feed). Revoking a
// key already revoked changes nothing.
func (s *Service) RevokeKey(ctx context.Context, op *subprov.Operator, providerID, keyID string) error {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return err
	}
	now := s.Clock.Now()
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		if _, err := readForUpdate(ctx, tx, op, providerID); err != nil {
			return err
		}
		k, err := tx.APIKeyForUpdate(ctx, providerID, keyID)
		if errors.Is(err, subprov.ErrNotFound) {
			return subprov.NotFound("API key")
		}
		if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return nil
		}
		if err := tx.RevokeAPIKey(ctx, k.ID, now); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, providerID, "api_key.revoked", "api_key", k.ID)
		e.Changes.Set("revoked_at", nil, now.UTC().Format("2006-01-02T15:04:05Z07:00"))
		return tx.RecordAudit(ctx, e, now)
	})
}

// NewAPIKeySecret generates an API key: 32 random bytes after a recognisable head, so its
// prefix (identity.KeyPrefix) tells one key from another.
func NewAPIKeySecret() string { return "spk_" + identity.NewToken(32) }
