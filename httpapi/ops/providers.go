package ops

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/providers"
)

// providerJSON is a provider as the operations surface shows it: never a secret, except the
// webhook secret in the answer that created the provider.
type providerJSON struct {
	ID                        string                `json:"id"`
	Name                      string                `json:"name"`
	TimeZone                  string                `json:"time_zone"`
	Currency                  string                `json:"currency"`
	TaxRateBP                 int                   `json:"tax_rate_bp"`
	Sandbox                   bool                  `json:"sandbox"`
	WebhookURL                *string               `json:"webhook_url"`
	CheckoutURL               *string               `json:"checkout_url"`
	ServiceProviderDocumentID string                `json:"service_provider_document_id"`
	SMSConfigured             bool                  `json:"sms_configured"`
	BookingWindowDays         int                   `json:"booking_window_days"`
	SupportGroup              string                `json:"support_group"`
	BrandColor                string                `json:"brand_color"`
	PaymentProcessor          string                `json:"payment_processor"`
	ProcessorAccountID        string                `json:"processor_account_id"`
	DefaultLanguage           string                `json:"default_language"`
	AutoRepair                bool                  `json:"auto_repair"`
	OutageCredit              *subprov.OutageCredit `json:"outage_credit"`
	Version                   int64                 `json:"version"`
	CreatedAt                 string                `json:"created_at"`
	WebhookSecret             string                `json:"webhook_secret,omitempty"`
}

func providerOf(p *subprov.Provider) providerJSON {
	return providerJSON{ID: p.ID, Name: p.Name, TimeZone: p.TimeZone, Currency: p.Currency, TaxRateBP: p.TaxRateBP, Sandbox: p.Sandbox,
		WebhookURL: api.Optional(p.WebhookURL), CheckoutURL: api.Optional(p.CheckoutURL), ServiceProviderDocumentID: p.ServiceProviderDocumentID,
		SMSConfigured: p.SMSConfigured, BookingWindowDays: p.BookingWindowDays, SupportGroup: p.SupportGroup, BrandColor: p.BrandColor,
		PaymentProcessor: p.PaymentProcessor, ProcessorAccountID: p.ProcessorAccountID, DefaultLanguage: p.DefaultLanguage, AutoRepair: p.AutoRepair, OutageCredit: p.OutageCredit, Version: p.Version,
		CreatedAt: p.CreatedAt.UTC().Format(time.RFC3339)}
}

// ListProviders: GET /api/v1/providers.
func (h *Handler) ListProviders(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	ps, next, err := h.Providers.List(r.Context(), api.CallerOf(r).Operator, page)
	if err != nil {
		return err
	}
	out := make([]providerJSON, len(ps))
	for i, p := range ps {
		out[i] = providerOf(p)
	}
	api.List(w, "providers", out, next)
	return nil
}

// GetProvider: GET /api/v1/providers/{provider_id}.
func (h *Handler) GetProvider(w http.ResponseWriter, r *http.Request) error {
	p, err := h.Providers.Get(r.Context(), api.CallerOf(r).Operator, r.PathValue("provider_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, providerOf(p))
	return nil
}

// CreateProvider: POST /api/v1/providers.
func (h *Handler) CreateProvider(w http.ResponseWriter, r *http.Request) error {
	b, err := api.Decode[providers.Fields](r)
	if err != nil {
		return err
	}
	c, err := h.Providers.Create(r.Context(), api.CallerOf(r).Operator, b)
	if err != nil {
		return err
	}
	out := providerOf(c.Provider)
	out.WebhookSecret = c.WebhookSecret
	api.JSON(w, http.StatusCreated, out)
	return nil
}

// providerPatch is PATCH /api/v1/providers/{provider_id}: any editable field; null removes a URL.
type providerPatch struct {
	Name                      *string `json:"name"`
	TimeZone                  *string `json:"time_zone"`
	Currency                  *string `json:"currency"`
	TaxRateBP                 *int    `json:"tax_rate_bp"`
	WebhookURL                *string `json:"webhook_url"`
	CheckoutURL               *string `json:"checkout_url"`
	ServiceProviderDocumentID *string `json:"service_provider_document_id"`
	SMSConfigured             *bool   `json:"sms_configured"`
	BookingWindowDays         *int    `json:"booking_window_days"`
	SupportGroup              *string `json:"support_group"`
	BrandColor                *string `json:"brand_color"`
	PaymentProcessor          *string `json:"payment_processor"`
	ProcessorAccountID        *string `json:"processor_account_id"`
	DefaultLanguage           *string `json:"default_language"`
	AutoRepair                *bool   `json:"auto_repair"`
	// OutageCredit is the policy an object sets; null (OutageCreditOff) removes it.
	OutageCredit    *subprov.OutageCredit `json:"outage_credit"`
	OutageCreditOff bool                  `json:"-"`
}

// UpdateProvider: PATCH /api/v1/providers/{provider_id}.
func (h *Handler) UpdateProvider(w http.ResponseWriter, r *http.Request) error {
	expected, err := api.IfMatch(r)
	if err != nil {
		return err
	}
	body, err := api.ReadBody(r)
	if err != nil {
		return err
	}
	b, err := api.DecodeBytes[providerPatch](body)
	if err != nil {
		return err
	}
	// A URL sent as null is removed: the patch names it as "".
	var sent map[string]json.RawMessage
	_ = json.Unmarshal(body, &sent) // DecodeBytes accepted it as an object
	none := ""
	for field, dst := range map[string]**string{"webhook_url": &b.WebhookURL, "checkout_url": &b.CheckoutURL} {
		if raw, ok := sent[field]; ok && string(raw) == "null" {
			*dst = &none
		}
	}
	b.OutageCreditOff = string(sent["outage_credit"]) == "null"
	p, err := h.Providers.Update(r.Context(), api.CallerOf(r).Operator, r.PathValue("provider_id"), expected, providers.Patch(b))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, providerOf(p))
	return nil
}

type apiKeyJSON struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Prefix     string   `json:"prefix"`
	Features   []string `json:"features"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
	RevokedAt  *string  `json:"revoked_at"`
}

// ListAPIKeys: GET /api/v1/providers/{provider_id}/api-keys.
func (h *Handler) ListAPIKeys(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	ks, next, err := h.Providers.Keys(r.Context(), api.CallerOf(r).Operator, r.PathValue("provider_id"), page)
	if err != nil {
		return err
	}
	out := make([]apiKeyJSON, len(ks))
	for i, k := range ks {
		out[i] = apiKeyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Features: orEmpty(k.Features), CreatedAt: k.CreatedAt.UTC().Format(time.RFC3339),
			LastUsedAt: api.Instant(k.LastUsedAt), RevokedAt: api.Instant(k.RevokedAt)}
	}
	api.List(w, "api_keys", out, next)
	return nil
}

type apiKeyBody struct {
	Name     string   `json:"name"`
	Features []string `json:"features"`
}

// CreateAPIKey: POST /api/v1/providers/{provider_id}/api-keys.
func (h *Handler) CreateAPIKey(w http.ResponseWriter, r *http.Request) error {
	b, err := api.Decode[apiKeyBody](r)
	if err != nil {
		return err
	}
	k, err := h.Providers.CreateKey(r.Context(), api.CallerOf(r).Operator, r.PathValue("provider_id"), b.Name, b.Features)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, map[string]any{"id": k.Key.ID, "name": k.Key.Name, "key": k.Secret, "prefix": k.Key.Prefix,
		"features": orEmpty(k.Key.Features), "created_at": k.Key.CreatedAt.UTC().Format(time.RFC3339)})
	return nil
}

// RevokeAPIKey: DELETE /api/v1/providers/{provider_id}/api-keys/{key_id}.
func (h *Handler) RevokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	if err := h.Providers.RevokeKey(r.Context(), api.CallerOf(r).Operator, r.PathValue("provider_id"), r.PathValue("key_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type rotateBody struct {
	OverlapHours *int `json:"overlap_hours"`
}

// RotateWebhookSecret: POST /api/v1/providers/{provider_id}/webhook-secret/rotate.
func (h *Handler) RotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	b, err := api.Decode[rotateBody](r)
	if err != nil {
		return err
	}
	res, err := h.Providers.RotateSecret(r.Context(), api.CallerOf(r).Operator, r.PathValue("provider_id"), b.OverlapHours)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, map[string]string{"webhook_secret": res.WebhookSecret,
		"previous_expires_at": res.PreviousExpires.UTC().Format(time.RFC3339)})
	return nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
