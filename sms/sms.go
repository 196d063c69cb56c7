// Package sms sends text messages through a Twilio-compatible REST API: POST
// /2010-04-01/Accounts/{AccountSid}/Messages.json with HTTP basic auth (account SID and auth
// token) and a form body of To, From and Body. The agent's one-time codes use it when the
// gateway is configured (SUBPROV_SMS_* variables).
package sms

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrUnavailable wraps every failure to hand a message to the gateway.
var ErrUnavailable = errors.New("sms gateway unavailable")

// Sender sends one text message.
type Sender interface {
	Send(ctx context.Context, to, body string) error
}

// Twilio is a client of a Twilio-compatible Messages API.
type Twilio struct {
	BaseURL    string // e.g. https://api.twilio.com (no trailing slash)
	AccountSID string
	AuthToken  string
	From       string // sender number or messaging service id
	HTTP       *http.Client
}

// NewTwilio returns a client; nil when any of the credentials is missing (SMS unconfigured).
func NewTwilio(baseURL, accountSID, authToken, from string) *Twilio {
	if accountSID == "" || authToken == "" || from == "" {
		return nil
	}
	if baseURL == "" {
		baseURL = "https://api.twilio.com"
	}
	return &Twilio{BaseURL: strings.TrimRight(baseURL, "/"), AccountSID: accountSID, AuthToken: authToken, From: from,
		HTTP: &http.Client{Timeout: 10 * time.Second}}
}

// Send posts one message; anything but a 2xx answer is an ErrUnavailable error that names
// the gateway's status (never the message body).
func (t *Twilio) Send(ctx context.Context, to, body string) error {
	form := url.Values{"To": {to}, "From": {t.From}, "Body": {body}}
	endpoint := t.BaseURL + "/2010-04-01/Accounts/" + url.PathEscape(t.AccountSID) + "/Messages.json"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.SetBasicAuth(t.AccountSID, t.AuthToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	res, err := t.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("%w: gateway answered %d", ErrUnavailable, res.StatusCode)
	}
	return nil
}
