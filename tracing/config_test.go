package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov/tracing"
)

func TestConfigFromEnv(t *testing.T) {
	cases := []struct {
		rule     string
		env      map[string]string
		on       bool
		endpoint string
		service  string
		err      string
	}{
		{rule: "off when no variable is set", env: nil},
		{rule: "off with only a service name", env: map[string]string{"OTEL_SERVICE_NAME": "x"}},
		{rule: "a base endpoint turns it on, traces at /v1/traces",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/"},
			on:  true, endpoint: "http://127.0.0.1:4318/v1/traces", service: "subprov"},
		{rule: "a traces endpoint is used as it is and wins over the base",
			env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector:4318/custom", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318"},
			on:  true, endpoint: "https://collector:4318/custom", service: "subprov"},
		{rule: "otlp exporter alone sends to the local default",
			env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"},
			on:  true, endpoint: "http://localhost:4318/v1/traces", service: "subprov"},
		{rule: "exporter none turns it off whatever the endpoint",
			env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{rule: "the SDK disabled turns it off whatever the endpoint",
			env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{rule: "OTEL_SERVICE_NAME names the service",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SERVICE_NAME": "subprov-eu"},
			on:  true, endpoint: "http://127.0.0.1:4318/v1/traces", service: "subprov-eu"},
		{rule: "service.name in the resource attributes names it when OTEL_SERVICE_NAME does not",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod,service.name=sp%20a"},
			on:  true, endpoint: "http://127.0.0.1:4318/v1/traces", service: "sp a"},
		{rule: "an unknown exporter is refused",
			env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: "OTEL_TRACES_EXPORTER"},
		{rule: "the grpc protocol is refused",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: "http/protobuf only"},
		{rule: "an endpoint that is no http URL is refused",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318"}, err: "want an http:// or https:// URL"},
		{rule: "a malformed resource attribute is refused",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_RESOURCE_ATTRIBUTES": "novalue"}, err: "OTEL_RESOURCE_ATTRIBUTES"},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			c, err := tracing.ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.On != tc.on || (tc.on && c.Endpoint != tc.endpoint) {
				t.Fatalf("on %v endpoint %q, want %v %q", c.On, c.Endpoint, tc.on, tc.endpoint)
			}
			if !tc.on {
				return
			}
			service := ""
			for _, kv := range c.Resource {
				if kv.Key == "service.name" {
					service = kv.Value.AsString()
				}
			}
			if service != tc.service {
				t.Fatalf("service.name %q, want %q", service, tc.service)
			}
		})
	}
}

func TestWhereHidesCredentials(t *testing.T) {
	c := tracing.Config{Endpoint: "https://user:secret@collector:4318/v1/traces?token=abc"}
	if got := c.Where(); strings.Contains(got, "secret") || strings.Contains(got, "abc") || got != "https://collector:4318/v1/traces" {
		t.Fatalf("Where() = %q", got)
	}
}

// TestSpansArePostedOverOTLP: with tracing on, an ended span reaches the endpoint as an
// OTLP/HTTP protobuf export, at the latest when the provider shuts down.
func TestSpansArePostedOverOTLP(t *testing.T) {
	var mu sync.Mutex
	var got []string // "path content-type bytes"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(body))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	c, err := tracing.ConfigFromEnv(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tp, err := tracing.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer tracing.Use(tp)()
	_, span := tracing.Start(tracing.WithRequestID(ctx, "req-otlp-1"), "sql.tx", trace.SpanKindClient)
	tracing.End(span, nil)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tp.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("%d exports, want 1", len(got))
	}
	// The protobuf holds the strings as they are: the span's name, its request id, the service.
	for _, want := range []string{"/v1/traces application/x-protobuf ", "sql.tx", "req-otlp-1", "subprov"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("export %q lacks %q", got[0][:min(len(got[0]), 80)], want)
		}
	}
}
