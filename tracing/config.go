package tracing

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// DefaultServiceName is the service.name of subprov's spans unless OTEL_SERVICE_NAME (or
// service.name in OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const DefaultServiceName = "subprov"

// defaultEndpoint is where OTEL_TRACES_EXPORTER=otlp sends spans when no endpoint is set:
// OTLP/HTTP's standard port on this host.
const defaultEndpoint = "http://localhost:4318/v1/traces"

// Config is tracing as the standard OTEL_* variables configure it.
type Config struct {
	// On: spans are exported. Off, the process keeps OpenTelemetry's no-op provider.
	On bool
	// Endpoint is the URL spans are posted to (OTLP/HTTP, protobuf).
	Endpoint string
	// Resource are the attributes of the process on every span: service.name and those of
	// OTEL_RESOURCE_ATTRIBUTES.
	Resource []attribute.KeyValue
}

// ConfigFromEnv reads the OTEL_* variables through getenv. Tracing is on when
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set or
// OTEL_TRACES_EXPORTER is otlp, and off when none is, when OTEL_TRACES_EXPORTER is none, or
// when OTEL_SDK_DISABLED is true.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	var c Config
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return c, nil
	}
	exporter := strings.ToLower(get("OTEL_TRACES_EXPORTER"))
	switch exporter {
	case "", "otlp":
	case "none":
		return c, nil
	default:
		return c, fmt.Errorf("OTEL_TRACES_EXPORTER %q: want otlp or none", exporter)
	}
	c.Endpoint = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if c.Endpoint == "" {
		if base := get("OTEL_EXPORTER_OTLP_ENDPOINT"); base != "" {
			c.Endpoint = strings.TrimRight(base, "/") + "/v1/traces"
		}
	}
	c.On = c.Endpoint != "" || exporter == "otlp"
	if !c.On {
		return c, nil
	}
	if c.Endpoint == "" {
		c.Endpoint = defaultEndpoint
	}
	if u, err := url.Parse(c.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT %q: want an http:// or https:// URL", redact(c.Endpoint))
	}
	protocol := get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if protocol != "" && protocol != "http/protobuf" {
		return c, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: subprov exports over http/protobuf only", protocol)
	}
	attrs, err := parseResourceAttributes(get("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return c, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	name := get("OTEL_SERVICE_NAME")
	if name == "" {
		name = attrs["service.name"]
	}
	if name == "" {
		name = DefaultServiceName
	}
	attrs["service.name"] = name
	for k, v := range attrs {
		c.Resource = append(c.Resource, attribute.String(k, v))
	}
	return c, nil
}

// parseResourceAttributes reads key=value pairs separated by commas, values percent-encoded.
func parseResourceAttributes(s string) (map[string]string, error) {
	out := map[string]string{}
	if s == "" {
		return out, nil
	}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want key=value", pair)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", pair, err)
		}
		out[k] = dv
	}
	return out, nil
}

// Where is the endpoint as a log line may show it: without credentials or query.
func (c Config) Where() string { return redact(c.Endpoint) }

func redact(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// Open builds the tracer provider c describes: spans batched and posted over OTLP/HTTP to
// c.Endpoint. The exporter reads the variables that tune it (OTEL_EXPORTER_OTLP_HEADERS,
// _TIMEOUT, _COMPRESSION, _CERTIFICATE and their TRACES_ forms) and the SDK those of the
// sampler (OTEL_TRACES_SAMPLER, _ARG) and batching (OTEL_BSP_*) from the environment itself.
// Nothing is sent until a span ends; Shutdown sends what is left.
func Open(ctx context.Context, c Config) (*sdktrace.TracerProvider, error) {
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(c.Endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(c.Resource...))
	if err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
