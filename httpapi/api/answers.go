package api

import (
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
)

// SuccessMessage is the answer of a call that changes something and has nothing to show but a
// sentence for the person.
type SuccessMessage struct {
	Message string `json:"message"`
	Success bool   `json:"success"`
}

// Success is a successful call's answer with message.
func Success(message string) SuccessMessage { return SuccessMessage{Success: true, Message: message} }

// Optional is s as an answer shows a text that may be missing: null when empty.
func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Instant is t as an answer shows a moment that may be missing: RFC 3339 in UTC, or null.
func Instant(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// PlanRef names a plan version in an answer.
type PlanRef struct {
	PlanVersionID string        `json:"plan_version_id"`
	Name          string        `json:"name"`
	MonthlyPrice  subprov.Money `json:"monthly_price"`
	DownloadMbps  int           `json:"download_mbps"`
	UploadMbps    int           `json:"upload_mbps"`
}

// PlanRefOf is v as an answer names it.
func PlanRefOf(v *subprov.PlanVersion) PlanRef {
	return PlanRef{PlanVersionID: v.ID, Name: v.PlanName, MonthlyPrice: v.MonthlyPrice, DownloadMbps: v.DownloadMbps, UploadMbps: v.UploadMbps}
}

// Subscriber is the subscriber block of an order, as a partner's and a marketplace's orders
// send it.
type Subscriber struct {
	FirstName   string `json:"firstname"`
	LastName    string `json:"lastname"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phonenumber"`
	Company     string `json:"company"`
}

// Person is the order's subscriber; a missing block is an empty one.
func (s *Subscriber) Person() provisioning.Subscriber {
	if s == nil {
		return provisioning.Subscriber{}
	}
	return provisioning.Subscriber{FirstName: s.FirstName, LastName: s.LastName, Email: s.Email, PhoneNumber: s.PhoneNumber, Company: s.Company}
}

// WithSubscriber reports a missing subscriber block as one problem, "subscriber", in place of
// a "required" for each of its fields.
func WithSubscriber(p map[string]string, s *Subscriber) map[string]string {
	if s == nil {
		for f := range p {
			if strings.HasPrefix(f, "subscriber.") {
				delete(p, f)
			}
		}
		p["subscriber"] = "required"
	}
	return p
}
