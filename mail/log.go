package mail

import (
	"context"
	"fmt"
	"log/slog"
)

// Log is the transport used when SMTP_URL is unset (development, tests): it
// writes one structured line per message instead of delivering it. The
// caller keeps the full message in its outbox, so the line only has to say
// that a message went out: recipient (masked), subject and id. The body and
// the links are never logged, since they hold reset tokens and codes and logs
// are kept and shipped far more widely than the outbox.
//
// The zero value logs to slog.Default().
type Log struct {
	Logger *slog.Logger
}

// Name implements Transport.
func (l *Log) Name() string { return "log" }

// Send implements Transport. Logging the same id twice is harmless, which is
// all the retry contract asks of it.
func (l *Log) Send(ctx context.Context, id string, m Message) error {
	// Honour cancellation like the SMTP transport does, so callers see the
	// same behaviour whichever transport is configured.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mail: log transport: %w", err)
	}
	logger := l.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.LogAttrs(ctx, slog.LevelInfo, "mail: message logged, not sent (SMTP_URL unset)",
		slog.String("to", maskAddress(m.To)),
		slog.String("subject", m.Subject),
		slog.String("id", id),
		slog.Int("links", len(m.Links)),
	)
	return nil
}
