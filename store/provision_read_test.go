package store_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestLineToProvisionAgreesWithItsFourReads pins the provisioning job's one read to the four
// it replaces: the line (SubscriptionByID), its provider (Provider), its port (PortByID, nil
// without one) and its plan version (PlanVersion).
func TestLineToProvisionAgreesWithItsFourReads(t *testing.T) {
	t.Parallel()
	eachGeneratedStore(t, gen.Options{Subscribers: 40, Providers: 2, Seed: 5, Now: now}, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		withPort := testdb.Strings(t, rawdb.Writer(s).QueryContext, s.Dialect.Rebind(`SELECT id FROM subscriptions WHERE port_id IS NOT NULL ORDER BY id LIMIT 1`))
		otherProvider := testdb.Strings(t, rawdb.Writer(s).QueryContext, s.Dialect.Rebind(`SELECT id FROM subscriptions WHERE provider_id = ? ORDER BY id LIMIT 1`), gen.ProviderID(2))
		if len(withPort) != 1 || len(otherProvider) != 1 {
			t.Fatalf("generated data lacks a case: with port %v, second provider %v", withPort, otherProvider)
		}
		// Every generated line has a port; a suite-only line (the install route) has none.
		portless, err := s.SubscriptionByID(ctx, withPort[0])
		if err != nil {
			t.Fatal(err)
		}
		portless.ID, portless.Status, portless.PortID = store.NewID(), subprov.StatusCancelled, ""
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.UpsertSubscription(ctx, portless, now) }); err != nil {
			t.Fatal(err)
		}
		withoutPort := []string{portless.ID}
		tests := []struct {
			name     string
			id       string
			wantPort bool
		}{
			{"a line with a port", withPort[0], true},
			{"a line without a port has no port", withoutPort[0], false},
			{"another provider's line comes with that provider and its plan", otherProvider[0], true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.LineToProvision(ctx, tt.id)
				if err != nil {
					t.Fatal(err)
				}
				line, err := s.SubscriptionByID(ctx, tt.id)
				if err != nil {
					t.Fatal(err)
				}
				provider, err := s.Provider(ctx, line.ProviderID)
				if err != nil {
					t.Fatal(err)
				}
				plan, err := s.PlanVersion(ctx, line.ProviderID, line.PlanVersionID)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Line, line) {
					t.Errorf("line = %+v\nwant %+v", got.Line, line)
				}
				if !reflect.DeepEqual(got.Provider, provider) {
					t.Errorf("provider = %+v\nwant %+v", got.Provider, provider)
				}
				if !reflect.DeepEqual(got.Plan, plan) {
					t.Errorf("plan = %+v\nwant %+v", got.Plan, plan)
				}
				if !tt.wantPort {
					if got.Port != nil {
						t.Errorf("port = %+v, want none", got.Port)
					}
					return
				}
				port, err := s.PortByID(ctx, line.PortID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Port == nil || *got.Port != *port {
					t.Errorf("port = %+v, want %+v", got.Port, port)
				}
			})
		}
		t.Run("an unknown line is no rows", func(t *testing.T) {
			if _, err := s.LineToProvision(ctx, "no-such-line"); !errors.Is(err, subprov.ErrNotFound) {
				t.Fatalf("err = %v, want subprov.ErrNotFound", err)
			}
		})
	})
}

// TestLocationByPortForTellsCoverage checks that the order's port lookup reports whether the
// provider covers the port's building, and that its building is the one CoveredBuilding reads.
func TestLocationByPortForTellsCoverage(t *testing.T) {
	t.Parallel()
	eachGeneratedStore(t, gen.Options{Subscribers: 20, Providers: 2, Seed: 6, Now: now}, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		hashes := testdb.Strings(t, rawdb.Writer(s).QueryContext, s.Dialect.Rebind(`SELECT p.location_hash FROM ports p
			JOIN building_providers bp ON bp.building_id = p.building_id AND bp.provider_id = ?
			WHERE p.location_hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM building_providers o
				WHERE o.building_id = p.building_id AND o.provider_id = ?)
			ORDER BY p.location_hash LIMIT 1`), gen.ProviderID(1), gen.ProviderID(2))
		if len(hashes) != 1 {
			t.Fatal("generated data has no port in a building only provider 1 covers")
		}
		tests := []struct {
			name        string
			provider    string
			wantCovered bool
		}{
			{"the covering provider", gen.ProviderID(1), true},
			{"a provider that does not cover the building", gen.ProviderID(2), false},
			{"no provider (LocationByPort)", "", false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				loc, err := s.LocationByPortFor(ctx, tt.provider, hashes[0], "")
				if err != nil {
					t.Fatal(err)
				}
				if loc.Covered != tt.wantCovered {
					t.Fatalf("Covered = %v, want %v", loc.Covered, tt.wantCovered)
				}
				if !tt.wantCovered {
					return
				}
				b, err := s.CoveredBuilding(ctx, tt.provider, loc.Building.ID)
				if err != nil {
					t.Fatal(err)
				}
				if loc.Building != *b {
					t.Fatalf("building = %+v, want CoveredBuilding's %+v", loc.Building, *b)
				}
			})
		}
		plain, err := s.LocationByPort(ctx, hashes[0], "")
		if err != nil || plain.Covered {
			t.Fatalf("LocationByPort = %+v, %v; want the port, not covered", plain, err)
		}
	})
}
