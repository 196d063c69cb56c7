// Package app wires subprov together: it opens the store, applies migrations, builds every
// capability and adapter from the configuration, and runs the HTTP server and job workers
// with a graceful shutdown. cmd/subprov and the end-to-end tests both start the service here.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/agent"
	"github.com/subprov/subprov/audit"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/checkout"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/counters"
	"github.com/subprov/subprov/cpe"
	"github.com/subprov/subprov/events"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/httpapi"
	"github.com/subprov/subprov/httpapi/ops"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/install"
	"github.com/subprov/subprov/inventory"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/mail"
	"github.com/subprov/subprov/metrics"
	"github.com/subprov/subprov/monitoring"
	"github.com/subprov/subprov/operators"
	"github.com/subprov/subprov/outbox"
	"github.com/subprov/subprov/overview"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/portal"
	"github.com/subprov/subprov/preferences"
	"github.com/subprov/subprov/privacy"
	"github.com/subprov/subprov/providers"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/ratelimit"
	"github.com/subprov/subprov/sandbox"
	"github.com/subprov/subprov/scheduler"
	"github.com/subprov/subprov/serviceability"
	"github.com/subprov/subprov/sms"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/subscribers"
	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/linuxbridge"
	"github.com/subprov/subprov/switches/netconf"
	"github.com/subprov/subprov/tickets"
	"github.com/subprov/subprov/tracing"
	"github.com/subprov/subprov/webhookevents"
)

// App is one running subprov process.
type App struct {
	Config   config.Config
	Log      *slog.Logger
	Store    *store.Store
	Clock    subprov.Clock
	DevClock *clock.Adjustable
	Faults   *faults.Switches
	Jobs     *jobs.Client
	Outbox   *outbox.Outbox
	Auth     *auth.Service
	Handler  http.Handler

	Events       *events.Recorder
	Webhooks     *events.Deliverer
	Provisioning *provisioning.Service
	Counters     *counters.Service
	Billing      *billing.Service
	Privacy      *privacy.Service
	Install      *install.Service
	Agent        *agent.Service
	// The capabilities only the HTTP surfaces call, kept here so that a capability's own
	// tests (internal/servicetest) call the very services the server is given.
	Portal         *portal.Service
	Preferences    *preferences.Service
	Checkout       *checkout.Service
	Sandbox        *sandbox.Service
	Serviceability *serviceability.Service
	Providers      *providers.Service
	// Switches sends each port's switch operations to its own switch's driver, with a
	// concurrency limit and a circuit breaker per switch.
	Switches *switches.Router
	// Sealer seals and opens the secrets kept at rest (switch passwords, second-factor keys).
	Sealer *identity.Sealer
	// KeyUsage keeps the API keys' last uses in memory and writes them in batches (Serve).
	KeyUsage *providers.Usage
	redis    *redis.Client
	// leading is 1 while this process runs the clock-driven sweeps (scheduler.Election).
	leading prometheus.Gauge
	// traces is the tracer provider exporting this process's spans; nil when tracing is off.
	traces *sdktrace.TracerProvider
}

// Setting keys the app keeps in the database.
const (
	settingSecret      = "secret"
	settingClockOffset = "dev_clock_offset_ns"
	settingFaults      = "dev_faults"
)

// Secret is the service secret: SUBPROV_SECRET, or the one generated and stored in the
// database at the first start.
func Secret(ctx context.Context, cfg config.Config, st *store.Store) (string, error) {
	if cfg.Secret != "" {
		return cfg.Secret, nil
	}
	return st.SettingOrInit(ctx, settingSecret, identity.NewToken(32))
}

// Sealer is the sealer of the secrets kept at rest: it seals under the service secret and
// opens what it or SUBPROV_SECRET_PREVIOUS sealed.
func Sealer(ctx context.Context, cfg config.Config, st *store.Store) (*identity.Sealer, error) {
	secret, err := Secret(ctx, cfg, st)
	if err != nil {
		return nil, err
	}
	return sealerOf(cfg, secret)
}

func sealerOf(cfg config.Config, secret string) (*identity.Sealer, error) {
	var previous []string
	if cfg.PreviousSecret != "" {
		previous = append(previous, cfg.PreviousSecret)
	}
	return identity.NewSealer(secret, previous...)
}

// New opens the database, migrates it, and builds the service. Close releases it.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	if cfg.PasswordCost.BelowDefault() && !cfg.Dev {
		// A cheap cost is for tests; a production process must never make hashes with it.
		return nil, errors.New("a password cost below the production cost needs dev mode")
	}
	a := &App{Config: cfg, Log: log, Faults: &faults.Switches{}}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	a.Store = st
	if err := a.migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	a.Clock = clock.Real{}
	if cfg.Dev {
		a.DevClock = clock.NewAdjustable(0)
		a.Clock = a.DevClock
		a.restoreDevState(ctx)
	}
	secret, err := Secret(ctx, cfg, st)
	if err != nil {
		st.Close()
		return nil, err
	}
	transport, err := mail.NewTransport(cfg.SMTPURL, cfg.MailFrom, log)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("SMTP_URL: %w", err)
	}
	a.Outbox = &outbox.Outbox{Store: st, Transport: transport, Clock: a.Clock, Faults: a.Faults, Log: log,
		PersonLanguage: preferences.PersonLanguage}
	sealer, err := sealerOf(cfg, secret)
	if err != nil {
		st.Close()
		return nil, err
	}
	// Each port's switch is reached by the driver its inventory row names; SUBPROV_SWITCH_DRIVER
	// is the driver of a switch that names none. A driver written as a switches.Raw is added
	// here with one line: drivers.AddRaw(name, constructor).
	drivers := switches.BuiltIn(st, a.Faults, a.Clock)
	drivers.AddRaw("netconf", func(t switches.Target) (switches.Raw, error) {
		return netconf.New(netconf.Config{Address: t.Address, Username: t.Username, Password: t.Password, HostKey: t.HostKey, Model: t.Model})
	})
	drivers.AddRaw("linuxbridge", func(t switches.Target) (switches.Raw, error) {
		return linuxbridge.New(linuxbridge.Config{Name: t.Name, Address: t.Address, Username: t.Username, Password: t.Password, HostKey: t.HostKey})
	})
	if _, ok := drivers[cfg.SwitchDriver]; !ok {
		st.Close()
		return nil, fmt.Errorf("SUBPROV_SWITCH_DRIVER %q: unknown driver; want one of %v", cfg.SwitchDriver, drivers.Names())
	}
	// The registry /metrics serves: the business metrics the capabilities record, read at
	// scrape time from the shared database, and the process's own.
	reg := prometheus.NewRegistry()
	rec := metrics.New(reg)
	a.Switches = &switches.Router{Store: st, Sealer: sealer, Drivers: drivers, Default: cfg.SwitchDriver, Log: log, Metrics: rec}
	driver := a.Switches
	var stripe *payments.Stripe
	if cfg.StripeAPIKey != "" {
		stripe = payments.NewStripe(cfg.StripeAPIKey, cfg.StripeAPIBase)
	}
	a.leading = prometheus.NewGauge(prometheus.GaugeOpts{Name: "subprov_sweeps_leader",
		Help: "1 while this process runs the clock-driven sweeps (one process of those with workers at a time)."})
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), &jobCollector{st: st},
		&metrics.Collector{Source: st, Now: a.Clock.Now, Log: log}, a.leading)
	a.Events = &events.Recorder{Clock: a.Clock}
	a.Webhooks = &events.Deliverer{Store: st, Clock: a.Clock, Log: log, Metrics: rec}
	processor := payments.NewRouter(payments.NewFake(st, a.Faults, a.Clock), stripe)
	a.Billing = &billing.Service{Store: st, Clock: a.Clock, Processor: processor, Mail: a.Outbox, Log: log, Metrics: rec, PublicURL: cfg.PublicURL,
		Ledger: &billing.BuiltinLedger{Store: st, Faults: a.Faults}}
	a.Provisioning = &provisioning.Service{Store: st, Clock: a.Clock, Switch: driver, Events: a.Events, Log: log,
		Processor: processor, Tickets: &tickets.Builtin{Clock: a.Clock}, Billing: a.Billing, Metrics: rec, ReconcileEvery: cfg.ReconcileEvery}
	// Installations (issue 8): install jobs, booking invitations and the booking page.
	a.Counters = &counters.Service{Store: st, Clock: a.Clock, Switches: a.Switches, Every: cfg.CountersEvery, Default: cfg.SwitchDriver,
		Metrics: rec, Log: log}
	a.Install = &install.Service{Store: st, Clock: a.Clock, Mail: a.Outbox, Completer: a.Provisioning, PublicURL: cfg.PublicURL, Log: log}
	a.Provisioning.Installs = a.Install
	a.Billing.Lines = a.Provisioning
	a.Sealer = sealer
	a.KeyUsage = &providers.Usage{Store: st, Log: log}
	a.Auth = &auth.Service{Store: st, Clock: a.Clock, Signer: identity.NewSigner(secret), Mail: a.Outbox, PublicURL: cfg.PublicURL,
		PasswordCost: cfg.PasswordCost, KeyUsage: a.KeyUsage, Sealer: sealer, Log: log}
	a.Jobs, err = jobs.New(st, jobs.Handlers{
		DeliverMail:     a.Outbox.Deliver,
		PasswordReset:   a.Auth.SendPasswordReset,
		ProvisionPort:   a.Provisioning.ProvisionPort,
		DeprovisionPort: a.Provisioning.DeprovisionPort,
		ConvergePort:    a.Provisioning.ConvergePort,
		FlushWebhooks:   a.Webhooks.Flush,
		ChargeInvoice:   a.Billing.Charge,
		BillRun:         a.Billing.BillRun,
		SetLineService:  a.Billing.SetLineService,
		RefundCredits:   a.Billing.RefundCredits,
		SendSandbox:     a.Webhooks.SendSandbox,
		ReconcileSwitch: a.Provisioning.ReconcileSwitchJob,
		SampleSwitch:    a.Counters.SampleSwitchJob,
		OutageCredits:   a.Billing.CreditOutagesJob,
	}, jobs.Options{Work: cfg.Workers, Logger: log})
	if err != nil {
		st.Close()
		return nil, err
	}
	a.Outbox.Jobs, a.Events.Jobs, a.Webhooks.Jobs, a.Provisioning.Jobs, a.Billing.Jobs, a.Auth.Jobs = a.Jobs, a.Jobs, a.Jobs, a.Jobs, a.Jobs, a.Jobs
	a.Counters.Jobs = a.Jobs
	if cfg.Workers {
		// This process delivers webhooks itself as soon as an event commits (Serve starts the
		// dispatcher); a process without workers enqueues a webhooks.flush job instead.
		a.Events.Wake = a.Webhooks.Wake
	}

	var limiter ratelimit.Limiter = ratelimit.NewMemory()
	if cfg.RedisURL != "" {
		opt, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		a.redis = redis.NewClient(opt)
		limiter = ratelimit.NewRedis(a.redis, cfg.RedisPrefix)
	}
	if cfg.NoRateLimits {
		log.Warn("rate limits are off (SUBPROV_RATE_LIMITS=0): for load tests only")
		limiter = nil
	}
	a.Auth.Limiter, a.Auth.Log = limiter, log
	if cfg.SeedFile != "" {
		sum, err := fixture.LoadFileWith(ctx, st, cfg.SeedFile, a.Clock.Now(), fixture.Options{Sealer: sealer})
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("SUBPROV_SEED: %w", err)
		}
		log.Info("fixture loaded", "file", cfg.SeedFile, "summary", sum.String())
	}
	// Usage, outages and link state: a port on a sim switch reads the simulated source, every
	// other port the counters its switch's samplings recorded.
	monitor := monitoring.ByDriver{Store: st, Default: cfg.SwitchDriver, Recorded: monitoring.Recorded{Store: st}}
	if sim, ok := switches.AsSim(driver); ok {
		monitor.Sim = monitoring.Sim{Switch: sim}
	}
	a.Billing.Outages = monitor
	a.Portal = &portal.Service{Store: st, Clock: a.Clock, Ledger: a.Billing.Ledger, Mail: a.Outbox, Tokens: a.Auth, Monitoring: monitor, Processor: processor, Log: log,
		Provisioning: a.Provisioning, Billing: a.Billing, Desk: &tickets.Builtin{Clock: a.Clock}}
	a.Preferences = &preferences.Service{Store: st, Clock: a.Clock}
	a.Agent = a.newAgent(a.Portal)
	a.Privacy = &privacy.Service{Store: st, Clock: a.Clock, Desk: &tickets.Builtin{Clock: a.Clock}, Links: a.Auth}
	a.Checkout = &checkout.Service{Store: st, Clock: a.Clock, Auth: a.Auth, Provisioning: a.Provisioning, Events: a.Events,
		Webhooks: a.Webhooks, PublicURL: cfg.PublicURL, Log: log}
	a.Sandbox = &sandbox.Service{Store: st, Recorder: a.Events, Webhooks: a.Webhooks}
	a.Serviceability = &serviceability.Service{Store: st, Clock: a.Clock}
	a.Providers = &providers.Service{Store: st, Clock: a.Clock, Dev: cfg.Dev}
	// The switches' breakers are the process's own: one without workers runs no switch
	// operation and has none to show.
	breakers := a.Switches
	if !cfg.Workers {
		breakers = nil
	}
	a.Handler = httpapi.NewServer(httpapi.Deps{
		Log: log, Store: st, Clock: a.Clock, DevClock: a.DevClock, Faults: a.Faults, Auth: a.Auth, Limiter: limiter,
		Serviceability: a.Serviceability,
		Provisioning:   a.Provisioning,
		Billing:        a.Billing,
		Install:        a.Install,
		Portal:         a.Portal,
		Preferences:    a.Preferences,
		Agent:          a.Agent,
		Checkout:       a.Checkout,
		Sandbox:        a.Sandbox,
		Ops: ops.Handler{
			Audit:       &audit.Service{Store: st},
			Providers:   a.Providers,
			Events:      &webhookevents.Service{Store: st, Webhooks: a.Webhooks, Sandbox: a.Sandbox},
			Billing:     a.Billing,
			Tickets:     &tickets.Service{Store: st, Clock: a.Clock},
			Privacy:     a.Privacy,
			Operators:   &operators.Service{Store: st, Auth: a.Auth},
			Inventory:   &inventory.Service{Store: st, Clock: a.Clock, Sealer: sealer, Router: breakers},
			Subscribers: &subscribers.Service{Store: st, Clock: a.Clock, Provisioning: a.Provisioning},
			Summary:     &overview.Service{Store: st, Clock: a.Clock},
		},
		PublicURL: cfg.PublicURL,
		Registry:  reg, Ready: a.Ready,
		// The dev clock and faults are saved only so that they survive a restart: the change
		// itself has taken effect, so a failed save is logged rather than answered as an error.
		TrustedProxies: cfg.TrustedProxies,
		OnClockChange: func(ctx context.Context) {
			if err := st.PutSetting(ctx, settingClockOffset, strconv.FormatInt(int64(a.DevClock.Offset()), 10)); err != nil {
				log.Warn("save the dev clock", "err", err)
			}
		},
		OnFaultsChange: func(ctx context.Context) {
			b, err := json.Marshal(a.Faults.All())
			if err == nil {
				err = st.PutSetting(ctx, settingFaults, string(b))
			}
			if err != nil {
				log.Warn("save the fault switches", "err", err)
			}
		},
	})
	if err := a.startTracing(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return a, nil
}

// startTracing installs the OTLP exporter the OTEL_* variables configure, and logs whether
// tracing is on and where spans go. Off, the process keeps OpenTelemetry's no-op provider.
func (a *App) startTracing(ctx context.Context) error {
	c := a.Config.Tracing
	if !c.On {
		a.Log.Info("tracing off")
		return nil
	}
	tp, err := tracing.Open(ctx, c)
	if err != nil {
		return err
	}
	a.traces = tp
	tracing.Use(tp)
	a.Log.Info("tracing on", "exporter", "otlp", "protocol", "http/protobuf", "endpoint", c.Where())
	return nil
}

func (a *App) migrate(ctx context.Context) error {
	applied, err := a.Store.Migrate(ctx)
	if err != nil {
		return err
	}
	for _, m := range applied {
		a.Log.Info("migration applied", "name", m)
	}
	state, err := a.Store.SchemaState(ctx)
	if err != nil {
		return err
	}
	if latest := store.LatestVersion(); state.Version > latest {
		// A newer release migrated the database (a rolling upgrade, or a rollback onto the
		// schema it left) and its migrations keep this binary working (Migrate checked).
		a.Log.Info("database schema is newer than this subprov and compatible with it",
			"schema_version", state.Version, "binary_version", latest, "compatible_with", state.CompatibleWith)
	}
	if err := jobs.Migrate(ctx, a.Store); err != nil {
		return err
	}
	if err := a.Store.BackfillSearchTerms(ctx); err != nil {
		return err
	}
	n, err := a.Store.ReindexAfterOlderRelease(ctx)
	if n > 0 {
		a.Log.Info("search index: subscribers an older release changed indexed again", "subscribers", n)
	}
	return err
}

// newAgent builds the support-agent service with its SMS gateway and CPE server when
// configured (a nil interface, not a typed nil, when not); in dev mode without a gateway, SMS
// codes go to the outbox (sms.DevOutbox).
func (a *App) newAgent(p *portal.Service) *agent.Service {
	svc := &agent.Service{Store: a.Store, Clock: a.Clock, Auth: a.Auth, Mail: a.Outbox, Faults: a.Faults, Provisioning: a.Provisioning,
		Billing: a.Billing, Portal: p, Monitoring: p.Monitoring, Desk: &tickets.Builtin{Clock: a.Clock}, Log: a.Log}
	if t := sms.NewTwilio(a.Config.SMSAPIURL, a.Config.SMSAccountSID, a.Config.SMSAuthToken, a.Config.SMSFrom); t != nil {
		svc.SMS = t
	} else if a.Config.Dev {
		svc.SMS = &sms.DevOutbox{Store: a.Store, Clock: a.Clock, Log: a.Log}
	}
	if g := cpe.NewGenieACS(a.Config.CPEACSURL); g != nil {
		svc.CPE = g
	}
	return svc
}

// Migrate applies the schema and job-queue migrations and returns (subprov migrate).
func Migrate(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	a := &App{Store: st, Log: log}
	return a.migrate(ctx)
}

// Plan is what `subprov migrate` would do on a database: its schema as it is, and the
// migrations it lacks.
type Plan struct {
	State    store.SchemaState
	Schema   []store.Migration
	JobQueue []string // River's own migrations, "NNN name"
}

// PlanMigrations reads what migrating the database would apply, and applies nothing (subprov
// migrate --dry-run). A schema this binary cannot work on is an *store.IncompatibleSchemaError,
// as Migrate refuses it.
func PlanMigrations(ctx context.Context, cfg config.Config) (Plan, error) {
	var p Plan
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return p, err
	}
	defer st.Close()
	if p.State, err = st.SchemaState(ctx); err != nil {
		return p, err
	}
	if err := p.State.Check(store.LatestVersion()); err != nil {
		return p, err
	}
	if p.Schema, err = st.PendingMigrations(ctx); err != nil {
		return p, err
	}
	p.JobQueue, err = jobs.Pending(ctx, st)
	return p, err
}

// The server's request time limits: a client that trickles its headers or its body is cut
// off (slowloris). Variables only so app's tests can shorten them (export_test.go).
var (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
)

// restoreDevState brings back the dev clock and faults a previous run set, so a demo that
// advanced the clock keeps its time across a restart.
// A saved state that cannot be read is logged and left out: the service starts at the real
// time with no faults, as on a first run.
func (a *App) restoreDevState(ctx context.Context) {
	if v, ok, err := a.Store.Setting(ctx, settingClockOffset); err != nil {
		a.Log.Warn("restore the dev clock", "err", err)
	} else if ok {
		if ns, err := strconv.ParseInt(v, 10, 64); err != nil {
			a.Log.Warn("restore the dev clock", "value", v, "err", err)
		} else {
			a.DevClock.Advance(time.Duration(ns))
		}
	}
	if v, ok, err := a.Store.Setting(ctx, settingFaults); err != nil {
		a.Log.Warn("restore the fault switches", "err", err)
	} else if ok {
		var m map[string]string
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			a.Log.Warn("restore the fault switches", "err", err)
		} else if problems := faults.Validate(m); len(problems) > 0 {
			a.Log.Warn("restore the fault switches", "problems", problems)
		} else {
			a.Faults.Apply(m)
		}
	}
}

// Ready reports whether the database answers and carries every migration this binary has,
// the job queue's included, and no newer migration that this binary does not work with (a
// newer release migrating during a rolling upgrade).
func (a *App) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := a.Store.Ping(ctx); err != nil {
		return err
	}
	state, err := a.Store.SchemaState(ctx)
	if err != nil {
		return err
	}
	if state.Version < store.LatestVersion() {
		return fmt.Errorf("schema version %d, want %d", state.Version, store.LatestVersion())
	}
	if err := state.Check(store.LatestVersion()); err != nil {
		return err
	}
	return jobs.Ready(ctx, a.Store)
}

// Serve runs the HTTP server on ln (nil: no HTTP, as `subprov worker`) and the job workers
// until ctx is done, then shuts down gracefully: the listener closes, in-flight requests and
// running jobs finish (up to 30 s), and the database is closed.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	if a.Config.PprofAddr != "" && ln != nil {
		stop, err := servePprof(a.Config.PprofAddr, a.Log)
		if err != nil {
			return errors.Join(err, a.Close())
		}
		defer stop()
	}
	// Workers run on a context shutdown does not cancel: cancelling River's start context is
	// its abrupt stop, which would cut running jobs short. Jobs.Stop below drains them instead.
	if err := a.Jobs.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	// Every process, with workers or not, writes the last uses of the API keys it saw.
	usageDone := make(chan struct{})
	go func() {
		defer close(usageDone)
		a.KeyUsage.Run(ctx, providers.UsageFlushEvery)
	}()
	sweepsDone := make(chan struct{})
	if a.Config.Workers {
		// Like the workers, the webhook dispatcher drains at shutdown (Stop) rather than
		// being cut short when ctx ends.
		a.Webhooks.Start(context.WithoutCancel(ctx))
		var kick <-chan struct{}
		if a.DevClock != nil {
			kick = a.DevClock.Changed()
		}
		go func() {
			defer close(sweepsDone)
			scheduler.Run(ctx, time.Second, kick, a.Log, a.election(), a.Sweeps()...)
		}()
	} else {
		close(sweepsDone)
	}
	var srv *http.Server
	errc := make(chan error, 1)
	if ln != nil {
		srv = &http.Server{
			Handler:           a.Handler,
			ReadHeaderTimeout: readHeaderTimeout,
			ReadTimeout:       readTimeout,
			WriteTimeout:      2 * time.Minute, // reactivation waits for the port (about a minute)
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(a.Log.Handler(), slog.LevelWarn),
		}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	a.Log.Info("shutting down: finishing in-flight requests and jobs")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if srv != nil {
		if err := srv.Shutdown(sctx); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("http shutdown: %w", err))
		}
	}
	<-sweepsDone
	<-usageDone
	if err := a.KeyUsage.Flush(sctx); err != nil { // the uses of requests that finished since
		a.Log.Warn("api key usage: flush failed", "err", err)
	}
	if err := a.Jobs.Stop(sctx); err != nil {
		runErr = errors.Join(runErr, err)
	}
	a.Webhooks.Stop(sctx)
	return errors.Join(runErr, a.Close())
}

// Sweeps are the clock-driven discoveries of due work, and the removal of the console
// sessions that ended.
func (a *App) Sweeps() []scheduler.Sweep {
	return []scheduler.Sweep{
		{Name: "webhooks", Run: a.Webhooks.Sweep},
		{Name: "deprovision", Run: a.Provisioning.SweepDeprovisions},
		{Name: "bill runs", Run: a.Billing.SweepBillRuns},
		{Name: "charges", Run: a.Billing.SweepCharges},
		{Name: "booking invitations", Run: a.Install.SweepInvitations},
		{Name: "console sessions", Run: a.Auth.SweepConsoleSessions},
		{Name: "reconciliations", Run: a.Provisioning.SweepReconciliations},
		{Name: "counter samplings", Run: a.Counters.Sweep},
		{Name: "outage credits", Run: a.Billing.SweepOutageCredits},
	}
}

// election makes the process that holds the database's "sweeps" lock the one that sweeps.
func (a *App) election() scheduler.Election {
	return scheduler.Election{
		TryLock: func(ctx context.Context) (scheduler.Lock, error) {
			l, err := a.Store.TryLock(ctx, "sweeps")
			if l == nil {
				return nil, err // no typed nil in the interface
			}
			return l, nil
		},
		Leading: func(on bool) {
			if on {
				a.leading.Set(1)
			} else {
				a.leading.Set(0)
			}
		},
	}
}

// Close sends the spans not exported yet (for up to 5 s) and releases the switches', the
// database's and Redis's connections.
func (a *App) Close() error {
	var err error
	if a.Switches != nil {
		err = a.Switches.Close()
	}
	if a.traces != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if serr := a.traces.Shutdown(ctx); serr != nil {
			// Lost spans are no reason for the process to fail its exit.
			a.Log.Warn("tracing: spans not exported at shutdown", "err", serr)
		}
		cancel()
	}
	if a.redis != nil {
		err = errors.Join(err, a.redis.Close())
	}
	return errors.Join(err, a.Store.Close())
}

// jobCollector reports job counts by state at scrape time.
type jobCollector struct{ st *store.Store }

var jobsDesc = prometheus.NewDesc("subprov_jobs", "Jobs in the durable queue by state.", []string{"state"}, nil)

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc }

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := jobs.Counts(ctx, c.st)
	if err != nil {
		return
	}
	for _, state := range []string{"available", "scheduled", "running", "retryable", "completed", "cancelled", "discarded", "pending"} {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(counts[state]), state)
	}
}
