package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// A port's desired setting, its version, and the lease that lets one converger at a time
// write it.
func TestPortStates(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProvider(t, s, "p1")
		b := &subprov.Building{ID: "b1", Street: "1 Rue", City: "Montréal", Country: "CA"}
		port := &subprov.Port{ID: "port-1", BuildingID: "b1", Switch: "sw", Name: "ge-0/0/1"}
		err := s.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.UpsertBuilding(ctx, b, "", now); err != nil {
				return err
			}
			return tx.UpsertPort(ctx, port, now)
		})
		if err != nil {
			t.Fatal(err)
		}
		want := func(setting subprov.PortSetting) (int64, bool) {
			t.Helper()
			var v int64
			var changed bool
			err := s.InTx(ctx, func(tx *store.Tx) (err error) {
				v, changed, err = tx.SetPortWant(ctx, port.ID, setting, now)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return v, changed
		}
		if _, _, err := s.LeasePort(ctx, port.ID, "a", now.Add(time.Minute), now); !errors.Is(err, subprov.ErrNotFound) {
			t.Fatalf("lease of a port with no desired setting: %v, want not found", err)
		}
		service := subprov.PortSetting{Mode: "service", VLAN: 2001, DownloadMbps: 500, UploadMbps: 500}
		if v, changed := want(service); v != 1 || !changed {
			t.Fatalf("first setting: version %d, changed %t", v, changed)
		}
		if v, changed := want(service); v != 1 || changed {
			t.Fatalf("the same setting again: version %d, changed %t", v, changed)
		}
		c, ok, err := s.LeasePort(ctx, port.ID, "a", now.Add(time.Minute), now)
		if err != nil || !ok || c.Want != service || c.Version != 1 {
			t.Fatalf("lease: %+v %t %v", c, ok, err)
		}
		if _, ok, err := s.LeasePort(ctx, port.ID, "b", now.Add(time.Minute), now); err != nil || ok {
			t.Fatalf("a second converger got the lease: %t %v", ok, err)
		}
		suspended := service
		suspended.Mode = "suspended"
		if v, changed := want(suspended); v != 2 || !changed {
			t.Fatalf("a new setting while leased: version %d, changed %t", v, changed)
		}
		after, err := s.FinishConverge(ctx, port.ID, "a", 1, "", now)
		if err != nil || after.ConvergedVersion != 1 || after.Version != 2 || after.Converged(2) {
			t.Fatalf("finish at version 1: %+v %v", after, err)
		}
		if _, ok, err := s.LeasePort(ctx, port.ID, "b", now.Add(time.Minute), now); err != nil || !ok {
			t.Fatalf("the lease given back was not free: %t %v", ok, err)
		}
		after, err = s.FinishConverge(ctx, port.ID, "b", 2, "port_in_use", now)
		if err != nil || !after.Failed(2) || after.Failure != "port_in_use" || after.ConvergedVersion != 1 {
			t.Fatalf("a failed attempt: %+v %v", after, err)
		}
		if _, ok, _ := s.LeasePort(ctx, port.ID, "c", now.Add(time.Minute), now); !ok {
			t.Fatal("lease after a failure")
		}
		if _, ok, _ := s.LeasePort(ctx, port.ID, "d", now.Add(2*time.Minute), now.Add(61*time.Second)); !ok {
			t.Fatal("a lease that ran out was not taken over")
		}
		// The converger whose lease ran out records nothing, and reads the port as it stands.
		after, err = s.FinishConverge(ctx, port.ID, "c", 2, "", now)
		if err != nil || after.Converged(2) || after.Version != 2 || after.Failure != "port_in_use" {
			t.Fatalf("an outcome recorded after the lease was lost: %+v %v", after, err)
		}
		var flagged bool
		err = s.InTx(ctx, func(tx *store.Tx) (err error) { flagged, err = tx.MarkUnconverged(ctx, port.ID, now); return err })
		if err != nil || !flagged {
			t.Fatalf("mark unconverged: %t %v", flagged, err)
		}
		err = s.InTx(ctx, func(tx *store.Tx) (err error) { flagged, err = tx.MarkUnconverged(ctx, port.ID, now); return err })
		if err != nil || flagged {
			t.Fatalf("marked unconverged twice: %t %v", flagged, err)
		}
		after, err = s.FinishConverge(ctx, port.ID, "d", 2, "", now)
		if err != nil || !after.Converged(2) || after.Unconverged {
			t.Fatalf("a convergence clears the mark: %+v %v", after, err)
		}
	})
}
