package provisioning

import (
	"context"
	"errors"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// CompleteInstall moves a PENDING_INSTALL line to ACTIVE once the technician is done
// (confirm-install, the CPE's first configuration pull, or a completed dispatch): billing
// starts as a first order, and a line with a port gets it switched on. Confirming an install
// that already completed answers the line as it is (the technician's app may retry).
func (s *Service) CompleteInstall(ctx context.Context, providerID, subscriptionID, mac, via string) (*subprov.Subscription, error) {
	if mac != "" {
		m, ok := subprov.NormalizeMAC(mac)
		if !ok {
			return nil, subprov.Invalid(map[string]string{"mac_address": "not a MAC address"})
		}
		mac = m
	}
	p, err := s.provider(ctx, providerID)
	if err != nil {
		return nil, err
	}
	var out *subprov.Subscription
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		sub, err := tx.LockSubscription(ctx, providerID, subscriptionID)
		if err != nil {
			if errors.Is(err, subprov.ErrNotFound) {
				return subprov.NotFound("Subscription")
			}
			return err
		}
		if sub.Status == subprov.StatusActive && sub.ActivatedAt != nil {
			done, err := tx.InstallDone(ctx, sub.ID)
			if err != nil {
				return err
			}
			if done { // the install already completed: answer the line as it is
				out = sub
				return nil
			}
		}
		to, err := Next(sub.Status, ActCompleteInstall)
		if err != nil {
			return err
		}
		now := s.Clock.Now()
		today := p.Today(now)
		change := subprov.SubscriptionChange{Status: &to, WorkflowState: strPtr(WorkflowInstalled), ActivatedAt: &now, StartedAt: &today}
		if mac != "" {
			change.MACAddress = &mac
			sub.MACAddress = mac
		}
		if sub.PortID != "" {
			change.WorkflowState = strPtr(WorkflowProvisioning)
			if sub.VLAN == 0 {
				port, err := tx.PortByID(ctx, sub.PortID)
				if err != nil {
					return err
				}
				vlan := switches.ServiceVLAN(switches.Port{Switch: port.Switch, Name: port.Name})
				change.VLAN, sub.VLAN = &vlan, vlan
			}
		}
		if err := tx.UpdateSubscription(ctx, sub.ID, change, now); err != nil {
			return err
		}
		reinstall, err := tx.OpenReinstall(ctx, sub.ID)
		if err != nil {
			return err
		}
		if err := tx.CloseInstallJobs(ctx, sub.ID, "done", now); err != nil {
			return err
		}
		sub.Status, sub.WorkflowState, sub.ActivatedAt, sub.StartedAt = to, *change.WorkflowState, &now, today
		if err := tx.InsertAudit(ctx, providerID, "technician:"+via, "subscription.install_completed", sub.ID, "", now); err != nil {
			return err
		}
		if _, err := s.Events.Record(ctx, tx, p, subprov.EventSubscriptionActivated, sub, map[string]any{"via": via}); err != nil {
			return err
		}
		if sub.PortID != "" {
			if _, err := s.enqueueProvision(ctx, tx, sub, false); err != nil {
				return err
			}
		}
		out = sub
		if reinstall != "" && s.Billing != nil {
			return s.Billing.Reinstalled(ctx, tx, p, sub, reinstall)
		}
		return s.startBilling(ctx, tx, p, sub)
	})
	return out, err
}

// DeviceConfig is what a CPE receives on its configuration pull.
type DeviceConfig struct {
	Subscription *subprov.Subscription
	Plan         *subprov.PlanVersion
}

// DevicePull is the CPE's configuration pull: the device names its MAC and the provider's
// device secret (checked by the caller). The first pull of a device whose line waits for its
// install completes the install.
func (s *Service) DevicePull(ctx context.Context, p *subprov.Provider, mac string) (*DeviceConfig, error) {
	m, ok := subprov.NormalizeMAC(mac)
	if !ok {
		return nil, subprov.Invalid(map[string]string{"mac_address": "not a MAC address"})
	}
	sub, err := s.Store.SubscriptionByMAC(ctx, p.ID, m)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.NotFound("Device")
		}
		return nil, err
	}
	if sub.Status == subprov.StatusPendingInstall {
		if sub, err = s.CompleteInstall(ctx, p.ID, sub.ID, "", "cpe"); err != nil {
			return nil, err
		}
	}
	plan, err := s.Store.PlanVersion(ctx, p.ID, sub.PlanVersionID)
	if err != nil {
		return nil, err
	}
	return &DeviceConfig{Subscription: sub, Plan: plan}, nil
}
