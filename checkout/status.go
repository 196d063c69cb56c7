package checkout

import (
	"context"
	"errors"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
)

// Subscription returns a line by the partner's own id, for the partner's subscription view.
func (s *Service) Subscription(ctx context.Context, p *subprov.Provider, externalID string) (*subprov.Subscription, error) {
	sub, err := s.Store.SubscriptionByExternalID(ctx, p.ID, externalID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.NotFound("Subscription")
		}
		return nil, err
	}
	return sub, nil
}

// StatusInput is the marketplace's suspend or restore.
type StatusInput struct {
	Action                    string
	ExternalSubscriptionID    string
	ServiceProviderDocumentID string
}

// SetStatus suspends or restores a line addressed by external_subscription_id plus
// service_provider_document_id; an address that does not resolve to one of the provider's
// lines is 404.
func (s *Service) SetStatus(ctx context.Context, p *subprov.Provider, in StatusInput) (*provisioning.StatusResult, error) {
	problems := map[string]string{}
	if in.Action != provisioning.ServiceSuspend && in.Action != provisioning.ServiceRestore {
		problems["action"] = "want suspend or restore"
	}
	for field, v := range map[string]string{"external_subscription_id": in.ExternalSubscriptionID, "service_provider_document_id": in.ServiceProviderDocumentID} {
		if strings.TrimSpace(v) == "" {
			problems[field] = "required"
		}
	}
	if len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	if in.ServiceProviderDocumentID != p.ServiceProviderDocumentID {
		return nil, subprov.NotFound("Subscription")
	}
	return s.Provisioning.SetServiceStatus(ctx, p, in.ExternalSubscriptionID, in.Action)
}
