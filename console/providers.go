package console

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/providers"
)

// Providers, their API keys and webhook secrets, through the capabilities of
// /api/v1/providers (package providers): it checks the role and the scope (another provider's
// page is not found), holds the fields to their rules, and writes the audit entries. A secret
// the capability makes is shown on the page that answers the form, once: it is kept nowhere
// the console could show it again.

// formField is one field of a provider's form as the template draws it: its input's kind
// ("text", "number", "url", "checkbox", "select", "password"), the value shown (the refused
// form's input, else the provider's), and its problem.
type formField struct {
	Name, Label, Kind, Hint string
	Value                   string
	Checked                 bool
	Options                 []string
	Error                   string
}

// providerFields are the fields PATCH /api/v1/providers/{provider_id} takes, in the form's order.
var providerFields = []formField{
	{Name: "name", Label: "Name", Kind: "text"},
	{Name: "time_zone", Label: "Time zone", Kind: "text", Hint: "an IANA name like America/Toronto; fixed once the provider has invoices"},
	{Name: "currency", Label: "Currency", Kind: "text", Hint: "three letters like CAD; fixed once the provider has invoices"},
	{Name: "tax_rate_bp", Label: "Tax rate", Kind: "number", Hint: "in basis points: 1300 is 13%"},
	{Name: "webhook_url", Label: "Webhook URL", Kind: "url", Hint: "https://, a public address; empty for none"},
	{Name: "checkout_url", Label: "Checkout URL", Kind: "url", Hint: "empty for none"},
	{Name: "service_provider_document_id", Label: "Service provider document", Kind: "text"},
	{Name: "sms_configured", Label: "SMS configured", Kind: "checkbox"},
	{Name: "booking_window_days", Label: "Booking window", Kind: "number", Hint: "days ahead an install may be booked, 0 to 365"},
	{Name: "support_group", Label: "Support group", Kind: "text"},
	{Name: "brand_color", Label: "Brand colour", Kind: "text", Hint: "like #003366"},
	{Name: "payment_processor", Label: "Payment processor", Kind: "select", Options: subprov.PaymentProcessors},
	{Name: "processor_account_id", Label: "Processor account", Kind: "text"},
	{Name: "default_language", Label: "Default language", Kind: "select", Options: subprov.Languages, Hint: "of what subscribers are sent"},
	{Name: "auto_repair", Label: "Repair drifted ports at once", Kind: "checkbox"},
	{Name: "outage_credit", Label: "Outage credit", Kind: "decimal",
		Hint: "credit each outage of a billed line longer than this many hours, pro rata; empty: off"},
}

// newProviderFields are the creation form's: the editable fields, the sandbox flag and the
// optional device secret.
var newProviderFields = append(append([]formField{}, providerFields...),
	formField{Name: "sandbox", Label: "Sandbox provider", Kind: "checkbox"},
	formField{Name: "device_secret", Label: "Device secret", Kind: "password", Hint: "optional; stored as its hash"})

// providerValues are p's fields as the form shows them.
func providerValues(p *subprov.Provider) url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"name": p.Name, "time_zone": p.TimeZone, "currency": p.Currency,
		"tax_rate_bp": strconv.Itoa(p.TaxRateBP), "webhook_url": p.WebhookURL, "checkout_url": p.CheckoutURL,
		"service_provider_document_id": p.ServiceProviderDocumentID, "booking_window_days": strconv.Itoa(p.BookingWindowDays),
		"support_group": p.SupportGroup, "brand_color": p.BrandColor, "payment_processor": p.PaymentProcessor,
		"processor_account_id": p.ProcessorAccountID, "default_language": p.DefaultLanguage} {
		v.Set(k, s)
	}
	if p.SMSConfigured {
		v.Set("sms_configured", "on")
	}
	if p.AutoRepair {
		v.Set("auto_repair", "on")
	}
	if p.OutageCredit != nil {
		v.Set("outage_credit", strconv.FormatFloat(p.OutageCredit.MinHours, 'f', -1, 64))
	}
	return v
}

// formOutageCredit reads the outage credit field: empty is no policy (nil), else its hours,
// or its problem recorded. The capability holds the hours to the policy's rule.
func formOutageCredit(f url.Values, problems map[string]string) *subprov.OutageCredit {
	s := strings.TrimSpace(f.Get("outage_credit"))
	if s == "" {
		return nil
	}
	hours, err := strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
	if err != nil {
		problems["outage_credit"] = "want a number of hours, or nothing for off"
		return nil
	}
	return &subprov.OutageCredit{MinHours: hours}
}

// formProblems names the capability's problem with the outage credit policy's hours by the
// form's field.
func formProblems(err error) error {
	var e *subprov.Error
	if errors.As(err, &e) && e.Fields["outage_credit.min_hours"] != "" {
		e.Fields["outage_credit"] = e.Fields["outage_credit.min_hours"]
		delete(e.Fields, "outage_credit.min_hours")
	}
	return err
}

// fill is fields with values and v's errors; a refused form's input wins over values.
func fill(v *View, fields []formField, values url.Values) []formField {
	if v.Form != nil {
		values = v.Form
	}
	out := make([]formField, len(fields))
	for i, f := range fields {
		f.Value, f.Checked, f.Error = values.Get(f.Name), values.Get(f.Name) != "", v.Errors[f.Name]
		if f.Kind == "password" {
			f.Value = ""
		}
		out[i] = f
	}
	return out
}

// formInt reads an integer field into *dst, or records its problem.
func formInt(f url.Values, name string, problems map[string]string) *int {
	n, err := strconv.Atoi(strings.TrimSpace(f.Get(name)))
	if err != nil {
		problems[name] = "want a whole number"
		return nil
	}
	return &n
}

// providerListData is the providers page's.
type providerListData struct {
	Providers []*subprov.Provider
	Next      string
	// CanCreate: a platform-wide admin creates providers.
	CanCreate bool
}

// providerList: GET /console/providers (GET /api/v1/providers).
func (h *Handler) providerList(w http.ResponseWriter, r *http.Request, v *View) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	ps, next, err := h.Ops.Providers.List(r.Context(), v.Operator, page)
	if err != nil {
		return err
	}
	v.Title = "Providers"
	v.Data = providerListData{Providers: ps, Next: next, CanCreate: v.Operator.Platform() && v.Operator.Role.Can(subprov.PermAdminister)}
	h.render(w, r, v, http.StatusOK, "providers")
	return nil
}

// providerData is a provider's settings page's.
type providerData struct {
	Provider *subprov.Provider
	Fields   []formField
	// Version is the version the form was read at: the edit's If-Match.
	Version int64
	Stale   bool
	// New: the form creates a provider (Provider is nil).
	New bool
}

// providerPage: GET /console/providers/{provider_id} (GET /api/v1/providers/{provider_id}).
func (h *Handler) providerPage(w http.ResponseWriter, r *http.Request, v *View) error {
	p, err := h.Ops.Providers.Get(r.Context(), v.Operator, r.PathValue("provider_id"))
	if err != nil {
		return err
	}
	return h.showProvider(w, r, v, providerData{Provider: p, Version: p.Version}, http.StatusOK)
}

func (h *Handler) showProvider(w http.ResponseWriter, r *http.Request, v *View, d providerData, status int) error {
	v.Title, v.Loc = d.Provider.Name, d.Provider.Location()
	d.Fields = fill(v, providerFields, providerValues(d.Provider))
	v.Data = d
	h.render(w, r, v, status, "provider")
	return nil
}

// updateProvider: POST /console/providers/{provider_id} (PATCH /api/v1/providers/{provider_id}
// with If-Match: the version the form was read at). Every field is sent; the capability
// records only those that changed. A form read before someone else's edit is refused (409,
// "Changed since you read it") with its input kept.
func (h *Handler) updateProvider(w http.ResponseWriter, r *http.Request, v *View) error {
	id, f := r.PathValue("provider_id"), r.PostForm
	version, err := strconv.ParseInt(f.Get("version"), 10, 64)
	if err != nil || version < 1 {
		err = subprov.Errorf(subprov.EBADREQUEST, "bad_form", "The form lacks the version it was read at. Reload the page and try again.")
	}
	var p *subprov.Provider
	if err == nil {
		p, err = h.updateFromForm(r.Context(), v, id, version, f)
	}
	if err != nil {
		stale := subprov.ErrorReason(err) == "stale"
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		cur, err := h.Ops.Providers.Get(r.Context(), v.Operator, id)
		if err != nil {
			return err
		}
		return h.showProvider(w, r, v, providerData{Provider: cur, Version: version, Stale: stale}, status)
	}
	h.redirect(w, r, Prefix+"providers/"+p.ID, "The provider's settings are saved.")
	return nil
}

// updateFromForm decodes the settings form into the capability's patch and calls it.
func (h *Handler) updateFromForm(ctx context.Context, v *View, id string, version int64, f url.Values) (*subprov.Provider, error) {
	problems := map[string]string{}
	str := func(name string) *string { s := strings.TrimSpace(f.Get(name)); return &s }
	sms, autoRepair := f.Get("sms_configured") != "", f.Get("auto_repair") != ""
	outageCredit := formOutageCredit(f, problems)
	patch := providers.Patch{Name: str("name"), TimeZone: str("time_zone"), Currency: str("currency"),
		TaxRateBP: formInt(f, "tax_rate_bp", problems), WebhookURL: str("webhook_url"), CheckoutURL: str("checkout_url"),
		ServiceProviderDocumentID: str("service_provider_document_id"), SMSConfigured: &sms,
		BookingWindowDays: formInt(f, "booking_window_days", problems), SupportGroup: str("support_group"),
		BrandColor: str("brand_color"), PaymentProcessor: str("payment_processor"), ProcessorAccountID: str("processor_account_id"),
		DefaultLanguage: str("default_language"), AutoRepair: &autoRepair, OutageCredit: outageCredit, OutageCreditOff: outageCredit == nil}
	if len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	p, err := h.Ops.Providers.Update(ctx, v.Operator, id, version, patch)
	return p, formProblems(err)
}

// newProviderPage: GET /console/providers/new. Only a platform-wide admin creates providers:
// another is refused here as the capability refuses its form.
func (h *Handler) newProviderPage(w http.ResponseWriter, r *http.Request, v *View) error {
	if !v.Operator.Platform() {
		return subprov.Forbidden()
	}
	return h.showNewProvider(w, r, v, http.StatusOK)
}

func (h *Handler) showNewProvider(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	defaults := url.Values{"payment_processor": {"builtin"}, "default_language": {"en"}, "booking_window_days": {"21"}, "tax_rate_bp": {"0"}}
	v.Title, v.Data = "New provider", providerData{New: true, Fields: fill(v, newProviderFields, defaults)}
	h.render(w, r, v, status, "provider")
	return nil
}

// createProvider: POST /console/providers (POST /api/v1/providers). The answer shows the new
// provider's webhook secret, this once.
func (h *Handler) createProvider(w http.ResponseWriter, r *http.Request, v *View) error {
	f := r.PostForm
	problems := map[string]string{}
	opt := func(name string) *string {
		if s := strings.TrimSpace(f.Get(name)); s != "" {
			return &s
		}
		return nil
	}
	fields := providers.Fields{Name: strings.TrimSpace(f.Get("name")), TimeZone: strings.TrimSpace(f.Get("time_zone")),
		Currency: strings.TrimSpace(f.Get("currency")), Sandbox: f.Get("sandbox") != "", WebhookURL: opt("webhook_url"),
		CheckoutURL: opt("checkout_url"), ServiceProviderDocumentID: strings.TrimSpace(f.Get("service_provider_document_id")),
		SMSConfigured: f.Get("sms_configured") != "", BookingWindowDays: formInt(f, "booking_window_days", problems),
		SupportGroup: strings.TrimSpace(f.Get("support_group")), BrandColor: strings.TrimSpace(f.Get("brand_color")),
		DeviceSecret: f.Get("device_secret"), PaymentProcessor: f.Get("payment_processor"),
		ProcessorAccountID: strings.TrimSpace(f.Get("processor_account_id")), DefaultLanguage: opt("default_language"),
		AutoRepair: f.Get("auto_repair") != "", OutageCredit: formOutageCredit(f, problems)}
	if n := formInt(f, "tax_rate_bp", problems); n != nil {
		fields.TaxRateBP = *n
	}
	var c *providers.Created
	var err error
	if len(problems) > 0 {
		err = subprov.Invalid(problems)
	} else {
		c, err = h.Ops.Providers.Create(r.Context(), v.Operator, fields)
		err = formProblems(err)
	}
	if err != nil {
		status, err := v.Refuse(r, err, "device_secret")
		if err != nil {
			return err
		}
		return h.showNewProvider(w, r, v, status)
	}
	v.Flash = "The provider " + c.Provider.Name + " is created."
	return h.showSecret(w, r, v, secretData{Title: "Provider created", What: "webhook secret", Secret: c.WebhookSecret,
		Provider: c.Provider, Next: Prefix + "providers/" + c.Provider.ID, NextLabel: "Go to the provider's settings"})
}

// secretData is the page that shows a secret once: a new API key or webhook secret.
type secretData struct {
	Title, What, Secret string
	Provider            *subprov.Provider
	// Note says more of it (until when the previous secret is accepted).
	Note            string
	Next, NextLabel string
}

func (h *Handler) showSecret(w http.ResponseWriter, r *http.Request, v *View, d secretData) error {
	return h.renderOf(w, r, v, d.Provider, http.StatusOK, "secret_once", d.Title, d)
}

// renderOf answers with a page of provider p's: its dates in p's time zone.
func (h *Handler) renderOf(w http.ResponseWriter, r *http.Request, v *View, p *subprov.Provider, status int, page, title string, data any) error {
	v.Title, v.Data, v.Loc = title, data, p.Location()
	h.render(w, r, v, status, page)
	return nil
}

// apiKeysData is a provider's API keys page's.
type apiKeysData struct {
	Provider *subprov.Provider
	Keys     []*subprov.APIKey
	Next     string
	Features []string
	// Name and Features are the issue form's kept input.
	Name     string
	Selected map[string]bool
}

// apiKeys: GET /console/providers/{provider_id}/api-keys (GET .../api-keys).
func (h *Handler) apiKeys(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.showAPIKeys(w, r, v, http.StatusOK)
}

func (h *Handler) showAPIKeys(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	ctx := r.Context()
	p, err := h.Ops.Providers.Get(ctx, v.Operator, r.PathValue("provider_id"))
	if err != nil {
		return err
	}
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	keys, next, err := h.Ops.Providers.Keys(ctx, v.Operator, p.ID, page)
	if err != nil {
		return err
	}
	d := apiKeysData{Provider: p, Keys: keys, Next: next, Features: []string{subprov.FeatureAgentAPI}, Selected: map[string]bool{}}
	if v.Form != nil {
		d.Name = v.Form.Get("name")
		for _, f := range v.Form["features"] {
			d.Selected[f] = true
		}
	}
	return h.renderOf(w, r, v, p, status, "api_keys", "API keys of "+p.Name, d)
}

// issueAPIKey: POST /console/providers/{provider_id}/api-keys (POST .../api-keys). The answer
// shows the key, this once: the service keeps its hash only.
func (h *Handler) issueAPIKey(w http.ResponseWriter, r *http.Request, v *View) error {
	ctx := r.Context()
	id := r.PathValue("provider_id")
	k, err := h.Ops.Providers.CreateKey(ctx, v.Operator, id, r.PostForm.Get("name"), r.PostForm["features"])
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		for f, p := range v.Errors {
			if strings.HasPrefix(f, "features.") {
				v.Errors["features"] = p
			}
		}
		return h.showAPIKeys(w, r, v, status)
	}
	p, err := h.Ops.Providers.Get(ctx, v.Operator, id)
	if err != nil {
		return err
	}
	v.Flash = "The API key " + k.Key.Name + " is issued."
	return h.showSecret(w, r, v, secretData{Title: "API key issued", What: "API key", Secret: k.Secret, Provider: p,
		Note: "Its prefix, " + k.Key.Prefix + ", names it in the list.",
		Next: Prefix + "providers/" + p.ID + "/api-keys", NextLabel: "Back to the API keys"})
}

// revokeData is the page that confirms a key's revocation.
type revokeData struct {
	Provider *subprov.Provider
	Key      *subprov.APIKey
}

// revokeAPIKeyPage: GET /console/providers/{provider_id}/api-keys/{key_id}/revoke asks to confirm.
func (h *Handler) revokeAPIKeyPage(w http.ResponseWriter, r *http.Request, v *View) error {
	ctx := r.Context()
	p, err := h.Ops.Providers.Get(ctx, v.Operator, r.PathValue("provider_id"))
	if err != nil {
		return err
	}
	k, err := h.findKey(ctx, v.Operator, p.ID, r.PathValue("key_id"))
	if err != nil {
		return err
	}
	return h.renderOf(w, r, v, p, http.StatusOK, "api_key_revoke", "Revoke API key "+cmp.Or(k.Name, k.Prefix), revokeData{Provider: p, Key: k})
}

// findKey is one of a provider's keys, read through the capability's list.
func (h *Handler) findKey(ctx context.Context, op *subprov.Operator, providerID, keyID string) (*subprov.APIKey, error) {
	page := subprov.Page{Limit: subprov.MaxPageLimit}
	for {
		keys, next, err := h.Ops.Providers.Keys(ctx, op, providerID, page)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if k.ID == keyID {
				return k, nil
			}
		}
		if next == "" {
			return nil, subprov.NotFound("API key")
		}
		if page, err = subprov.ParsePage(subprov.MaxPageLimit, true, next); err != nil {
			return nil, err
		}
	}
}

// revokeAPIKey: POST /console/providers/{provider_id}/api-keys/{key_id}/revoke (DELETE
// .../api-keys/{key_id}): the key is refused from the commit on.
func (h *Handler) revokeAPIKey(w http.ResponseWriter, r *http.Request, v *View) error {
	id := r.PathValue("provider_id")
	if err := h.Ops.Providers.RevokeKey(r.Context(), v.Operator, id, r.PathValue("key_id")); err != nil {
		return err
	}
	h.redirect(w, r, Prefix+"providers/"+id+"/api-keys", "The API key is revoked: it is refused from now on.")
	return nil
}

// webhookSecretData is the rotation form's.
type webhookSecretData struct {
	Provider                *subprov.Provider
	Overlap                 string
	DefaultOverlap, Maximum int
}

// webhookSecretPage: GET /console/providers/{provider_id}/webhook-secret.
func (h *Handler) webhookSecretPage(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.showWebhookSecret(w, r, v, http.StatusOK)
}

func (h *Handler) showWebhookSecret(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	p, err := h.Ops.Providers.Get(r.Context(), v.Operator, r.PathValue("provider_id"))
	if err != nil {
		return err
	}
	d := webhookSecretData{Provider: p, Overlap: strconv.Itoa(providers.DefaultOverlapHours),
		DefaultOverlap: providers.DefaultOverlapHours, Maximum: providers.MaxOverlapHours}
	if v.Form != nil {
		d.Overlap = v.Form.Get("overlap_hours")
	}
	return h.renderOf(w, r, v, p, status, "webhook_secret", "Webhook secret of "+p.Name, d)
}

// rotateWebhookSecret: POST /console/providers/{provider_id}/webhook-secret (POST
// .../webhook-secret/rotate). The answer shows the new secret, this once, and until when the
// previous one is still accepted.
func (h *Handler) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, v *View) error {
	ctx := r.Context()
	id := r.PathValue("provider_id")
	problems := map[string]string{}
	hours := formInt(r.PostForm, "overlap_hours", problems)
	var res *providers.Rotated
	err := error(subprov.Invalid(problems))
	if len(problems) == 0 {
		res, err = h.Ops.Providers.RotateSecret(ctx, v.Operator, id, hours)
	}
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		return h.showWebhookSecret(w, r, v, status)
	}
	p, err := h.Ops.Providers.Get(ctx, v.Operator, id)
	if err != nil {
		return err
	}
	v.Flash = "The webhook secret is rotated: outgoing webhooks are signed with the new one from now on."
	return h.showSecret(w, r, v, secretData{Title: "Webhook secret rotated", What: "webhook secret", Secret: res.WebhookSecret,
		Provider: p, Note: "The previous secret is still accepted until " + res.PreviousExpires.In(p.Location()).Format("2 Jan 2006 15:04 MST") + ".",
		Next: Prefix + "providers/" + p.ID, NextLabel: "Back to the provider"})
}

// providersByID reads the providers ids name, in op's scope, for their names and time zones;
// an id it may not read is left out.
func (h *Handler) providersByID(ctx context.Context, op *subprov.Operator, ids []string) (map[string]*subprov.Provider, error) {
	out := map[string]*subprov.Provider{}
	for _, id := range ids {
		if _, seen := out[id]; seen || id == "" {
			continue
		}
		p, err := h.Ops.Providers.Get(ctx, op, id)
		if subprov.ErrorCode(err) == subprov.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[id] = p
	}
	return out, nil
}

// locOf is the time zone of provider id's dates: its own, UTC for a platform-wide object.
func locOf(ps map[string]*subprov.Provider, id string) *time.Location {
	if p := ps[id]; p != nil {
		return p.Location()
	}
	return time.UTC
}
