package subprov

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ProviderFields are the fields of a provider an operator chooses, as a fixture row and the
// operations surface give them (a nil URL or booking window is "not given"). Their rules are
// one set, used by both: ProviderFields.Problems.
type ProviderFields struct {
	Name              string
	TimeZone          string
	Currency          string
	TaxRateBP         int
	PaymentProcessor  string // "" for the default
	WebhookURL        *string
	CheckoutURL       *string
	BookingWindowDays *int
	DefaultLanguage   *string       // nil for "not given"
	OutageCredit      *OutageCredit // nil for none
}

// Languages are the languages subprov writes to subscribers in (package locale writes each);
// a provider's default_language is one of them.
var Languages = []string{"en", "fr"}

// FieldProblem is one problem with one field, named by its JSON key.
type FieldProblem struct {
	Field   string
	Problem string
}

// PaymentProcessors are the processor connections a provider may name.
var PaymentProcessors = []string{"builtin", "stripe", "none"}

// Problems lists what is wrong with the fields, in the fields' order. A URL here only has to
// be an absolute http(s) URL: a fixture may point a provider's webhooks at a receiver on a
// private network; the operations surface holds a production webhook URL to the stricter rule
// of the webhook receivers (events.CheckWebhookTarget) on top of this.
func (f ProviderFields) Problems() []FieldProblem {
	var ps []FieldProblem
	add := func(field, problem string) { ps = append(ps, FieldProblem{field, problem}) }
	if strings.TrimSpace(f.Name) == "" {
		add("name", "required")
	}
	if _, err := time.LoadLocation(f.TimeZone); err != nil || f.TimeZone == "" {
		add("time_zone", "want an IANA time zone like America/Toronto")
	}
	if len(f.Currency) != 3 || strings.ToUpper(f.Currency) != f.Currency {
		add("currency", "want a three-letter ISO code like CAD")
	}
	if f.TaxRateBP < 0 || f.TaxRateBP > 10000 {
		add("tax_rate_bp", "want 0 to 10000 basis points")
	}
	if f.PaymentProcessor != "" && !slices.Contains(PaymentProcessors, f.PaymentProcessor) {
		add("payment_processor", "want one of "+strings.Join(PaymentProcessors, ", "))
	}
	if !absoluteHTTPURL(f.WebhookURL) {
		add("webhook_url", "want an absolute http(s) URL")
	}
	if !absoluteHTTPURL(f.CheckoutURL) {
		add("checkout_url", "want an absolute http(s) URL")
	}
	if f.BookingWindowDays != nil && (*f.BookingWindowDays < 0 || *f.BookingWindowDays > 365) {
		add("booking_window_days", "want 0 to 365")
	}
	if f.DefaultLanguage != nil && !slices.Contains(Languages, *f.DefaultLanguage) {
		add("default_language", "want one of "+strings.Join(Languages, ", "))
	}
	if f.OutageCredit != nil {
		if problem := f.OutageCredit.Problem(); problem != "" {
			add("outage_credit.min_hours", problem)
		}
	}
	return ps
}

// absoluteHTTPURL accepts an absent or empty URL, or any absolute http or https one.
func absoluteHTTPURL(s *string) bool {
	if s == nil || *s == "" {
		return true
	}
	u, err := url.Parse(*s)
	return err == nil && u.Host != "" && (u.Scheme == "https" || u.Scheme == "http")
}

// FeatureProblem says what is wrong with an API key's feature, or "" when it is one the service
// knows (FeatureAgentAPI is the only one).
func FeatureProblem(feature string) string {
	if feature != FeatureAgentAPI {
		return "unknown feature " + strconv.Quote(feature) + "; want " + FeatureAgentAPI
	}
	return ""
}
