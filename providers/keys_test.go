package providers_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/servicetest"
)

func TestAPIKeysAndWebhookSecrets(t *testing.T) {
	t.Parallel()
	servicetest.EachRules(t,
		servicetest.Rule{Name: "a key is shown once, stored hashed, listed without its secret and revoked at once", Test: func(t *testing.T, e *servicetest.Env) {
			ctx := context.Background()
			for _, tt := range []struct {
				name     string
				op       *subprov.Operator
				key      string
				features []string
				want     string
			}{
				{"a viewer", platformViewer, "k", nil, "forbidden/forbidden"},
				{"another provider's admin", mapleAdmin, "k", nil, "not_found/not_found"},
				{"no name", northwindAdmin, " ", nil, "invalid/validation_error"},
				{"an unknown feature", northwindAdmin, "k", []string{"agent_api_access", "billing"}, "invalid/validation_error"},
			} {
				if _, err := e.Providers.CreateKey(ctx, tt.op, servicetest.Northwind, tt.key, tt.features); servicetest.Code(err) != tt.want {
					t.Fatalf("%s: %v, want %s", tt.name, err, tt.want)
				}
			}
			k, err := e.Providers.CreateKey(ctx, northwindAdmin, servicetest.Northwind, "Agent bot", []string{subprov.FeatureAgentAPI})
			if err != nil {
				t.Fatal(err)
			}
			if len(k.Secret) < 40 || k.Key.Prefix != k.Secret[:8] {
				t.Fatalf("key %q prefix %q", k.Secret, k.Key.Prefix)
			}
			var stored string
			if err := e.Store.R().QueryRow(ctx, `SELECT key_hash FROM api_keys WHERE id = ?`, k.Key.ID).Scan(&stored); err != nil || stored == k.Secret {
				t.Fatalf("stored %q (%v): want the hash only", stored, err)
			}
			got, p, err := e.Auth.APIKey(ctx, k.Secret)
			if err != nil || p.ID != servicetest.Northwind || !got.HasFeature(subprov.FeatureAgentAPI) {
				t.Fatalf("the new key does not authenticate: %v", err)
			}
			ks, _, err := e.Providers.Keys(ctx, northwindView, servicetest.Northwind, subprov.Page{Limit: 50})
			if err != nil || len(ks) != 3 {
				t.Fatalf("keys: %d %v", len(ks), err)
			}
			if _, _, err := e.Providers.Keys(ctx, mapleAdmin, servicetest.Northwind, subprov.Page{Limit: 50}); servicetest.Code(err) != "not_found/not_found" {
				t.Fatalf("another provider's keys: %v", err)
			}
			if err := e.Providers.RevokeKey(ctx, mapleAdmin, servicetest.Northwind, k.Key.ID); servicetest.Code(err) != "not_found/not_found" {
				t.Fatalf("revoke by another provider's admin: %v", err)
			}
			if err := e.Providers.RevokeKey(ctx, northwindAdmin, servicetest.Maple, k.Key.ID); servicetest.Code(err) != "not_found/not_found" {
				t.Fatalf("revoke under another provider's id: %v", err)
			}
			if err := e.Providers.RevokeKey(ctx, northwindAdmin, servicetest.Northwind, k.Key.ID); err != nil {
				t.Fatal(err)
			}
			if _, _, err := e.Auth.APIKey(ctx, k.Secret); servicetest.Code(err) != "unauthorized/unauthorized" {
				t.Fatalf("a revoked key: %v, want 401", err)
			}
			if err := e.Providers.RevokeKey(ctx, northwindAdmin, servicetest.Northwind, k.Key.ID); err != nil {
				t.Fatalf("revoking again: %v", err)
			}
			created, revoked := audits(t, e, k.Key.ID, "api_key.created"), audits(t, e, k.Key.ID, "api_key.revoked")
			if len(created) != 1 || created[0].Changes["key"] != [2]any{"changed", "changed"} || len(revoked) != 1 {
				t.Fatalf("audit: created %+v revoked %+v", created, revoked)
			}
		}},
		servicetest.Rule{Name: "last use is kept in memory and written in batches", Test: func(t *testing.T, e *servicetest.Env) {
			ctx := context.Background()
			k, err := e.Providers.CreateKey(ctx, northwindAdmin, servicetest.Northwind, "Usage", nil)
			if err != nil {
				t.Fatal(err)
			}
			lastUsed := func() *time.Time {
				ks, _, err := e.Providers.Keys(ctx, northwindAdmin, servicetest.Northwind, subprov.Page{Limit: 50})
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range ks {
					if x.ID == k.Key.ID {
						return x.LastUsedAt
					}
				}
				t.Fatal("key not listed")
				return nil
			}
			if _, _, err := e.Auth.APIKey(ctx, k.Secret); err != nil {
				t.Fatal(err)
			}
			if lastUsed() != nil {
				t.Fatal("a request wrote last_used_at at once: want it batched")
			}
			used := e.Clock.Now()
			if err := e.KeyUsage.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got := lastUsed(); got == nil || got.Sub(used).Abs() > time.Second {
				t.Fatalf("last used %v, want about %v", got, used)
			}
			// An older use flushed later does not move the time back.
			e.KeyUsage.Touch(k.Key.ID, used.Add(-time.Hour))
			if err := e.KeyUsage.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got := lastUsed(); got == nil || got.Sub(used).Abs() > time.Second {
				t.Fatalf("last used moved back to %v", got)
			}
		}},
		servicetest.Rule{Name: "a rotated secret signs at once and the previous one is accepted for the overlap", Test: func(t *testing.T, e *servicetest.Env) {
			ctx := context.Background()
			for _, tt := range []struct {
				hours int
				want  string
			}{{-1, "invalid/validation_error"}, {73, "invalid/validation_error"}} {
				if _, err := e.Providers.RotateSecret(ctx, platformAdmin, servicetest.Maple, &tt.hours); servicetest.Code(err) != tt.want {
					t.Fatalf("overlap %d: %v", tt.hours, err)
				}
			}
			if _, err := e.Providers.RotateSecret(ctx, northwindAdmin, servicetest.Maple, nil); servicetest.Code(err) != "not_found/not_found" {
				t.Fatalf("another provider's admin: %v", err)
			}
			accepted := func(secret string) bool {
				_, err := e.Auth.WebhookSecret(ctx, secret)
				return err == nil
			}
			before := e.Clock.Now()
			r, err := e.Providers.RotateSecret(ctx, mapleAdmin, servicetest.Maple, ptr(2))
			if err != nil {
				t.Fatal(err)
			}
			if d := r.PreviousExpires.Sub(before); d < 2*time.Hour-time.Second || d > 2*time.Hour+time.Second {
				t.Fatalf("previous expires %v after the rotation, want 2h", d)
			}
			if p := e.Provider(t, servicetest.Maple); p.WebhookSecret != r.WebhookSecret {
				t.Fatal("outgoing webhooks are not signed with the new secret")
			}
			if !accepted(r.WebhookSecret) || !accepted(servicetest.MapleSecret) {
				t.Fatal("during the overlap both secrets must be accepted")
			}
			e.Clock.Advance(2*time.Hour - time.Minute)
			if !accepted(servicetest.MapleSecret) {
				t.Fatal("the previous secret refused before its expiry")
			}
			e.Clock.Advance(2 * time.Minute)
			if accepted(servicetest.MapleSecret) || !accepted(r.WebhookSecret) {
				t.Fatal("after the overlap the previous secret must be refused and the new one accepted")
			}
			// No overlap: the previous secret stops at once, and the one before it too.
			r2, err := e.Providers.RotateSecret(ctx, platformAdmin, servicetest.Maple, ptr(0))
			if err != nil {
				t.Fatal(err)
			}
			if accepted(r.WebhookSecret) || !accepted(r2.WebhookSecret) {
				t.Fatal("overlap 0: the previous secret still accepted")
			}
			as := audits(t, e, servicetest.Maple, "provider.webhook_secret_rotated")
			if len(as) != 2 || as[0].Changes["webhook_secret"] != [2]any{"changed", "changed"} {
				t.Fatalf("audit: %+v", as)
			}
		}},
	)
}
