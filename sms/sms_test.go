package sms_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/subprov/subprov/sms"
)

// gateway is a minimal Twilio-compatible Messages API.
func gateway(t *testing.T, got *[]map[string]string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != "AC123" || pass != "secret" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":20003,"message":"Authenticate"}`))
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/2010-04-01/Accounts/AC123/Messages.json" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		if r.PostForm.Get("To") == "+15005550001" { // Twilio's magic "invalid number"
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"code":21211,"message":"Invalid 'To' Phone Number"}`))
			return
		}
		*got = append(*got, map[string]string{"To": r.PostForm.Get("To"), "From": r.PostForm.Get("From"), "Body": r.PostForm.Get("Body")})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"sid":"SM1","status":"queued"}`))
	}))
}

func TestTwilioSend(t *testing.T) {
	var got []map[string]string
	srv := gateway(t, &got)
	defer srv.Close()
	ctx := context.Background()

	c := sms.NewTwilio(srv.URL, "AC123", "secret", "+15005550006")
	if err := c.Send(ctx, "+15145550142", "Your code is 123456"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0]["To"] != "+15145550142" || got[0]["From"] != "+15005550006" || got[0]["Body"] != "Your code is 123456" {
		t.Fatalf("gateway got %v", got)
	}
	for name, tc := range map[string]struct {
		client *sms.Twilio
		to     string
	}{
		"rejected number": {c, "+15005550001"},
		"wrong token":     {sms.NewTwilio(srv.URL, "AC123", "wrong", "+15005550006"), "+15145550142"},
		"unreachable":     {sms.NewTwilio("http://127.0.0.1:1", "AC123", "secret", "+15005550006"), "+15145550142"},
	} {
		if err := tc.client.Send(ctx, tc.to, "x"); !errors.Is(err, sms.ErrUnavailable) {
			t.Errorf("%s: err = %v, want ErrUnavailable", name, err)
		}
	}
	if sms.NewTwilio(srv.URL, "AC123", "", "+1") != nil {
		t.Error("a client without an auth token must be nil (unconfigured)")
	}
}
