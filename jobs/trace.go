package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov/tracing"
)

// traceJobs carries traces across the queue (tracing is on only): a job is inserted with the
// span that enqueued it, and the request id, in its metadata (tracing.Origin), and each run of
// it is a span in that trace, whichever process works it. With tracing off it adds nothing.
type traceJobs struct{ river.MiddlewareDefaults }

var (
	_ rivertype.JobInsertMiddleware = (*traceJobs)(nil)
	_ rivertype.WorkerMiddleware    = (*traceJobs)(nil)
)

// InsertMany records each job's origin in its metadata.
func (*traceJobs) InsertMany(ctx context.Context, many []*rivertype.JobInsertParams, inner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	if o := tracing.OriginOf(ctx); !o.IsZero() {
		for _, p := range many {
			md, err := tracing.AddOrigin(p.Metadata, o)
			if err != nil {
				return nil, fmt.Errorf("job %s: trace metadata: %w", p.Kind, err)
			}
			p.Metadata = md
		}
	}
	return inner(ctx)
}

// Work runs the job in a span named "job KIND", a child of the span that enqueued it.
func (*traceJobs) Work(ctx context.Context, j *rivertype.JobRow, inner func(context.Context) error) error {
	if !tracing.Enabled() {
		return inner(ctx)
	}
	ctx = tracing.OriginIn(j.Metadata).Context(ctx)
	ctx, span := tracing.Start(ctx, "job "+j.Kind, trace.SpanKindConsumer,
		attribute.String("subprov.job.kind", j.Kind), attribute.Int64("subprov.job.id", j.ID),
		attribute.Int("subprov.job.attempt", j.Attempt))
	err := inner(ctx)
	var snooze *rivertype.JobSnoozeError
	if errors.As(err, &snooze) {
		// Waiting for something (a busy port) is no failure.
		span.SetAttributes(attribute.String("subprov.job.snoozed", snooze.Duration.String()))
		tracing.End(span, nil)
		return err
	}
	tracing.End(span, err)
	return err
}
